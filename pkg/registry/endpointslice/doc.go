// Package endpointslice serves discovery.k8s.io/v1 endpointslices.
package endpointslice

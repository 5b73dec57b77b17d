// Package lease serves coordination.k8s.io/v1 leases.
package lease

// Package ingress serves networking.k8s.io/v1 ingresses and their status subresource.
package ingress

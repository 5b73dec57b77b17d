// Package rbac serves rbac.authorization.k8s.io/v1 roles, clusterroles, rolebindings and clusterrolebindings, as objects only (no escalation checks).
package rbac

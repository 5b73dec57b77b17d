// Package api holds the scheme of the served types: core/v1 and
// coordination.k8s.io/v1 registered as both their external and their internal
// version (the same Go types, so no conversions exist), their defaults and
// their field-label conversions.
package api

// Package apps stores apps/v1 Deployments, StatefulSets, DaemonSets and ReplicaSets, with their status and scale subresources.
package apps

// Package registrytest holds what the registry packages' tests share: an
// in-memory storage that drives a resource's generic stores without etcd.
package registrytest

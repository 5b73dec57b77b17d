// Package storage owns etcd for miniapiserver: the embedded etcd's lifecycle and
// the etcd-backed storage.Interface options every resource is stored through.
package storage

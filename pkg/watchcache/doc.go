// Package watchcache serves LIST and WATCH from a B-tree kept in sync with a
// storage.Interface.
//
// Work in progress. Cache (cache.go) keeps a copy-on-write B-tree (store.go)
// and an event history (history.go) in sync with its storage through its own
// LIST+WATCH, advancing its resourceVersion on etcd progress notifications.
// It is a storage.Interface that serves from the cache: watches from a
// resourceVersion or from now (serve.go, watcher.go), and unpaginated LISTs
// and GETs with a resourceVersion, including consistent LISTs (list.go).
// Everything else still goes to the storage. The server does not use it yet.
package watchcache

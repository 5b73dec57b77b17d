// Package watchcache serves LIST and WATCH from a B-tree kept in sync with a
// storage.Interface.
//
// Work in progress: Cache (cache.go) keeps a copy-on-write B-tree (store.go)
// and an event history (history.go) in sync with its storage through its own
// LIST+WATCH, and advances its resourceVersion on etcd progress notifications;
// watcher.go is the per-client watch. Serving requests from it (the
// storage.Interface decorator) is not built yet and nothing imports the package.
package watchcache

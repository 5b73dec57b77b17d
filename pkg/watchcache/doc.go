// Package watchcache serves LIST, GET and WATCH from a B-tree kept in sync
// with a storage.Interface (upstream's etcd3 store), as kube-apiserver's
// watch cache does.
//
// Cache (cache.go) keeps a copy-on-write B-tree (store.go) and an event
// history (history.go) in sync with its storage through its own LIST+WATCH,
// advancing its resourceVersion on etcd progress notifications, resuming its
// watch from the last revision it saw when it breaks. It is a
// storage.Interface: writes pass through; LISTs and GETs are served as
// upstream's delegator decides (list.go); watches, including watch-lists
// with their initial state from a B-tree clone, are served to per-client
// watchers with bounded buffers (serve.go, watcher.go), whose events are
// wrapped so the HTTP layer serializes each once (caching.go). Metrics use
// upstream's names (metrics.go).
package watchcache

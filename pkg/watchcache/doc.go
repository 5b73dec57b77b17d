// Package watchcache serves LIST and WATCH from a B-tree kept in sync with a
// storage.Interface.
//
// Work in progress: this package holds the cache's state (store.go, a
// copy-on-write B-tree) and its event history (history.go); the decorator
// that serves requests from them is not built yet and nothing imports it.
package watchcache

// Package watchcache serves LIST and WATCH from a B-tree kept in sync with a
// storage.Interface.
//
// Work in progress: this package holds the cache's state (store.go, a
// copy-on-write B-tree), its event history (history.go) and the per-client
// watcher (watcher.go); the decorator that feeds and serves them is not built
// yet and nothing imports the package.
package watchcache

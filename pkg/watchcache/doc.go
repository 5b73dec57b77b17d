/*
Copyright The miniapiserver Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

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

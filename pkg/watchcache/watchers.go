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

package watchcache

import "k8s.io/apiserver/pkg/storage"

// watcherSet is the cache's registered watchers, indexed by what they
// watch, as upstream's cacher indexes them by namespace and by trigger
// value: dispatching an event looks only at the watchers it can concern,
// so churn in one namespace, or on one node's pods, costs the watchers of
// another nothing.
//
// Each watcher sits in one bucket, its scope: the watch's prepared key (a
// directory ending in "/" for a recursive watch, an object's key for one
// object) and, when its field selector requires one value of an indexed
// field (spec.nodeName for pods), that field and value. An event's
// candidates are the buckets of its key's directories and of the key
// itself, each without a field and with each indexed field's value in the
// object and in its previous object. Guarded by the cache's lock.
type watcherSet struct {
	all         map[*watcher]struct{}
	buckets     map[watchScope]map[*watcher]struct{}
	indexFields []string
}

// watchScope is a bucket of watcherSet; field and value are empty for a
// watch that selects on no indexed field.
type watchScope struct{ key, field, value string }

func newWatcherSet(indexFields []string) watcherSet {
	return watcherSet{all: map[*watcher]struct{}{}, buckets: map[watchScope]map[*watcher]struct{}{}, indexFields: indexFields}
}

// scopeOf is the bucket of a watch of preparedKey selecting with pred.
func (s *watcherSet) scopeOf(preparedKey string, pred storage.SelectionPredicate) watchScope {
	scope := watchScope{key: preparedKey}
	if pred.Field == nil {
		return scope
	}
	for _, f := range s.indexFields {
		if v, ok := pred.Field.RequiresExactMatch(f); ok {
			scope.field, scope.value = f, v
			break
		}
	}
	return scope
}

func (s *watcherSet) add(w *watcher) {
	s.all[w] = struct{}{}
	bucket := s.buckets[w.scope]
	if bucket == nil {
		bucket = map[*watcher]struct{}{}
		s.buckets[w.scope] = bucket
	}
	bucket[w] = struct{}{}
}

func (s *watcherSet) remove(w *watcher) {
	if _, ok := s.all[w]; !ok {
		return
	}
	delete(s.all, w)
	bucket := s.buckets[w.scope]
	delete(bucket, w)
	if len(bucket) == 0 {
		delete(s.buckets, w.scope)
	}
}

func (s *watcherSet) has(w *watcher) bool {
	_, ok := s.all[w]
	return ok
}

// candidates calls fn for every watcher whose scope includes e's object,
// before or after the change, each once (a watcher is in one bucket, and
// the buckets visited differ).
func (s *watcherSet) candidates(e *event, fn func(*watcher)) {
	key := e.obj.key
	for i := range len(key) {
		if key[i] == '/' {
			s.visit(key[:i+1], e, fn)
		}
	}
	s.visit(key, e, fn)
}

func (s *watcherSet) visit(key string, e *event, fn func(*watcher)) {
	bucket := func(field, value string) {
		for w := range s.buckets[watchScope{key, field, value}] {
			fn(w)
		}
	}
	bucket("", "")
	for _, f := range s.indexFields {
		v := e.obj.fields[f]
		bucket(f, v)
		if e.prevObj != nil {
			if prev := e.prevObj.fields[f]; prev != v {
				bucket(f, prev)
			}
		}
	}
}

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

import (
	"maps"
	"slices"
	"sync"
)

// Watches tracks open watches so that a shutdown can end them: a watch is
// added when it opens and forgets itself when it ends; Shutdown hands over
// the open ones and refuses new ones from then on. The cache tracks its
// watches resumed from the storage with it, the server the watches etcd
// serves. The zero value is ready to use, and it is safe for concurrent use.
type Watches[W comparable] struct {
	// mu guards open and shuttingDown.
	mu           sync.Mutex
	open         map[W]struct{}
	shuttingDown bool
}

// Add tracks w and reports true, or reports false once Shutdown has begun:
// then the caller ends w and refuses the watch.
func (s *Watches[W]) Add(w W) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shuttingDown {
		return false
	}
	if s.open == nil {
		s.open = map[W]struct{}{}
	}
	s.open[w] = struct{}{}
	return true
}

// Forget stops tracking w, which has ended; it does nothing if Shutdown
// has already handed w over.
func (s *Watches[W]) Forget(w W) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.open, w)
}

// ShuttingDown reports whether Shutdown has begun.
func (s *Watches[W]) ShuttingDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shuttingDown
}

// Shutdown refuses new watches from now on and returns the open ones, which
// it forgets, for the caller to end: each open watch is returned by one
// call at most, and none after it has been forgotten.
func (s *Watches[W]) Shutdown() []W {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shuttingDown = true
	open := slices.Collect(maps.Keys(s.open))
	clear(s.open)
	return open
}

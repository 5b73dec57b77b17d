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

package durability

import (
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// stopBound is far below the minute a stop took while a watch was open
// (the HTTP server's shutdown timeout), and far above the ~10 ms a stop
// takes, so that a loaded CI machine does not flake; make bench measures
// the time itself.
const stopBound = 5 * time.Second

// TestStopWithOpenWatches: a server with 100 watches open stops at once.
// With the watch cache, each watch that allows bookmarks gets a final
// BOOKMARK before its stream ends (KEP-1904), and one that does not gets
// none; with --watch-cache=false the streams just end. None ends with an
// error (as a stream reset, which its client reports as one).
func TestStopWithOpenWatches(t *testing.T) {
	// Serial: it measures how long a stop takes.
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		s, client := framework.Start(t, path)
		const watches = 100
		type result struct {
			allowBookmarks bool
			events         []watch.EventType
			errs           []string
		}
		results := make(chan result, watches)
		// From a resourceVersion: no initial events, so no initial-events-end bookmark.
		list, err := client.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range watches {
			allow := i%2 == 0
			w, err := client.CoreV1().ConfigMaps("default").Watch(t.Context(),
				metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: allow})
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				r := result{allowBookmarks: allow}
				for ev := range w.ResultChan() {
					r.events = append(r.events, ev.Type)
					if ev.Type == watch.Error {
						r.errs = append(r.errs, apierrors.FromObject(ev.Object).Error())
					}
				}
				results <- r
			}()
		}

		start := time.Now()
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		t.Logf("stopped in %s with %d watches open", took, watches)
		if took > stopBound {
			t.Errorf("stop took %s with %d watches open, want well under %s", took, watches, stopBound)
		}
		for range watches {
			select {
			case r := <-results:
				switch {
				case framework.WatchCacheOn(path) && r.allowBookmarks && !slices.Equal(r.events, []watch.EventType{watch.Bookmark}):
					t.Errorf("a watch with bookmarks ended after %v, want one final BOOKMARK (errors: %q)", r.events, r.errs)
				case !r.allowBookmarks && len(r.events) > 0:
					t.Errorf("a watch without bookmarks ended after %v, want no event (errors: %q)", r.events, r.errs)
				case len(r.errs) > 0:
					t.Errorf("a watch ended after %v, want no ERROR (errors: %q)", r.events, r.errs)
				}
			case <-time.After(time.Minute):
				t.Fatal("a watch did not end when the server stopped")
			}
		}
	})
}

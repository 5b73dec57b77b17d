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

package encoding

import (
	"context"
	"testing"
	"time"

	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// TestCustomResourceStorageOutlivesItsLists: a storage
// apiextensions-apiserver destroys is forgotten at once, but destroyed
// only after the LISTs being served from it, and takes no new ones.
func TestCustomResourceStorageOutlivesItsLists(t *testing.T) {
	c := NewCustomResourceLists(watchcache.NewEncodings(), nil, time.Minute)
	c.crds = apiextensionslisters.NewCustomResourceDefinitionLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}))
	kind := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	destroyed := c.Made(schema.GroupResource{Group: "example.com", Resource: "widgets"}, kind, nil)
	l := c.storages[kind]
	if err := l.inflight.Add(1); err != nil { // a LIST under way
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		destroyed()
		close(done)
	}()
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, wait.ForeverTestTimeout, true, func(ctx context.Context) (bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.storages[kind] == nil, nil
	}); err != nil {
		t.Fatal("the destroyed storage is still served:", err)
	}
	// Once destroying, it takes no new LIST.
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, wait.ForeverTestTimeout, true, func(ctx context.Context) (bool, error) {
		if err := l.inflight.Add(1); err != nil {
			return true, nil
		}
		l.inflight.Done()
		return false, nil
	}); err != nil {
		t.Fatal("a storage being destroyed still takes LISTs:", err)
	}
	select {
	case <-done:
		t.Fatal("the storage was destroyed under a LIST")
	default:
	}
	l.inflight.Done()
	select {
	case <-done:
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the storage was not destroyed after its LIST ended")
	}
}

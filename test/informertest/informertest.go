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

// Package informertest runs informers that count their relists, for the
// integration tests of watch resumption (KEP-1904) and hack/bench's
// restart benchmark. It needs client-go only, not the server.
package informertest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// ListWatch lists and watches one resource, counting the LISTs and the
// watch-lists (sendInitialEvents=true) it sends: an informer's each, once
// it has synced, is a relist.
type ListWatch struct {
	cache.ListWatch
	lists, watches atomic.Int32
}

// NewListWatch lists and watches resource in namespace through client
// (a REST client of its group, such as CoreV1().RESTClient()).
func NewListWatch(client cache.Getter, resource, namespace string) *ListWatch {
	lw := cache.NewListWatchFromClient(client, resource, namespace, fields.Everything())
	counted := &ListWatch{}
	counted.ListWithContextFunc = func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		counted.lists.Add(1)
		return lw.ListWithContext(ctx, opts)
	}
	counted.WatchFuncWithContext = func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
			counted.lists.Add(1)
		}
		counted.watches.Add(1)
		return lw.WatchWithContext(ctx, opts)
	}
	return counted
}

// Lists is how many LISTs and watch-lists it sent.
func (lw *ListWatch) Lists() int { return int(lw.lists.Load()) }

// Watches is how many watches (watch-lists included) it opened.
func (lw *ListWatch) Watches() int { return int(lw.watches.Load()) }

// CountingInformer is an informer on a ListWatch.
type CountingInformer struct {
	Resource string
	Informer cache.SharedIndexInformer
	// Last is the namespace/name key of the object the test writes last;
	// WaitFor waits until the informer has added it.
	Last    string
	lw      *ListWatch
	added   chan struct{} // closed once the informer has added Last
	addedAt time.Time     // written before added is closed
	addOnce sync.Once
}

// Relists is how many times the informer listed again since it synced.
func (c *CountingInformer) Relists() int { return c.lw.Lists() - 1 }

// reconnectBound covers client-go's watch retry backoff: a reflector whose
// watch failed several times while the server was down waits up to 30 s
// times a jitter of up to 2 before it tries again.
const reconnectBound = 2 * time.Minute

// WaitFor waits until the informer has added Last, and returns when it did.
func (c *CountingInformer) WaitFor(tb testing.TB) time.Time {
	tb.Helper()
	select {
	case <-c.added:
		return c.addedAt
	case <-time.After(reconnectBound):
		tb.Fatalf("the %s informer did not see %s within %s", c.Resource, c.Last, reconnectBound)
		return time.Time{}
	}
}

func (c *CountingInformer) onAdd(obj any) {
	if key, _ := cache.MetaNamespaceKeyFunc(obj); key == c.Last {
		c.addOnce.Do(func() { c.addedAt = time.Now(); close(c.added) })
	}
}

// StartCountingInformers starts synced ConfigMap, Secret and Pod informers
// on every namespace (client-go's default: watch-list) that run until ctx
// is done, and their reflectors log to ctx's logger.
func StartCountingInformers(ctx context.Context, tb testing.TB, client kubernetes.Interface) []*CountingInformer {
	tb.Helper()
	core := client.CoreV1().RESTClient()
	specs := []struct {
		resource, last string
		obj            runtime.Object
	}{
		{"configmaps", "default/later", &corev1.ConfigMap{}},
		{"secrets", "default/s2", &corev1.Secret{}},
		{"pods", "default/p2", &corev1.Pod{}},
	}
	var out []*CountingInformer
	for _, spec := range specs {
		ci := &CountingInformer{Resource: spec.resource, Last: spec.last, added: make(chan struct{}),
			lw: NewListWatch(core, spec.resource, metav1.NamespaceAll)}
		ci.Informer = cache.NewSharedIndexInformer(&ci.lw.ListWatch, spec.obj, 0, cache.Indexers{})
		if _, err := ci.Informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: ci.onAdd}); err != nil {
			tb.Fatal(err)
		}
		go ci.Informer.RunWithContext(ctx)
		out = append(out, ci)
	}
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	for _, ci := range out {
		if !cache.WaitForCacheSync(syncCtx.Done(), ci.Informer.HasSynced) {
			tb.Fatalf("the %s informer did not sync", ci.Resource)
		}
		if n := ci.lw.Lists(); n != 1 {
			tb.Fatalf("the %s informer synced with %d requests, want 1", ci.Resource, n)
		}
	}
	return out
}

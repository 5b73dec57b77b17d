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

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// watchedResource is a resource the restarts section runs an informer on.
type watchedResource struct {
	name   string         // "configmaps"
	obj    runtime.Object // the informer's object type
	create func(ctx context.Context, client kubernetes.Interface, name string) error
}

// watchedResources are the informers' resources, in the report's column
// order.
var watchedResources = []watchedResource{
	{name: "configmaps", obj: &corev1.ConfigMap{}, create: func(ctx context.Context, client kubernetes.Interface, name string) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
		_, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err
	}},
	{name: "secrets", obj: &corev1.Secret{}, create: func(ctx context.Context, client kubernetes.Interface, name string) error {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"k": "v"}}
		_, err := client.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{})
		return err
	}},
	{name: "pods", obj: &corev1.Pod{}, create: func(ctx context.Context, client kubernetes.Interface, name string) error {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		_, err := client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}},
}

// countingInformer is an informer whose ListerWatcher counts the LISTs and
// the watch-lists (sendInitialEvents=true) it sends: the first is its
// initial sync, each further one a relist.
type countingInformer struct {
	resource   string
	informer   cache.SharedIndexInformer
	lists      atomic.Int32
	watchLists atomic.Int32
	lastErr    atomic.Pointer[error] // the last ListAndWatch error

	want     string        // the name whose ADD seen waits for
	seen     chan struct{} // closed once the informer has added want
	seenOnce sync.Once
	seenAt   time.Time // written before seen is closed
}

func (c *countingInformer) requests() int { return int(c.lists.Load() + c.watchLists.Load()) }

func (c *countingInformer) relists() int { return c.requests() - 1 }

// informerGroup is the restarts section's informers, one per watched
// resource, on one client.
type informerGroup struct {
	informers []*countingInformer
	cancel    context.CancelFunc
	running   sync.WaitGroup
	stopOnce  sync.Once
}

// startCountingInformers starts an informer per watched resource in
// namespace, each waiting for an object named want, and waits until all
// have synced, each with one request. Their logs are dropped: client-go
// logs every failed watch while the server is down.
func startCountingInformers(ctx context.Context, client kubernetes.Interface, want string) (*informerGroup, error) {
	ctx, cancel := context.WithCancel(klog.NewContext(ctx, logr.Discard()))
	g := &informerGroup{cancel: cancel}
	core := client.CoreV1().RESTClient()
	for _, res := range watchedResources {
		ci := &countingInformer{resource: res.name, want: want, seen: make(chan struct{})}
		lw := cache.NewListWatchFromClient(core, res.name, namespace, fields.Everything())
		counted := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				ci.lists.Add(1)
				return lw.ListWithContext(ctx, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
					ci.watchLists.Add(1)
				}
				return lw.WatchWithContext(ctx, opts)
			},
		}
		ci.informer = cache.NewSharedIndexInformer(counted, res.obj, 0, cache.Indexers{})
		err := ci.informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			ci.lastErr.Store(&err)
		})
		if _, herr := ci.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: ci.onAdd}); herr != nil {
			err = errors.Join(err, herr)
		}
		if err != nil {
			g.stop()
			return nil, fmt.Errorf("configuring the %s informer: %w", res.name, err)
		}
		g.informers = append(g.informers, ci)
	}
	for _, ci := range g.informers {
		g.running.Go(func() { ci.informer.RunWithContext(ctx) })
	}
	if err := g.awaitSynced(ctx); err != nil {
		g.stop()
		return nil, err
	}
	return g, nil
}

func (c *countingInformer) onAdd(obj any) {
	if m, ok := obj.(metav1.Object); ok && m.GetName() == c.want {
		c.seenOnce.Do(func() { c.seenAt = time.Now(); close(c.seen) })
	}
}

// awaitSynced waits up to syncTimeout for every informer's initial sync,
// and checks that each took one request.
func (g *informerGroup) awaitSynced(ctx context.Context) error {
	timer := time.NewTimer(syncTimeout)
	defer timer.Stop()
	for _, ci := range g.informers {
		select {
		case <-ci.informer.HasSyncedChecker().Done():
		case <-timer.C:
			return fmt.Errorf("the %s informer did not sync within %s%s", ci.resource, syncTimeout, ci.errNote())
		case <-ctx.Done():
			return ctx.Err()
		}
		if n := ci.requests(); n != 1 {
			return fmt.Errorf("the %s informer synced with %d LIST/watch-list requests, want 1", ci.resource, n)
		}
	}
	return nil
}

// awaitSeen waits up to d for every informer to add its object, and returns
// when the last one did.
func (g *informerGroup) awaitSeen(ctx context.Context, d time.Duration) (time.Time, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	var last time.Time
	for _, ci := range g.informers {
		select {
		case <-ci.seen:
			last = later(last, ci.seenAt)
		case <-timer.C:
			return time.Time{}, fmt.Errorf("the %s informer did not see %s within %s%s", ci.resource, ci.want, d, ci.errNote())
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
	return last, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (c *countingInformer) errNote() string {
	if err := c.lastErr.Load(); err != nil {
		return fmt.Sprintf(" (its last error: %v)", *err)
	}
	return ""
}

// relists are the relists of each informer, in watchedResources order.
func (g *informerGroup) relists() []int {
	var n []int
	for _, ci := range g.informers {
		n = append(n, ci.relists())
	}
	return n
}

// stop stops the informers and waits for them. It is safe to call more
// than once.
func (g *informerGroup) stop() {
	g.stopOnce.Do(func() {
		g.cancel()
		g.running.Wait()
	})
}

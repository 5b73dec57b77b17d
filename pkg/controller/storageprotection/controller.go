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

package storageprotection

import (
	"context"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/miniapiserver/miniapiserver/pkg/controller/worker"
)

// object is what a controller protects: a claim, a volume or a class.
type object interface {
	metav1.Object
	runtime.Object
}

// Controller keeps the finalizer of one kind of object: on it while it is
// not being deleted, off once it is and nothing uses it.
type Controller[T object] struct {
	name      string
	finalizer string
	// get reads the object of a queue key from the informer's cache.
	get func(key string) (T, error)
	// used reports whether something still uses an object being deleted.
	used func(context.Context, T) (bool, error)
	// update writes the object with its finalizers changed.
	update func(context.Context, T) error
	synced []cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
}

func newController[T object](name, finalizer string) *Controller[T] {
	return &Controller[T]{name: name, finalizer: finalizer, queue: workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})}
}

// watch queues the objects of informer whose finalizer is to be added or
// released, and makes the controller wait for its cache.
func (c *Controller[T]) watch(informer cache.SharedIndexInformer) {
	c.synced = append(c.synced, informer.HasSynced)
	enqueue := func(obj any) {
		o, ok := obj.(T)
		if !ok {
			return
		}
		if key, err := cache.MetaNamespaceKeyFunc(o); err == nil && c.needsWork(o) {
			c.queue.Add(key)
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
}

// needsWork: upstream's NeedToAddFinalizer or IsDeletionCandidate.
func (c *Controller[T]) needsWork(o T) bool {
	return slices.Contains(o.GetFinalizers(), c.finalizer) == (o.GetDeletionTimestamp() != nil)
}

// Run keeps the finalizers until ctx ends.
func (c *Controller[T]) Run(ctx context.Context) {
	worker.Run(ctx, c.queue, c.synced, c.sync, "protection finalizer not updated yet", c.name)
}

// sync releases the finalizer of the object key names if it is being
// deleted and unused, and adds it if it is not being deleted.
func (c *Controller[T]) sync(ctx context.Context, key string) error {
	o, err := c.get(key)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || !c.needsWork(o) {
		return err
	}
	if o.GetDeletionTimestamp() != nil {
		if used, err := c.used(ctx, o); used || err != nil {
			return err
		}
		o = o.DeepCopyObject().(T)
		o.SetFinalizers(slices.DeleteFunc(o.GetFinalizers(), func(f string) bool { return f == c.finalizer }))
		return c.update(ctx, o)
	}
	o = o.DeepCopyObject().(T)
	o.SetFinalizers(append(o.GetFinalizers(), c.finalizer))
	return c.update(ctx, o)
}

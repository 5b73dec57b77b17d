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

package namespace

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/miniapiserver/miniapiserver/pkg/controller/worker"
)

// Controller empties namespaces that are being deleted, then removes the
// "kubernetes" finalizer, which deletes them.
type Controller struct {
	client   kubernetes.Interface
	metadata metadata.Interface
	// resources returns every namespaced resource served now.
	resources func() []schema.GroupVersionResource
	synced    cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
}

// New returns a controller of the namespaces informer watches, which
// deletes through meta the objects of every resource resources returns
// (the namespaced resources served now) and finalizes through client.
func New(client kubernetes.Interface, meta metadata.Interface, informer coreinformers.NamespaceInformer, resources func() []schema.GroupVersionResource) *Controller {
	c := &Controller{
		client:    client,
		metadata:  meta,
		resources: resources,
		synced:    informer.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "namespace"}),
	}
	enqueue := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.DeletionTimestamp != nil {
			c.queue.Add(ns.Name)
		}
	}
	_, _ = informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	return c
}

// Run empties and finalizes the namespaces being deleted until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	worker.Run(ctx, c.queue, []cache.InformerSynced{c.synced}, c.sync, "Namespace not yet emptied", "namespace")
}

// deletersPerNamespace bounds the resources a sync empties at once.
const deletersPerNamespace = 8

// sync deletes everything in the namespace; once nothing is left it finalizes it.
func (c *Controller) sync(ctx context.Context, name string) error {
	ns, err := c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil || !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		return nil
	}
	// Every resource at once, a few at a time: one after another, the
	// round trips of some forty resources add up.
	var emptied errgroup.Group
	emptied.SetLimit(deletersPerNamespace)
	for _, gvr := range c.resources() {
		emptied.Go(func() error {
			objects := c.metadata.Resource(gvr).Namespace(name)
			if err := objects.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				return fmt.Errorf("deleting %s: %w", gvr.Resource, err)
			}
			left, err := objects.List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				return fmt.Errorf("listing %s: %w", gvr.Resource, err)
			}
			if len(left.Items) > 0 {
				return fmt.Errorf("%s remain", gvr.Resource)
			}
			return nil
		})
	}
	if err := emptied.Wait(); err != nil {
		return err
	}
	ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
	_, err = c.client.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

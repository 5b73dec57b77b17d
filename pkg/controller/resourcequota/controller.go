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

package resourcequota

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/miniapiserver/miniapiserver/pkg/admission/resourcequota"
	"github.com/miniapiserver/miniapiserver/pkg/controller/worker"
)

// Name is the controller's name, kube-controller-manager's.
const Name = "resourcequota-controller"

// DefaultResync is how often every quota is recomputed, catching what no
// event says (objects counted only by count/<resource>): a test control
// plane's short version of kube-controller-manager's
// --resource-quota-sync-period (5m).
const DefaultResync = 30 * time.Second

// watched are the resources whose changes replenish quotas, those of the
// evaluators in the admission plugin's configuration.
var watched = []schema.GroupVersionResource{
	corev1.SchemeGroupVersion.WithResource("pods"),
	corev1.SchemeGroupVersion.WithResource("services"),
	corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
	corev1.SchemeGroupVersion.WithResource("configmaps"),
	corev1.SchemeGroupVersion.WithResource("secrets"),
	corev1.SchemeGroupVersion.WithResource("replicationcontrollers"),
	corev1.SchemeGroupVersion.WithResource("resourcequotas"),
	resourcev1.SchemeGroupVersion.WithResource("resourceclaims"),
}

// counted are the watched resources quotas only count (count/<resource>
// and upstream's legacy names): their informers hold their metadata only,
// not a second copy of every ConfigMap's and Secret's data.
var counted = map[schema.GroupVersionResource]bool{
	corev1.SchemeGroupVersion.WithResource("configmaps"):             true,
	corev1.SchemeGroupVersion.WithResource("secrets"):                true,
	corev1.SchemeGroupVersion.WithResource("replicationcontrollers"): true,
}

// Config is what New needs.
type Config struct {
	// Client writes quotas' status, and the controller's own informers
	// list and watch through it.
	Client kubernetes.Interface
	// Factory is the server's: its quotas informer, made by New, starts
	// with it.
	Factory informers.SharedInformerFactory
	// Metadata's informers, started by Run, hold the counted resources;
	// with Mapper, it counts other resources (count/<resource>.<group>)
	// with a live list.
	Metadata metadata.Interface
	Mapper   meta.ResettableRESTMapper
	// Resync defaults to DefaultResync, Clock to the real clock.
	Resync time.Duration
	Clock  clock.WithTicker
}

// Controller keeps quotas' status.
type Controller struct {
	client corev1client.ResourceQuotasGetter
	quotas corev1listers.ResourceQuotaLister
	synced []cache.InformerSynced
	// owned and counted hold the watched resources once firstQuota is
	// closed (by seenQuota).
	owned      informers.SharedInformerFactory
	counted    metadatainformer.SharedInformerFactory
	firstQuota chan struct{}
	seenOnce   sync.Once
	registry   quota.Registry
	ignored    map[schema.GroupResource]struct{}
	others     *liveListers
	resync     time.Duration
	clock      clock.WithTicker
	queue      workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller.
func New(c Config) (*Controller, error) {
	if c.Client == nil || c.Factory == nil || c.Metadata == nil || c.Mapper == nil {
		return nil, fmt.Errorf("resourcequota: Config needs Client, Factory, Metadata and Mapper")
	}
	if c.Resync == 0 {
		c.Resync = DefaultResync
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	// The watched resources' informers are the controller's own, started
	// once a quota exists (see Run); the quotas' are the server's.
	owned := informers.NewSharedInformerFactory(c.Client, 0)
	countedInformers := metadatainformer.NewSharedInformerFactory(c.Metadata, 0)
	informer := func(gvr schema.GroupVersionResource) (informers.GenericInformer, error) {
		switch {
		case gvr == corev1.SchemeGroupVersion.WithResource("resourcequotas"):
			return c.Factory.ForResource(gvr)
		case counted[gvr]:
			return countedInformers.ForResource(gvr), nil
		}
		return owned.ForResource(gvr)
	}
	listers := func(gvr schema.GroupVersionResource) (cache.GenericLister, error) {
		i, err := informer(gvr)
		if err != nil {
			return nil, err
		}
		return i.Lister(), nil
	}
	// The device classes, pods and claims the ResourceClaim evaluator
	// reads are the owned factory's too.
	x, err := resourcequota.NewExtendedResources(owned)
	if err != nil {
		return nil, err
	}
	config := resourcequota.NewConfiguration(listers, c.Clock, x)
	ctl := &Controller{
		client:     c.Client.CoreV1(),
		quotas:     c.Factory.Core().V1().ResourceQuotas().Lister(),
		owned:      owned,
		counted:    countedInformers,
		firstQuota: make(chan struct{}),
		registry:   generic.NewRegistry(config.Evaluators()),
		ignored:    config.IgnoredResources(),
		others:     &liveListers{meta: c.Metadata, mapper: c.Mapper},
		resync:     c.Resync,
		clock:      c.Clock,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 5*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "resourcequota"}),
	}
	quotas := c.Factory.Core().V1().ResourceQuotas().Informer()
	// Not on a change of status alone: admission adds to status.used
	// before the object is stored, and a recount from informers that have
	// not yet seen it would take that back, as upstream's filter avoids.
	_, err = quotas.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			ctl.seenQuota()
			ctl.enqueue(obj)
		},
		UpdateFunc: func(old, obj any) {
			o, n := old.(*corev1.ResourceQuota), obj.(*corev1.ResourceQuota)
			if !quota.Equals(o.Spec.Hard, n.Spec.Hard) || !quota.Equals(n.Spec.Hard, n.Status.Hard) {
				ctl.enqueue(obj)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	ctl.synced = append(ctl.synced, quotas.HasSynced, x.HasSynced)
	replenish := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, err := meta.Accessor(obj); err == nil {
			ctl.enqueueNamespace(m.GetNamespace())
		}
	}
	for _, gvr := range watched {
		i, err := informer(gvr)
		if err != nil {
			return nil, err
		}
		if _, err := i.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, obj any) {
				if releases(gvr.GroupResource(), old, obj, c.Clock) {
					replenish(obj)
				}
			},
			DeleteFunc: replenish,
		}); err != nil {
			return nil, err
		}
		ctl.synced = append(ctl.synced, i.Informer().HasSynced)
	}
	return ctl, nil
}

// releases is upstream's DefaultUpdateFilter: whether an update may
// lower what an object uses (a pod that ends, or whose terminating scope
// or resources change; a service whose type changes; any claim update).
func releases(gr schema.GroupResource, old, obj any, c clock.Clock) bool {
	switch gr {
	case corev1.Resource("pods"):
		o, n := old.(*corev1.Pod), obj.(*corev1.Pod)
		return resourcequota.PodReleases(o, n, c)
	case corev1.Resource("services"):
		o, n := old.(*corev1.Service), obj.(*corev1.Service)
		return quotaServiceType(o) != quotaServiceType(n)
	case corev1.Resource("persistentvolumeclaims"):
		return true
	}
	return false
}

func quotaServiceType(s *corev1.Service) corev1.ServiceType {
	if t := s.Spec.Type; t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer {
		return t
	}
	return ""
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

// enqueueNamespace queues the quotas of ns (none, mostly).
func (c *Controller) enqueueNamespace(ns string) {
	quotas, err := c.quotas.ResourceQuotas(ns).List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, q := range quotas {
		c.enqueue(q)
	}
}

// Run keeps quotas' status until ctx ends. Until the first quota, it
// watches nothing but quotas: most servers never have one, and the
// informers of what quotas count would hold a copy of every Pod,
// Service and claim, and the metadata of every ConfigMap and Secret.
func (c *Controller) Run(ctx context.Context) {
	select {
	case <-c.firstQuota:
	case <-ctx.Done():
		c.queue.ShutDown()
		return
	}
	c.owned.Start(ctx.Done())
	defer c.owned.Shutdown()
	c.counted.Start(ctx.Done())
	defer c.counted.Shutdown()
	var resyncing sync.WaitGroup
	defer resyncing.Wait()
	resyncing.Go(func() { c.resyncEvery(ctx) })
	worker.Run(ctx, c.queue, c.synced, c.sync, "ResourceQuota status not updated yet", "resourceQuota")
}

// seenQuota lets Run start, once a quota exists.
func (c *Controller) seenQuota() { c.seenOnce.Do(func() { close(c.firstQuota) }) }

func (c *Controller) resyncEvery(ctx context.Context) {
	defer utilruntime.HandleCrash()
	ticker := c.clock.NewTicker(c.resync)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			c.enqueueNamespace(metav1.NamespaceAll)
		}
	}
}

// sync is upstream's syncResourceQuota: status.hard is spec.hard, and
// status.used the usage of each resource of it, recomputed (a resource
// that cannot be computed keeps its last usage).
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	q, err := c.quotas.ResourceQuotas(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	c.addCountEvaluators(q.Spec.Hard)
	dirty := !equality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard) || q.Status.Hard == nil || q.Status.Used == nil
	used := quota.Add(corev1.ResourceList{}, q.Status.Used)
	hard := quota.Add(corev1.ResourceList{}, q.Spec.Hard)
	usage, calcErr := quota.CalculateUsage(ns, q.Spec.Scopes, hard, c.registry, q.Spec.ScopeSelector)
	for k, v := range usage {
		used[k] = v
	}
	used = quota.Mask(used, quota.ResourceNames(hard))
	if !dirty && quota.Equals(used, q.Status.Used) {
		return calcErr
	}
	updated := q.DeepCopy()
	updated.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: used}
	_, err = c.client.ResourceQuotas(ns).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	return calcErr
}

// addCountEvaluators adds an object count evaluator, listing live, for
// each count/<resource>.<group> of hard that no evaluator counts, as
// upstream's quota monitor does for every resource it discovers.
func (c *Controller) addCountEvaluators(hard corev1.ResourceList) {
	for name := range hard {
		rest, ok := strings.CutPrefix(string(name), "count/")
		if !ok {
			continue
		}
		gr := schema.ParseGroupResource(rest)
		if _, ignored := c.ignored[gr]; ignored || c.registry.Get(gr) != nil {
			continue
		}
		c.registry.Add(generic.NewObjectCountEvaluator(gr, c.others.list(gr), ""))
	}
}

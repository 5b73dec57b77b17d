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

package limitranger

import (
	"context"
	"fmt"
	"io"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/lru"
)

const (
	// PluginName is the plugin's name, as upstream's.
	PluginName = "LimitRanger"
	// Annotation records on a Pod which defaults the plugin set.
	Annotation = "kubernetes.io/limit-ranger"
	// liveTTL is how long a live lookup of a namespace's LimitRanges is
	// reused, as upstream's.
	liveTTL = 30 * time.Second
)

// Register registers the plugin in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin is the LimitRanger admission plugin. It mutates (defaults) Pods
// and validates Pods and PersistentVolumeClaims, on create and update.
type Plugin struct {
	*admission.Handler
	client kubernetes.Interface
	lister corev1listers.LimitRangeLister
	// live holds recent live lookups by namespace (liveEntry), made when
	// the informer has none: it may not yet have seen a LimitRange just
	// created, and a lookup that finds none is not repeated for liveTTL.
	live  *lru.Cache
	group singleflight.Group
	now   func() time.Time
}

type liveEntry struct {
	expiry time.Time
	items  []*corev1.LimitRange
}

var (
	_ admission.MutationInterface                  = (*Plugin)(nil)
	_ admission.ValidationInterface                = (*Plugin)(nil)
	_ initializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
	_ admission.InitializationValidator            = (*Plugin)(nil)
)

// New returns the plugin; it needs a client and an informer factory.
func New() *Plugin {
	return &Plugin{
		Handler: admission.NewHandler(admission.Create, admission.Update),
		live:    lru.New(10000),
		now:     time.Now,
	}
}

// SetExternalKubeClientSet implements initializer.WantsExternalKubeClientSet.
func (p *Plugin) SetExternalKubeClientSet(c kubernetes.Interface) { p.client = c }

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	i := f.Core().V1().LimitRanges()
	p.lister = i.Lister()
	p.SetReadyFunc(i.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.lister == nil {
		return fmt.Errorf("missing limitRange lister")
	}
	if p.client == nil {
		return fmt.Errorf("missing client")
	}
	return nil
}

// Admit sets the defaults of the namespace's LimitRanges on a Pod.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	return p.run(ctx, a, mutate)
}

// Validate checks a Pod or PersistentVolumeClaim against the namespace's
// LimitRanges.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	return p.run(ctx, a, validate)
}

func (p *Plugin) run(ctx context.Context, a admission.Attributes, fn func(*corev1.LimitRange, string, any) error) error {
	if !supports(a) {
		return nil
	}
	// An object being deleted is left alone, so that its finalizers can
	// be removed whatever the limits are now.
	if old := a.GetOldObject(); old != nil {
		accessor, err := meta.Accessor(old)
		if err != nil {
			return admission.NewForbidden(a, err)
		}
		if accessor.GetDeletionTimestamp() != nil {
			return nil
		}
	}
	items, err := p.limitRanges(ctx, a)
	if err != nil {
		return err
	}
	for _, lr := range items {
		if err := fn(lr, a.GetResource().Resource, a.GetObject()); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

// supports is upstream's SupportsAttributes: Pods (created, or resized)
// and PersistentVolumeClaims, no other subresource. A Pod's containers
// cannot change on update, so an update is not checked again.
func supports(a admission.Attributes) bool {
	kind := a.GetKind().GroupKind()
	if a.GetSubresource() == "resize" && kind == corev1.SchemeGroupVersion.WithKind("Pod").GroupKind() && a.GetOperation() == admission.Update {
		return true
	}
	if a.GetSubresource() != "" {
		return false
	}
	if kind.Group != "" {
		return false
	}
	switch kind.Kind {
	case "Pod":
		return a.GetOperation() != admission.Update
	case "PersistentVolumeClaim":
		return true
	}
	return false
}

// limitRanges returns the namespace's LimitRanges from the informer or,
// when it has none, from a live lookup.
func (p *Plugin) limitRanges(ctx context.Context, a admission.Attributes) ([]*corev1.LimitRange, error) {
	ns := a.GetNamespace()
	items, err := p.lister.LimitRanges(ns).List(labels.Everything())
	if err != nil {
		return nil, admission.NewForbidden(a, fmt.Errorf("unable to %s %v at this time because there was an error enforcing limit ranges", a.GetOperation(), a.GetResource()))
	}
	if len(items) > 0 {
		return items, nil
	}
	if e, ok := p.live.Get(ns); ok && !e.(liveEntry).expiry.Before(p.now()) {
		return e.(liveEntry).items, nil
	}
	// Concurrent lookups of one namespace share one List, which must not
	// end with the first caller's request.
	ctx = context.WithoutCancel(ctx)
	e, err, _ := p.group.Do(ns, func() (any, error) {
		list, err := p.client.CoreV1().LimitRanges(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, admission.NewForbidden(a, err)
		}
		entry := liveEntry{expiry: p.now().Add(liveTTL)}
		for i := range list.Items {
			entry.items = append(entry.items, &list.Items[i])
		}
		p.live.Add(ns, entry)
		return entry, nil
	})
	if err != nil {
		return nil, err
	}
	return e.(liveEntry).items, nil
}

// mutate is upstream's MutateLimit: it defaults Pods.
func mutate(lr *corev1.LimitRange, resource string, obj any) error {
	if pod, ok := obj.(*corev1.Pod); ok && resource == "pods" {
		setDefaults(lr, pod)
	}
	return nil
}

// validate is upstream's ValidateLimit.
func validate(lr *corev1.LimitRange, resource string, obj any) error {
	switch o := obj.(type) {
	case *corev1.Pod:
		if resource == "pods" {
			return validatePod(lr, o)
		}
	case *corev1.PersistentVolumeClaim:
		if resource == "persistentvolumeclaims" {
			return validateClaim(lr, o)
		}
	}
	return nil
}

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

package storage

import (
	"context"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// CRDRESTOptionsGetter stores CustomResourceDefinitions as kube-apiserver
// does: JSON, as apiextensions.k8s.io/v1beta1 where that can hold them
// (the more compact form; v1 otherwise), at /registry/apiextensions.k8s.io/<resource>.
type CRDRESTOptionsGetter RESTOptionsGetter

var _ generic.RESTOptionsGetter = CRDRESTOptionsGetter{}

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g CRDRESTOptionsGetter) GetRESTOptions(gr schema.GroupResource, obj runtime.Object) (generic.RESTOptions, error) {
	opts, err := CodecRESTOptionsGetter{RESTOptionsGetter: RESTOptionsGetter(g),
		Codec:           apiextensionsapiserver.Codecs.LegacyCodec(apiextensionsv1beta1.SchemeGroupVersion, apiextensionsv1.SchemeGroupVersion),
		EncodeVersioner: runtime.NewMultiGroupVersioner(apiextensionsv1beta1.SchemeGroupVersion, schema.GroupKind{Group: apiextensionsv1beta1.GroupName}),
	}.GetRESTOptions(gr, obj)
	if err != nil {
		return generic.RESTOptions{}, err
	}
	if g.SoleServer != nil {
		opts.Decorator = establishedEarlier(opts.Decorator, g.SoleServer)
	}
	return opts, nil
}

// establishedHAWait is how long apiextensions-apiserver holds the creates
// of a CRD's custom resources after the CRD's Established condition
// became true: time for the other API servers of an HA cluster to see it.
const establishedHAWait = 2 * time.Second

// establishedEarlier decorates CRD storage for a server that no other
// server shares its etcd with while sole says so: a CRD's Established
// condition, when it becomes true, is stored as having become true
// establishedHAWait earlier. apiextensions-apiserver sleeps through the
// first create of a custom resource until that long after the condition's
// time, waiting for HA peers there are none of; with this it does not. The
// condition's lastTransitionTime is the one thing users see differ (the
// README says so).
func establishedEarlier(decorator generic.StorageDecorator, sole func() bool) generic.StorageDecorator {
	return wrapped(decorator, func(s storage.Interface, _ func() runtime.Object) (storage.Interface, func()) {
		return crdStorage{Interface: s, sole: sole}, nil
	})
}

// wrapped is decorator with wrap applied to each storage it makes; the
// func wrap returns, if any, runs before that storage is destroyed.
func wrapped(decorator generic.StorageDecorator, wrap func(s storage.Interface, newFunc func() runtime.Object) (storage.Interface, func())) generic.StorageDecorator {
	return func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(obj runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrsFunc storage.AttrFunc, triggers storage.IndexerFuncs, indexers *cache.Indexers,
	) (storage.Interface, factory.DestroyFunc, error) {
		s, destroy, err := decorator(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrsFunc, triggers, indexers)
		if err != nil {
			return nil, nil, err
		}
		s, beforeDestroy := wrap(s, newFunc)
		if beforeDestroy == nil {
			return s, destroy, nil
		}
		return s, func() { beforeDestroy(); destroy() }, nil
	}
}

// crdStorage is CRD storage whose updates backdate a new Established
// condition (see establishedEarlier).
type crdStorage struct {
	storage.Interface
	sole func() bool
}

func (s crdStorage) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object,
) error {
	backdating := func(input runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		out, ttl, err := tryUpdate(input, res)
		if err == nil && s.sole() {
			backdateEstablished(input, out)
		}
		return out, ttl, err
	}
	return s.Interface.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, backdating, cachedExistingObject)
}

// backdateEstablished moves the Established condition of CRD out back by
// establishedHAWait if it becomes true from in to out.
func backdateEstablished(in, out runtime.Object) {
	before, ok := in.(*apiextensions.CustomResourceDefinition)
	if !ok {
		return
	}
	after, ok := out.(*apiextensions.CustomResourceDefinition)
	if !ok || isEstablished(before) {
		return
	}
	for i, c := range after.Status.Conditions {
		if c.Type == apiextensions.Established && c.Status == apiextensions.ConditionTrue {
			after.Status.Conditions[i].LastTransitionTime = metav1.NewTime(c.LastTransitionTime.Add(-establishedHAWait))
		}
	}
}

func isEstablished(crd *apiextensions.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensions.Established {
			return c.Status == apiextensions.ConditionTrue
		}
	}
	return false
}

// CustomResourceRESTOptionsGetter stores custom resources as kube-apiserver
// does (apiextensions-apiserver's NewCRDRESTOptionsGetter): unstructured
// JSON at /registry/<group>/<resource>. The CRD handler wraps the codec to
// convert between the CRD's versions and apply its schema.
type CustomResourceRESTOptionsGetter struct {
	RESTOptionsGetter
	// Made, if set, is told of the storage made for each served version of
	// a custom resource (apiextensions-apiserver makes one per version,
	// holding objects of that version), as kind; the function it returns
	// is called when that storage is destroyed.
	Made func(gr schema.GroupResource, kind schema.GroupVersionKind, s storage.Interface) (destroyed func())
}

var _ generic.RESTOptionsGetter = CustomResourceRESTOptionsGetter{}

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g CustomResourceRESTOptionsGetter) GetRESTOptions(gr schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	cfg := *g.Config
	cfg.Codec = unstructured.UnstructuredJSONScheme
	opts := restOptions(&cfg, gr, gr.Group+"/"+gr.Resource, g.Decorator, g.GarbageCollection)
	if g.Made != nil {
		opts.Decorator = told(opts.Decorator, gr, g.Made)
	}
	return opts, nil
}

// told decorates storage so that made hears of each storage decorator makes.
func told(decorator generic.StorageDecorator, gr schema.GroupResource, made func(schema.GroupResource, schema.GroupVersionKind, storage.Interface) func()) generic.StorageDecorator {
	return wrapped(decorator, func(s storage.Interface, newFunc func() runtime.Object) (storage.Interface, func()) {
		return s, made(gr, newFunc().GetObjectKind().GroupVersionKind(), s)
	})
}

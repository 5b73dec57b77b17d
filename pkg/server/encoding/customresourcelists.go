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
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"
	"k8s.io/apimachinery/pkg/util/waitgroup"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/endpoints/request"
	apiserverfeatures "k8s.io/apiserver/pkg/features"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	genericapiserver "k8s.io/apiserver/pkg/server"
	apistorage "k8s.io/apiserver/pkg/storage"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// CustomResourceLists serves, in front of apiextensions-apiserver, the
// LISTs of custom resources that it would answer with plain JSON from a
// watch cache: from the cache's kept encodings of the objects, as the core
// server answers LISTs of built-in types (see WithCachedListEncoding).
// apiextensions-apiserver would copy every object of the list (its
// converter copies before converting, even to the version the objects
// already have) and encode each one again.
//
// It runs k8s.io/apiserver's own LIST handler, over the very storage
// apiextensions-apiserver made for the CRD's version, with a request scope
// built as apiextensions-apiserver builds it, so that everything but the
// encoding is the library's: options, selectors (selectable fields
// included), errors, negotiation, metrics. Anything else (other verbs,
// tables, YAML, a CRD whose storage it has not seen made for the CRD as it
// is now, a deprecated version, which gets a warning) goes to
// apiextensions-apiserver.
type CustomResourceLists struct {
	encodings *watchcache.Encodings
	// events, if set, learns each custom resource version's watch encoders.
	events *EventWriter
	next   http.Handler // apiextensions-apiserver's
	crds   apiextensionslisters.CustomResourceDefinitionLister
	// minRequestTimeout is the core server's (--min-request-timeout).
	minRequestTimeout time.Duration

	mu       sync.Mutex
	storages map[schema.GroupVersionKind]*customResourceList
}

// customResourceList is the storage of one version of a custom resource,
// and the CRD as it was when the storage was made.
type customResourceList struct {
	crd     atomic.Pointer[apiextensionsv1.CustomResourceDefinition]
	storage apistorage.Interface
	kind    schema.GroupVersionKind
	gr      schema.GroupResource

	once  sync.Once
	scope *handlers.RequestScope
	list  http.HandlerFunc
	err   error

	// inflight are the LISTs being served: the storage is destroyed only
	// after them, as apiextensions-apiserver waits for its own requests.
	inflight waitgroup.SafeWaitGroup
}

// NewCustomResourceLists serves from the kept encodings of encodings, which
// is nil without watch caches: apiextensions-apiserver then serves all.
func NewCustomResourceLists(encodings *watchcache.Encodings, events *EventWriter, minRequestTimeout time.Duration) *CustomResourceLists {
	return &CustomResourceLists{encodings: encodings, events: events, minRequestTimeout: minRequestTimeout, storages: map[schema.GroupVersionKind]*customResourceList{}}
}

// Delegate is ext as the core server's delegate, with c in front of its
// handler.
func (c *CustomResourceLists) Delegate(ext *apiextensionsapiserver.CustomResourceDefinitions) genericapiserver.DelegationTarget {
	c.crds = ext.Informers.Apiextensions().V1().CustomResourceDefinitions().Lister()
	c.next = ext.GenericAPIServer.UnprotectedHandler()
	return withHandler{ext.GenericAPIServer, c}
}

// withHandler is a delegation target with another unprotected handler.
type withHandler struct {
	*genericapiserver.GenericAPIServer
	handler http.Handler
}

func (d withHandler) UnprotectedHandler() http.Handler { return d.handler }

// Made records a storage apiextensions-apiserver made (see
// pkg/storage's CustomResourceRESTOptionsGetter.Made), with the CRD as the lister
// has it now: what the storage was made from, or newer. The returned
// function forgets the storage.
func (c *CustomResourceLists) Made(gr schema.GroupResource, kind schema.GroupVersionKind, s apistorage.Interface) func() {
	if c.encodings == nil {
		return func() {}
	}
	if c.events != nil {
		ns, _, _ := newUnstructuredSerializer(kind.GroupVersion(), nil)
		c.events.addCustomResourceVersion(ns, kind.GroupVersion())
	}
	l := &customResourceList{storage: s, kind: kind, gr: gr}
	if crd, err := c.crds.Get(gr.Resource + "." + gr.Group); err == nil {
		l.crd.Store(crd)
	}
	c.mu.Lock()
	c.storages[kind] = l
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.storages[kind] == l {
			delete(c.storages, kind)
		}
		c.mu.Unlock()
		l.inflight.Wait()
	}
}

func (c *CustomResourceLists) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if l, h := c.handlerFor(req); h != nil && l.inflight.Add(1) == nil {
		defer l.inflight.Done()
		h(w, req)
		return
	}
	c.next.ServeHTTP(w, req)
}

// handlerFor returns the LIST handler for req and the storage it lists, or
// a nil handler for a request apiextensions-apiserver must serve.
func (c *CustomResourceLists) handlerFor(req *http.Request) (*customResourceList, http.HandlerFunc) {
	info, ok := request.RequestInfoFrom(req.Context())
	if c.encodings == nil || !ok || !info.IsResourceRequest || info.Verb != "list" || info.Subresource != "" || info.APIGroup == "" {
		return nil, nil
	}
	crd, err := c.crds.Get(info.Resource + "." + info.APIGroup)
	if err != nil || !servesPlainly(crd, info) {
		return nil, nil
	}
	c.mu.Lock()
	l := c.storages[schema.GroupVersionKind{Group: info.APIGroup, Version: info.APIVersion, Kind: crd.Status.AcceptedNames.Kind}]
	c.mu.Unlock()
	if l == nil || !l.madeFor(crd) {
		return nil, nil
	}
	l.once.Do(func() {
		l.scope, l.list, l.err = newCustomResourceListHandler(crd, l.gr, l.kind, l.storage, c.encodings, c.minRequestTimeout)
	})
	if l.err != nil {
		return nil, nil
	}
	// Only plain JSON (or what the client takes instead, as negotiated by
	// the handler itself): tables, metadata-only lists and YAML are
	// apiextensions-apiserver's.
	if mt, serializer, err := negotiation.NegotiateOutputMediaType(req, l.scope.Serializer, l.scope); err != nil || mt.Convert != nil || serializer.MediaType != runtime.ContentTypeJSON {
		return nil, nil
	}
	return l, metrics.InstrumentHandlerFunc(strings.ToUpper(info.Verb), info.APIGroup, info.APIVersion, info.Resource, "",
		metrics.CleanScope(info), metrics.APIServerComponent, false, "", func(w http.ResponseWriter, req *http.Request) {
			customResourceListsServed.Add(1)
			l.list(w, req)
		})
}

// customResourceListsServed counts the LISTs CustomResourceLists served
// (tests check that the path is taken).
var customResourceListsServed atomic.Int64

// servesPlainly reports whether apiextensions-apiserver would serve a LIST
// of crd's objects as info asks, with no warning: CRD named and served
// (as its handler checks), the version served and not deprecated, the
// request's scope the CRD's.
func servesPlainly(crd *apiextensionsv1.CustomResourceDefinition, info *request.RequestInfo) bool {
	if !apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) && !apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		return false
	}
	if crd.Spec.Scope != apiextensionsv1.NamespaceScoped && info.Namespace != "" {
		return false
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == info.APIVersion {
			return v.Served && !v.Deprecated
		}
	}
	return false
}

// madeFor reports whether l's storage was made for crd as it is now:
// apiextensions-apiserver makes new storage when a CRD's spec or accepted
// names change.
func (l *customResourceList) madeFor(crd *apiextensionsv1.CustomResourceDefinition) bool {
	made := l.crd.Load()
	switch {
	case made == nil || made.UID != crd.UID:
		return false
	case made == crd:
		return true
	case equality.Semantic.DeepEqual(made.Spec, crd.Spec) && equality.Semantic.DeepEqual(made.Status.AcceptedNames, crd.Status.AcceptedNames):
		l.crd.Store(crd) // the next request compares pointers
		return true
	}
	return false
}

// newCustomResourceListHandler returns k8s.io/apiserver's LIST handler for
// the objects of kind (a version of crd, stored in s), and its request
// scope: built as apiextensions-apiserver builds them, but with the
// serializers writing lists from kept encodings and a converter that
// leaves lists already of the requested version as they are.
func newCustomResourceListHandler(crd *apiextensionsv1.CustomResourceDefinition, gr schema.GroupResource, kind schema.GroupVersionKind, s apistorage.Interface,
	encodings *watchcache.Encodings, minRequestTimeout time.Duration,
) (*handlers.RequestScope, http.HandlerFunc, error) {
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	listKind := kind.GroupVersion().WithKind(crd.Status.AcceptedNames.ListKind)
	var selectable []apiextensionsv1.SelectableField
	for _, v := range crd.Spec.Versions {
		if v.Name == kind.Version {
			selectable = v.SelectableFields
		}
	}

	converter, err := newListConverter(crd)
	if err != nil {
		return nil, nil, err
	}
	ns, parameters, typer := newUnstructuredSerializer(kind.GroupVersion(), converter)
	// The table convertor is never called here (tables are
	// apiextensions-apiserver's); negotiation only needs to know there is one.
	tables, err := tableconvertor.New(nil)
	if err != nil {
		return nil, nil, err
	}
	scope := &handlers.RequestScope{
		Namer:               handlers.ContextBasedNaming{Namer: meta.NewAccessor(), ClusterScoped: !namespaced},
		Serializer:          WithCachedListEncoding(ns, encodings),
		ParameterCodec:      runtime.NewParameterCodec(parameters),
		StandardSerializers: withoutProtobuf(ns.infos),
		Creater:             parameters,
		Convertor:           converter,
		Typer:               typer,
		UnsafeConvertor:     converter,
		Resource:            kind.GroupVersion().WithResource(gr.Resource),
		Kind:                kind,
		HubGroupVersion:     kind.GroupVersion(),
		MetaGroupVersion:    metav1.SchemeGroupVersion,
		TableConvertor:      tables,
	}

	strategy := customresource.NewStrategy(typer, namespaced, kind, nil, nil, nil, nil, nil, selectable)
	prefix := "/" + gr.Group + "/" + gr.Resource
	store := &genericregistry.Store{
		NewFunc: func() runtime.Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(kind)
			return u
		},
		NewListFunc: func() runtime.Object {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(listKind)
			return l
		},
		PredicateFunc:            strategy.MatchCustomResourceDefinitionStorage,
		DefaultQualifiedResource: gr,
		KeyRootFunc:              func(ctx context.Context) string { return prefix },
		KeyFunc: func(ctx context.Context, name string) (string, error) {
			return genericregistry.NoNamespaceKeyFunc(ctx, prefix, name)
		},
		Storage: genericregistry.DryRunnableStorage{Storage: s, Codec: unstructured.UnstructuredJSONScheme},
	}
	if namespaced {
		store.KeyRootFunc = func(ctx context.Context) string { return genericregistry.NamespaceKeyRootFunc(ctx, prefix) }
		store.KeyFunc = func(ctx context.Context, name string) (string, error) {
			return genericregistry.NamespaceKeyFunc(ctx, prefix, name)
		}
	}
	return scope, handlers.ListResource(store, nil, scope, false, minRequestTimeout), nil
}

// listConverter is apiextensions-apiserver's converter for a CRD, except
// that a list whose items are all of the version asked for is returned as
// it is, not copied: the objects of a version's storage are of that
// version already (its codec converts them when it decodes them).
type listConverter struct {
	runtime.ObjectConvertor // apiextensions-apiserver's, which copies first
}

func newListConverter(crd *apiextensionsv1.CustomResourceDefinition) (listConverter, error) {
	factory, err := conversion.NewCRConverterFactory(nil, nil)
	if err != nil {
		return listConverter{}, err
	}
	// A conversion webhook is never called here: a list of another
	// version than asked for is an error (see ConvertToVersion).
	noWebhook := crd.DeepCopy()
	noWebhook.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	safe, _, err := factory.NewConverter(noWebhook)
	if err != nil {
		return listConverter{}, err
	}
	return listConverter{safe}, nil
}

func (c listConverter) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	list, ok := in.(*unstructured.UnstructuredList)
	if !ok {
		return c.ObjectConvertor.ConvertToVersion(in, target)
	}
	gvk := list.GroupVersionKind()
	if to, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk}); !ok || to != gvk {
		return nil, fmt.Errorf("a list of %s cannot be served as %v here", gvk, target)
	}
	for i := range list.Items {
		if v := list.Items[i].GetAPIVersion(); v != gvk.GroupVersion().String() {
			return nil, fmt.Errorf("a list of %s holds an object of %s", gvk, v)
		}
	}
	return list, nil
}

// unstructuredSerializer is the negotiated serializer apiextensions-apiserver
// gives a CRD's handlers, minus decoding (a LIST decodes nothing), and
// strict serializers.
type unstructuredSerializer struct {
	converter runtime.ObjectConvertor
	infos     []runtime.SerializerInfo
}

func (s unstructuredSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.infos }

func (s unstructuredSerializer) EncoderForVersion(encoder runtime.Encoder, gv runtime.GroupVersioner) runtime.Encoder {
	return versioning.NewCodec(encoder, nil, s.converter, apiextensionsapiserver.Scheme, apiextensionsapiserver.Scheme, apiextensionsapiserver.Scheme, gv, nil, "crdNegotiatedSerializer")
}

func (s unstructuredSerializer) DecoderToVersion(decoder runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return decoder
}

// newUnstructuredSerializer returns the serializer apiextensions-apiserver
// makes for gv's custom resources, converting with converter, with the
// scheme of gv's parameters and the typer it makes.
func newUnstructuredSerializer(gv schema.GroupVersion, converter runtime.ObjectConvertor) (unstructuredSerializer, *runtime.Scheme, runtime.ObjectTyper) {
	parameters := runtime.NewScheme()
	parameters.AddUnversionedTypes(gv, &metav1.ListOptions{}, &metav1.GetOptions{}, &metav1.DeleteOptions{})
	typer := apiextensionsapiserver.UnstructuredObjectTyper{Delegate: parameters, UnstructuredTyper: crdserverscheme.NewUnstructuredObjectTyper()}
	return unstructuredSerializer{converter: converter, infos: unstructuredSerializers(typer)}, parameters, typer
}

// unstructuredSerializers are apiextensions-apiserver's media types for
// custom resources (JSON, YAML, and protobuf for the API's own kinds).
func unstructuredSerializers(typer runtime.ObjectTyper) []runtime.SerializerInfo {
	creator := unstructuredCreator{}
	infos := []runtime.SerializerInfo{
		{
			MediaType: runtime.ContentTypeJSON, MediaTypeType: "application", MediaTypeSubType: "json", EncodesAsText: true,
			Serializer:       json.NewSerializerWithOptions(json.DefaultMetaFactory, creator, typer, json.SerializerOptions{StreamingCollectionsEncoding: true}),
			PrettySerializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, creator, typer, json.SerializerOptions{Pretty: true}),
			StreamSerializer: &runtime.StreamSerializerInfo{
				EncodesAsText: true,
				Serializer:    json.NewSerializerWithOptions(json.DefaultMetaFactory, creator, typer, json.SerializerOptions{}),
				Framer:        json.Framer,
			},
		},
		{
			MediaType: runtime.ContentTypeYAML, MediaTypeType: "application", MediaTypeSubType: "yaml", EncodesAsText: true,
			Serializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, creator, typer, json.SerializerOptions{Yaml: true}),
		},
		{
			MediaType: runtime.ContentTypeProtobuf, MediaTypeType: "application", MediaTypeSubType: "vnd.kubernetes.protobuf",
			Serializer: protobuf.NewSerializerWithOptions(creator, typer, protobuf.SerializerOptions{StreamingCollectionsEncoding: true}),
		},
	}
	if utilfeature.DefaultFeatureGate.Enabled(apiserverfeatures.CBORServingAndStorage) {
		infos = append(infos, cbor.NewSerializerInfo(creator, typer))
	}
	return infos
}

func withoutProtobuf(infos []runtime.SerializerInfo) []runtime.SerializerInfo {
	var standard []runtime.SerializerInfo
	for _, info := range infos {
		if info.MediaType != runtime.ContentTypeProtobuf {
			standard = append(standard, info)
		}
	}
	return standard
}

// unstructuredCreator makes unstructured objects of any kind, as
// apiextensions-apiserver's does.
type unstructuredCreator struct{}

func (unstructuredCreator) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

package storage

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
)

// CRDRESTOptionsGetter stores CustomResourceDefinitions as kube-apiserver
// does: JSON, as apiextensions.k8s.io/v1beta1 where that can hold them
// (the more compact form; v1 otherwise), at /registry/apiextensions.k8s.io/<resource>.
type CRDRESTOptionsGetter RESTOptionsGetter

var _ generic.RESTOptionsGetter = CRDRESTOptionsGetter{}

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g CRDRESTOptionsGetter) GetRESTOptions(gr schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	cfg := *g.Config
	cfg.Codec = apiextensionsapiserver.Codecs.LegacyCodec(apiextensionsv1beta1.SchemeGroupVersion, apiextensionsv1.SchemeGroupVersion)
	cfg.EncodeVersioner = runtime.NewMultiGroupVersioner(apiextensionsv1beta1.SchemeGroupVersion, schema.GroupKind{Group: apiextensionsv1beta1.GroupName})
	return restOptions(&cfg, gr, gr.Group+"/"+gr.Resource, g.Decorator, g.GarbageCollection), nil
}

// CustomResourceRESTOptionsGetter stores custom resources as kube-apiserver
// does (apiextensions-apiserver's NewCRDRESTOptionsGetter): unstructured
// JSON at /registry/<group>/<resource>. The CRD handler wraps the codec to
// convert between the CRD's versions and apply its schema.
type CustomResourceRESTOptionsGetter RESTOptionsGetter

var _ generic.RESTOptionsGetter = CustomResourceRESTOptionsGetter{}

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g CustomResourceRESTOptionsGetter) GetRESTOptions(gr schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	cfg := *g.Config
	cfg.Codec = unstructured.UnstructuredJSONScheme
	return restOptions(&cfg, gr, gr.Group+"/"+gr.Resource, g.Decorator, g.GarbageCollection), nil
}

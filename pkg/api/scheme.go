package api

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

var (
	// Scheme knows every served type.
	Scheme = runtime.NewScheme()
	// Codecs encodes and decodes the served types in JSON, YAML, protobuf and CBOR.
	Codecs = serializer.NewCodecFactory(Scheme)
	// ParameterCodec decodes query parameters into options structs.
	ParameterCodec = runtime.NewParameterCodec(Scheme)
)

// StorageVersions are the versions objects are stored in etcd as.
var StorageVersions = []schema.GroupVersion{corev1.SchemeGroupVersion, coordinationv1.SchemeGroupVersion}

// coreTypes and coordinationTypes are registered again as the internal version
// of their group: generic handlers decode to the internal ("hub") version and
// back, and with one Go type behind both the scheme only rewrites the kind.
var (
	coreTypes = []runtime.Object{
		&corev1.Namespace{}, &corev1.NamespaceList{},
		&corev1.ConfigMap{}, &corev1.ConfigMapList{},
		&corev1.Secret{}, &corev1.SecretList{},
		&corev1.Pod{}, &corev1.PodList{},
		&corev1.PodTemplate{}, &corev1.PodTemplateList{},
		&corev1.ServiceAccount{}, &corev1.ServiceAccountList{},
		&corev1.Event{}, &corev1.EventList{},
	}
	coordinationTypes = []runtime.Object{&coordinationv1.Lease{}, &coordinationv1.LeaseList{}}
)

func init() {
	utilruntime.Must(AddToScheme(Scheme))
}

// AddToScheme registers the served types, their internal twins, defaults and
// field label conversions on s.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		coordinationv1.AddToScheme,
		addDefaultingFuncs,
		addFieldLabelConversions,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	s.AddKnownTypes(schema.GroupVersion{Group: corev1.GroupName, Version: runtime.APIVersionInternal}, coreTypes...)
	s.AddKnownTypes(schema.GroupVersion{Group: coordinationv1.GroupName, Version: runtime.APIVersionInternal}, coordinationTypes...)

	// Options and status types every API server registers (as sample-apiserver does).
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	metav1.AddToGroupVersion(s, unversioned)
	s.AddUnversionedTypes(unversioned,
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return nil
}

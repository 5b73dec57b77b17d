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

package kubeapiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientrest "k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	generatedopenapi "github.com/miniapiserver/miniapiserver/pkg/generated/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/server/datadir"
	"github.com/miniapiserver/miniapiserver/pkg/version"
	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// wardle is a tiny extension API server written with k8s.io/apiserver, as
// sample-apiserver is: wardle.example.com/v1alpha1 flunders, read-only, in
// memory; authentication and authorization delegated to the cluster it
// is given (the front proxy's request headers, trusted as
// kube-system/extension-apiserver-authentication says; SubjectAccessReviews).
type wardle struct {
	// caPEM signs its serving certificate, for wardle.default.svc.
	caPEM []byte
	port  int
	store *flunders
	// server serves wardle's handler; stopCAs stops the controllers that
	// read the cluster's CAs.
	server  *httptest.Server
	stopCAs context.CancelFunc
}

var wardleGV = schema.GroupVersion{Group: "wardle.example.com", Version: "v1alpha1"}

// startWardle starts wardle, delegating to the cluster admin reaches, and
// stops it when the test ends (or on stop).
func startWardle(t *testing.T, admin *clientrest.Config, flunderNames ...string) *wardle {
	t.Helper()
	dir := t.TempDir()
	ca := pkitest.NewCA(t, "wardle-ca")
	cert, key := ca.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "wardle"}, DNSNames: []string{"wardle.default.svc"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &wardle{caPEM: ca.CertPEM(), port: ln.Addr().(*net.TCPAddr).Port, store: &flunders{}}
	for _, name := range flunderNames {
		w.store.items = append(w.store.items, flunder{TypeMeta: metav1.TypeMeta{APIVersion: wardleGV.String(), Kind: "Flunder"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: metav1.Now()}})
	}

	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(wardleGV.WithKind("Flunder"), &flunder{})
	scheme.AddKnownTypeWithName(wardleGV.WithKind("FlunderList"), &flunderList{})
	metav1.AddToGroupVersion(scheme, wardleGV)
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"}) // the options, as sample-apiserver's scheme
	if err := metainternalversion.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	scheme.AddUnversionedTypes(schema.GroupVersion{Version: "v1"}, &metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	codecs := serializer.NewCodecFactory(scheme)
	cfg := genericapiserver.NewRecommendedConfig(codecs)
	cfg.EffectiveVersion = version.EffectiveVersion()
	cfg.FeatureGate = utilfeature.DefaultFeatureGate
	// Its OpenAPI v3: server-side apply's schemas, and the aggregator's.
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(wardleDefinitions, openapinamer.NewDefinitionNamer(scheme))
	secure := genericoptions.NewSecureServingOptions().WithLoopback()
	secure.Listener = ln
	secure.ServerCert.CertKey.CertFile = pkitest.WriteFile(t, dir, "wardle.crt", cert)
	secure.ServerCert.CertKey.KeyFile = pkitest.WriteFile(t, dir, "wardle.key", key)
	kubeconfig := writeKubeconfig(t, dir, admin)
	authn := genericoptions.NewDelegatingAuthenticationOptions()
	authn.RemoteKubeConfigFile = kubeconfig
	authz := genericoptions.NewDelegatingAuthorizationOptions()
	authz.RemoteKubeConfigFile = kubeconfig
	if err := secure.ApplyTo(&cfg.SecureServing, &cfg.LoopbackClientConfig); err != nil {
		t.Fatal(err)
	}
	if err := authn.ApplyTo(&cfg.Authentication, cfg.SecureServing, nil); err != nil {
		t.Fatal(err)
	}
	if err := authz.ApplyTo(&cfg.Authorization); err != nil {
		t.Fatal(err)
	}
	server, err := cfg.Complete().New("wardle", genericapiserver.NewEmptyDelegate())
	if err != nil {
		t.Fatal(err)
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(wardleGV.Group, scheme, metav1.ParameterCodec, codecs)
	group.VersionedResourcesStorageMap[wardleGV.Version] = map[string]rest.Storage{"flunders": w.store}
	if err := server.InstallAPIGroup(&group); err != nil {
		t.Fatal(err)
	}
	// Served by an httptest server, not the generic server's Serve: that
	// starts its serving certificate's controller before it has finished
	// writing the TLS config the controller reads (a race k8s.io/apiserver
	// 0.37 has). The client CAs of the TLS handshake are then ours to run:
	// the cluster's, which authentication verifies client certificates by.
	ctx, stopCAs := context.WithCancel(context.Background())
	w.stopCAs = stopCAs
	if r, ok := cfg.SecureServing.ClientCA.(dynamiccertificates.ControllerRunner); ok {
		if err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		go r.Run(ctx, 1)
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	w.server = httptest.NewUnstartedServer(server.PrepareRun().Handler)
	w.server.Listener.Close()
	w.server.Listener = ln
	w.server.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequestClientCert}
	w.server.StartTLS()
	t.Cleanup(w.Stop)
	return w
}

// Stop stops wardle (its listener closed, its requests done); a second
// Stop does nothing.
func (w *wardle) Stop() {
	w.server.Close()
	w.stopCAs()
}

// writeKubeconfig writes a kubeconfig of cfg in dir.
func writeKubeconfig(t *testing.T, dir string, cfg *clientrest.Config) string {
	t.Helper()
	path := dir + "/kubeconfig"
	if err := datadir.WriteKubeconfig(path, cfg); err != nil {
		t.Fatal(err)
	}
	return path
}

// wardleDefinitions are the OpenAPI definitions of flunders, and of the
// types they refer to.
func wardleDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := generatedopenapi.GetOpenAPIDefinitions(ref)
	str := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}}}
	object := func(props map[string]spec.Schema, deps ...string) common.OpenAPIDefinition {
		props["apiVersion"], props["kind"] = str, str
		return common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: props}}, Dependencies: deps}
	}
	objectMeta, listMeta := metav1.ObjectMeta{}.OpenAPIModelName(), metav1.ListMeta{}.OpenAPIModelName()
	f, list := flunder{}.OpenAPIModelName(), flunderList{}.OpenAPIModelName()
	defs[f] = object(map[string]spec.Schema{"metadata": {SchemaProps: spec.SchemaProps{Ref: ref(objectMeta)}}}, objectMeta)
	defs[list] = object(map[string]spec.Schema{"metadata": {SchemaProps: spec.SchemaProps{Ref: ref(listMeta)}},
		"items": {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(f)}}}}}},
		listMeta, f)
	return defs
}

type flunder struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// OpenAPIModelName is flunder's OpenAPI definition name, which the
// scheme's (the OpenAPI namer's) name for its kind is too.
func (flunder) OpenAPIModelName() string { return "com.example.wardle.v1alpha1.Flunder" }

func (flunderList) OpenAPIModelName() string { return "com.example.wardle.v1alpha1.FlunderList" }

func (f *flunder) DeepCopyObject() runtime.Object {
	out := *f
	f.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

type flunderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []flunder `json:"items"`
}

func (l *flunderList) DeepCopyObject() runtime.Object {
	out := *l
	out.Items = nil
	for _, f := range l.Items {
		out.Items = append(out.Items, *f.DeepCopyObject().(*flunder))
	}
	return &out
}

// flunders is wardle's storage: fixed flunders, and the users who read them.
type flunders struct {
	items []flunder
	mu    sync.Mutex // guards users
	users []string
}

var (
	_ rest.Getter               = (*flunders)(nil)
	_ rest.Lister               = (*flunders)(nil)
	_ rest.Scoper               = (*flunders)(nil)
	_ rest.SingularNameProvider = (*flunders)(nil)
)

func (*flunders) New() runtime.Object     { return &flunder{} }
func (*flunders) NewList() runtime.Object { return &flunderList{} }
func (*flunders) Destroy()                {}
func (*flunders) NamespaceScoped() bool   { return true }
func (*flunders) GetSingularName() string { return "flunder" }
func (s *flunders) readers() []string     { s.mu.Lock(); defer s.mu.Unlock(); return slices.Clone(s.users) }
func (s *flunders) read(ctx context.Context) {
	if u, ok := genericapirequest.UserFrom(ctx); ok {
		s.mu.Lock()
		s.users = append(s.users, u.GetName())
		s.mu.Unlock()
	}
}

func (s *flunders) List(ctx context.Context, _ *metainternalversion.ListOptions) (runtime.Object, error) {
	s.read(ctx)
	list := &flunderList{}
	for _, f := range s.items {
		if ns, _ := genericapirequest.NamespaceFrom(ctx); ns == "" || ns == f.Namespace {
			list.Items = append(list.Items, f)
		}
	}
	return list, nil
}

func (s *flunders) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	s.read(ctx)
	for _, f := range s.items {
		if ns, _ := genericapirequest.NamespaceFrom(ctx); f.Name == name && f.Namespace == ns {
			return f.DeepCopyObject(), nil
		}
	}
	return nil, apierrors.NewNotFound(wardleGV.WithResource("flunders").GroupResource(), name)
}

func (s *flunders) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	return rest.NewDefaultTableConvertor(wardleGV.WithResource("flunders").GroupResource()).ConvertToTable(ctx, obj, opts)
}

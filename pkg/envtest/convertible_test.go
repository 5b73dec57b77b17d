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

package envtest

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// hubObject stands for controller-runtime's conversion.Hub.
type hubObject interface {
	runtime.Object
	Hub()
}

// Widget v2 is the hub; v1 converts to and from it.
type widgetV2 struct{ metav1.TypeMeta }

func (w *widgetV2) DeepCopyObject() runtime.Object { c := *w; return &c }
func (*widgetV2) Hub()                             {}

type widgetV1 struct{ metav1.TypeMeta }

func (w *widgetV1) DeepCopyObject() runtime.Object { c := *w; return &c }
func (*widgetV1) ConvertTo(hubObject) error        { return nil }
func (*widgetV1) ConvertFrom(hubObject) error      { return nil }

// Gadget has versions, neither of them a hub.
type gadget struct{ metav1.TypeMeta }

func (g *gadget) DeepCopyObject() runtime.Object { c := *g; return &c }

func TestConvertibleKinds(t *testing.T) {
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, &widgetV1{})
	s.AddKnownTypeWithName(schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}, &widgetV2{})
	s.AddKnownTypeWithName(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}, &gadget{})
	s.AddKnownTypeWithName(schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Gadget"}, &gadget{})
	if diff := cmp.Diff([]schema.GroupKind{{Group: "example.com", Kind: "Widget"}}, convertibleKinds(s)); diff != "" {
		t.Errorf("convertible kinds (-want +got):\n%s", diff)
	}
	if got := convertibleKinds(nil); got != nil {
		t.Errorf("no scheme: %v", got)
	}
}

// defaultedWidget is the kind TestDefaultSchemes registers in client-go's
// scheme.Scheme, when the package is initialized: TestMain's suite server
// decodes with that scheme from then on, and a registration during the
// tests would race with it.
var defaultedWidget = func() schema.GroupKind {
	gk := schema.GroupKind{Group: "defaulted.example.com", Kind: "Widget"}
	scheme.Scheme.AddKnownTypeWithName(gk.WithVersion("v1"), &widgetV1{})
	scheme.Scheme.AddKnownTypeWithName(gk.WithVersion("v2"), &widgetV2{})
	return gk
}()

// TestDefaultSchemes: with no Scheme (kubebuilder's suites set none), the
// kinds a suite registers in client-go's scheme.Scheme are found, as
// envtest finds them; CRDInstallOptions.Scheme, if set, is used instead.
func TestDefaultSchemes(t *testing.T) {
	gk := defaultedWidget
	te := &Environment{}
	te.defaultSchemes()
	if te.Scheme != scheme.Scheme || te.CRDInstallOptions.Scheme != scheme.Scheme {
		t.Fatalf("schemes: %p and %p, want client-go's %p", te.Scheme, te.CRDInstallOptions.Scheme, scheme.Scheme)
	}
	if got := convertibleKinds(te.CRDInstallOptions.Scheme); !slices.Contains(got, gk) {
		t.Errorf("convertible kinds of the default scheme: %v, want %v among them", got, gk)
	}
	own := runtime.NewScheme()
	te = &Environment{CRDInstallOptions: CRDInstallOptions{Scheme: own}}
	te.defaultSchemes()
	if te.Scheme != scheme.Scheme || te.CRDInstallOptions.Scheme != own {
		t.Errorf("schemes: %p and %p, want client-go's and the CRD options' own", te.Scheme, te.CRDInstallOptions.Scheme)
	}
}

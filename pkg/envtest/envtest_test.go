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

package envtest_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/envtest"
)

const crdBases = "../../test/integration/testdata/kubebuilder/config/crd/bases"

// suite is the Environment TestMain starts for every test of the package,
// as a suite without Ginkgo starts envtest.
var suite *envtest.Environment

func TestMain(m *testing.M) {
	suite = &envtest.Environment{CRDDirectoryPaths: []string{crdBases}, ErrorIfCRDPathMissing: true}
	if _, err := suite.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := suite.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func TestTheSuiteServerServesItsCRDs(t *testing.T) {
	client := apiextensionsclient.NewForConfigOrDie(suite.Config)
	crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), "crontabs.stable.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	established := false
	for _, c := range crd.Status.Conditions {
		established = established || c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
	}
	if !established {
		t.Errorf("CRD %s is not Established after Start", crd.Name)
	}
	// As envtest's, Start sets CRDs to what it installed, from the paths too.
	var names []string
	for _, c := range suite.CRDs {
		names = append(names, c.Name)
	}
	if !slices.Contains(names, crd.Name) {
		t.Errorf("suite.CRDs after Start: %v, want %s among them", names, crd.Name)
	}
	// The kubeconfig Start sets works as the config does.
	cfg, err := clientcmd.RESTConfigFromKubeConfig(suite.KubeConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(t.Context(), corev1.NamespaceDefault, metav1.GetOptions{}); err != nil {
		t.Errorf("through KubeConfig: %v", err)
	}
}

func TestCRDPaths(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     envtest.Environment
		wantErr string // "" for a start
	}{
		{"a missing path is skipped", envtest.Environment{CRDDirectoryPaths: []string{"no/such/dir", crdBases}}, ""},
		{"a missing path is an error when asked", envtest.Environment{CRDDirectoryPaths: []string{"no/such/dir"}, ErrorIfCRDPathMissing: true}, "no/such/dir"},
		{"so in CRDInstallOptions", envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{Paths: []string{"no/such/dir"}, ErrorIfPathMissing: true}}, "no/such/dir"},
		{"CRD objects", envtest.Environment{CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD()}}, ""},
		{"a missing webhook path is an error", envtest.Environment{WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{"no/such/hooks"}}}, "no/such/hooks"},
		{"unless ignored", envtest.Environment{CRDDirectoryPaths: []string{crdBases},
			WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{"no/such/hooks"}, IgnoreErrorIfPathMissing: true}}, ""},
		{"an invalid webhook fails Start", envtest.Environment{WebhookInstallOptions: envtest.WebhookInstallOptions{
			ValidatingWebhooks: []*admissionv1.ValidatingWebhookConfiguration{{
				ObjectMeta: metav1.ObjectMeta{Name: "v"},
				Webhooks: []admissionv1.ValidatingWebhook{{Name: "v.example.com", AdmissionReviewVersions: []string{"v1"},
					ClientConfig: admissionv1.WebhookClientConfig{URL: new("https://127.0.0.1:1/validate")}}},
			}}}}, "webhooks[0].sideEffects: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			_, err := env.Start()
			defer func() {
				if err := env.Stop(); err != nil {
					t.Error(err)
				}
			}()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Start: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Start: got %v, want an error with %q", err, tc.wantErr)
			case err != nil:
				return
			}
			client := apiextensionsclient.NewForConfigOrDie(env.Config)
			list, err := client.ApiextensionsV1().CustomResourceDefinitions().List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 1 {
				t.Errorf("got %d CRDs, want 1", len(list.Items))
			}
		})
	}
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}

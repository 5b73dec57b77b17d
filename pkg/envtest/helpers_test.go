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
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/envtest"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestInstallAndUninstallCRDs: the package's CRD functions, as a suite
// calls envtest's: InstallCRDs serves the CRDs of a path, WaitForCRDs
// waits for served ones and times out on others, UninstallCRDs removes
// them, ReadCRDFiles refuses a missing path when told to.
func TestInstallAndUninstallCRDs(t *testing.T) {
	s := testserver.Start(t)
	opts := envtest.CRDInstallOptions{Paths: []string{crdBases, "missing-dir"}}
	crds, err := envtest.InstallCRDs(s.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	if names := crdNames(crds); !slices.Equal(names, []string{"crontabs.stable.example.com"}) {
		t.Errorf("InstallCRDs returned %v, want the CRD of %s", names, crdBases)
	}
	if _, err := discovery.NewDiscoveryClientForConfigOrDie(s.Config).ServerResourcesForGroupVersion("stable.example.com/v1"); err != nil {
		t.Errorf("discovery of the installed CRD's group: %v", err)
	}
	if err := envtest.WaitForCRDs(s.Config, crds, envtest.CRDInstallOptions{}); err != nil {
		t.Errorf("WaitForCRDs of served CRDs: %v", err)
	}
	if err := envtest.CreateCRDs(s.Config, crds); err != nil { // installed already: updated
		t.Errorf("CreateCRDs of existing CRDs: %v", err)
	}

	if err := envtest.UninstallCRDs(s.Config, opts); err != nil {
		t.Fatal(err)
	}
	// One read: a second one could find the CRD gone meanwhile.
	crd, err := apiextensionsclient.NewForConfigOrDie(s.Config).ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), crds[0].Name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) && (err != nil || crd.DeletionTimestamp == nil) {
		t.Errorf("the CRD after UninstallCRDs: %v, want it gone or terminating", err)
	}
	if err := envtest.UninstallCRDs(s.Config, opts); err != nil {
		t.Errorf("UninstallCRDs of CRDs already gone: %v", err)
	}
	unserved := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "never.example.com",
		Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things"}, Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true}}}}
	err = envtest.WaitForCRDs(s.Config, []*apiextensionsv1.CustomResourceDefinition{unserved}, envtest.CRDInstallOptions{MaxTime: 300 * time.Millisecond, PollInterval: 50 * time.Millisecond})
	if err == nil {
		t.Error("WaitForCRDs of a CRD never installed: no error, want its timeout")
	}
	if err := envtest.ReadCRDFiles(&envtest.CRDInstallOptions{Paths: []string{"missing-dir"}, ErrorIfPathMissing: true}); err == nil {
		t.Error("ReadCRDFiles of a missing path with ErrorIfPathMissing: no error")
	}
}

func crdNames(crds []*apiextensionsv1.CustomResourceDefinition) []string {
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
	}
	return names
}

// TestWebhookInstall: WebhookInstallOptions.Install prepares the options
// and stores the configurations pointed at the suite's webhook server;
// WaitForWebhooks then returns, and times out for one never installed.
func TestWebhookInstall(t *testing.T) {
	s := testserver.Start(t)
	hook := &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "suite-validator"},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name: "validate.example.invalid", SideEffects: ptr.To(admissionv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			FailurePolicy: ptr.To(admissionv1.Ignore),
			ClientConfig:  admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "system", Name: "webhook", Path: ptr.To("/validate")}},
		}},
	}
	opts := &envtest.WebhookInstallOptions{ValidatingWebhooks: []*admissionv1.ValidatingWebhookConfiguration{hook}}
	t.Cleanup(func() { opts.Cleanup() })
	if err := opts.Install(s.Config); err != nil {
		t.Fatal(err)
	}
	if len(opts.LocalServingCAData) == 0 || opts.LocalServingPort == 0 {
		t.Errorf("Install left the options unprepared: port %d, %d bytes of CA", opts.LocalServingPort, len(opts.LocalServingCAData))
	}
	if err := envtest.WaitForWebhooks(s.Config, nil, opts.ValidatingWebhooks, *opts); err != nil {
		t.Errorf("WaitForWebhooks of installed webhooks: %v", err)
	}
	other := &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "never-installed"}}
	short := envtest.WebhookInstallOptions{MaxTime: 300 * time.Millisecond, PollInterval: 50 * time.Millisecond}
	if err := envtest.WaitForWebhooks(s.Config, nil, []*admissionv1.ValidatingWebhookConfiguration{other}, short); err == nil {
		t.Error("WaitForWebhooks of a configuration never installed: no error, want its timeout")
	}
}

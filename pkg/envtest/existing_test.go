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
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/envtest"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestUseExistingCluster: as envtest's, an Environment on an existing
// cluster (its preset Config) installs its CRDs and webhook configurations
// there, sets CRDs and a KubeConfig that reaches it, and its Stop leaves
// the cluster running.
func TestUseExistingCluster(t *testing.T) {
	existing := testserver.Start(t)
	hook := &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "suite-validator"},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name: "validate.example.invalid", SideEffects: ptr.To(admissionv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			FailurePolicy: ptr.To(admissionv1.Ignore),
			ClientConfig:  admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "system", Name: "webhook", Path: ptr.To("/validate")}},
			Rules: []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{APIGroups: []string{"example.invalid"}, APIVersions: []string{"v1"}, Resources: []string{"things"}}}},
		}},
	}
	te := &envtest.Environment{UseExistingCluster: ptr.To(true), Config: existing.Config, CRDDirectoryPaths: []string{crdBases}, ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{ValidatingWebhooks: []*admissionv1.ValidatingWebhookConfiguration{hook}}}
	if _, err := te.Start(); err != nil {
		t.Fatal(err)
	}
	crd, err := apiextensionsclient.NewForConfigOrDie(existing.Config).ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), "crontabs.stable.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the suite's CRD on the existing cluster: %v", err)
	}
	if len(te.CRDs) == 0 || te.CRDs[0].Name != crd.Name {
		t.Errorf("te.CRDs: %v, want %s", te.CRDs, crd.Name)
	}
	client := kubernetes.NewForConfigOrDie(existing.Config)
	got, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), hook.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the suite's webhook configuration on the existing cluster: %v", err)
	}
	if url := ptr.Deref(got.Webhooks[0].ClientConfig.URL, ""); url == "" || len(got.Webhooks[0].ClientConfig.CABundle) == 0 {
		t.Errorf("webhook client config %+v: want it pointed at the suite's webhook server, with its CA", got.Webhooks[0].ClientConfig)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(te.KubeConfig)
	if err != nil {
		t.Fatalf("te.KubeConfig: %v", err)
	}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(t.Context(), corev1.NamespaceDefault, metav1.GetOptions{}); err != nil {
		t.Errorf("through te.KubeConfig: %v", err)
	}
	if err := te.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Namespaces().Get(t.Context(), corev1.NamespaceDefault, metav1.GetOptions{}); err != nil {
		t.Errorf("the existing cluster after Stop: %v", err)
	}
}

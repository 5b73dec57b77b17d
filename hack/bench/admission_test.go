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

package bench

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

const (
	// warmup is how many untimed requests precede a timed loop.
	warmup = 50
	// forbidden is the ConfigMap name the policy and the webhook deny:
	// creating it shows whether they are in effect yet.
	forbidden = "forbidden-by-admission"
	// admissionLabel's value, an admission= variant, selects what admits a
	// ConfigMap.
	admissionLabel = "bench-admission"
)

var admissionVariants = []string{"none", "one-validatingadmissionpolicy", "one-validating-webhook"}

// BenchmarkCreateWithAdmission times ConfigMap creates, one at a time, with
// no admission configured, with one ValidatingAdmissionPolicy (one CEL
// expression, a binding) and with one validating webhook served by the
// benchmark over TLS. The policy and the webhook are both installed on one
// server, each selecting by label the ConfigMaps of its variant.
func BenchmarkCreateWithAdmission(b *testing.B) {
	hook := httptest.NewTLSServer(http.HandlerFunc(denyForbidden))
	b.Cleanup(hook.Close)
	servers := startEach(b, func(driver.Kind) string { return b.TempDir() })
	for _, s := range servers {
		if err := installAdmission(b.Context(), s.Client(), hook); err != nil {
			b.Fatal(err)
		}
	}
	for _, variant := range admissionVariants {
		b.Run("admission="+variant, func(b *testing.B) {
			onEach(b, func(b *testing.B, kind driver.Kind) {
				loop(b, func(i int) error {
					name := fmt.Sprintf("admission-%s-%05d", variant, i)
					return createConfigMap(b.Context(), servers[kind].Client(), name, map[string]string{admissionLabel: variant}, false)
				})
			})
		})
	}
}

// loop calls do warmup times, then in b.Loop; i numbers the calls from 0.
func loop(b *testing.B, do func(i int) error) {
	for i := 0; i < warmup || b.Loop(); i++ {
		if err := do(i); err != nil {
			b.Fatal(err)
		}
	}
}

// createConfigMap creates a small ConfigMap in driver.Namespace, or only
// tries to with dryRun.
func createConfigMap(ctx context.Context, c kubernetes.Interface, name string, labels map[string]string, dryRun bool) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
	var opts metav1.CreateOptions
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err := c.CoreV1().ConfigMaps(driver.Namespace).Create(ctx, cm, opts)
	return err
}

// installAdmission installs the policy with its binding and the webhook
// served by hook, and waits until both deny forbidden.
func installAdmission(ctx context.Context, c kubernetes.Interface, hook *httptest.Server) error {
	selector := func(variant string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{admissionLabel: variant}}
	}
	creates := admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: creates}}},
			Validations:      []admissionregistrationv1.Validation{{Expression: "object.metadata.name != '" + forbidden + "'"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "bench",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    &admissionregistrationv1.MatchResources{ObjectSelector: selector(admissionVariants[1])},
		},
	}
	url, none, fail := hook.URL+"/validate", admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.Fail
	webhook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "bench.example.com", Rules: []admissionregistrationv1.RuleWithOperations{creates},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL: &url, CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw}),
			},
			ObjectSelector: selector(admissionVariants[2]),
			SideEffects:    &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	admission := c.AdmissionregistrationV1()
	if _, err := admission.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := admission.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := admission.ValidatingWebhookConfigurations().Create(ctx, webhook, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, variant := range admissionVariants[1:] {
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			err := createConfigMap(ctx, c, forbidden, map[string]string{admissionLabel: variant}, true)
			switch {
			case err == nil:
				return false, nil
			case apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
				return true, nil
			}
			return false, err
		})
		if err != nil {
			return fmt.Errorf("waiting for %s to deny: %w", variant, err)
		}
	}
	return nil
}

// denyForbidden is a validating webhook: it denies forbidden and allows
// everything else.
func denyForbidden(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: review.Request.Name != forbidden}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

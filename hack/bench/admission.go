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

package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
)

// admissionResult is the admission section: the latency of ConfigMap
// creates with no admission configured, with one ValidatingAdmissionPolicy
// and with one validating webhook (served by this process), on
// miniapiserver and, with -upstream, on kube-apiserver.
type admissionResult struct {
	ours     admissionRun
	upstream *admissionRun
}

// admissionRun is one server's create latencies, in order, per variant.
type admissionRun struct {
	none, policy, webhook []time.Duration
}

// admissionVariants name admissionRun's variants, in the order they run.
var admissionVariants = []string{"none", "one ValidatingAdmissionPolicy", "one validating webhook"}

func (r admissionRun) variants() [][]time.Duration {
	return [][]time.Duration{r.none, r.policy, r.webhook}
}

// forbidden is the name of the ConfigMap the policy and the webhook deny:
// creating it shows whether they are in effect yet.
const forbidden = "forbidden-by-admission"

// benchAdmission times cfg.admissionCreates ConfigMap creates per variant
// on miniapiserver, then on kube-apiserver (with ub), each on a fresh
// data dir.
func benchAdmission(ctx context.Context, cfg config, root string, ub *upstreamBench) (res admissionResult, err error) {
	hook, err := startDenyingWebhook()
	if err != nil {
		return admissionResult{}, fmt.Errorf("admission: %w", err)
	}
	defer hook.close()
	res.ours, err = onOurs(ctx, cfg, root, "admission", func(s *server) (admissionRun, error) { return admissionOnce(ctx, cfg, s, hook) })
	if err != nil {
		return admissionResult{}, err
	}
	progressAdmission("miniapiserver", res.ours)
	if ub == nil {
		return res, nil
	}
	up, err := onUpstream(ctx, ub, "admission", func(s *server) (admissionRun, error) { return admissionOnce(ctx, cfg, s, hook) })
	if err != nil {
		return admissionResult{}, err
	}
	progressAdmission("kube-apiserver", up)
	res.upstream = &up
	return res, nil
}

func progressAdmission(name string, r admissionRun) {
	progress("admission (%s): create medians %s with none, %s with a policy, %s with a webhook", name,
		fmtDuration(median(r.none)), fmtDuration(median(r.policy)), fmtDuration(median(r.webhook)))
}

// admissionOnce installs the policy (with its binding) and the webhook,
// each for the ConfigMaps labelled with its variant, waits until both are
// in effect (they deny forbidden), then times creates of the three
// variants in turn, so that all three see the same server state.
func admissionOnce(ctx context.Context, cfg config, s *server, hook *denyingWebhook) (run admissionRun, err error) {
	client, err := s.client()
	if err != nil {
		return admissionRun{}, err
	}
	admission := client.AdmissionregistrationV1()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: configMapCreates,
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "object.metadata.name != '" + forbidden + "'"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "bench",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    &admissionregistrationv1.MatchResources{ObjectSelector: variantSelector(1)},
		},
	}
	none, fail := admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.Fail
	webhook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "bench.example.com", Rules: []admissionregistrationv1.RuleWithOperations{configMapCreates},
			ClientConfig:   admissionregistrationv1.WebhookClientConfig{URL: &hook.url, CABundle: hook.caBundle},
			ObjectSelector: variantSelector(2),
			SideEffects:    &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := admission.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return admissionRun{}, err
	}
	if _, err := admission.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return admissionRun{}, err
	}
	if _, err := admission.ValidatingWebhookConfigurations().Create(ctx, webhook, metav1.CreateOptions{}); err != nil {
		return admissionRun{}, err
	}
	for v := 1; v < len(admissionVariants); v++ {
		if err := awaitDenial(ctx, client, v); err != nil {
			return admissionRun{}, fmt.Errorf("%s: %w", admissionVariants[v], err)
		}
	}
	times, err := timeCreates(ctx, client, cfg.admissionCreates)
	if err != nil {
		return admissionRun{}, err
	}
	return admissionRun{none: times[0], policy: times[1], webhook: times[2]}, nil
}

var configMapCreates = admissionregistrationv1.RuleWithOperations{
	Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
	Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
}

// variantLabel is the label whose value, a variant's index, selects what
// admits a ConfigMap.
const variantLabel = "bench-admission"

func variantSelector(v int) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{variantLabel: fmt.Sprint(v)}}
}

// awaitDenial waits until creating forbidden in variant v is denied.
func awaitDenial(ctx context.Context, client kubernetes.Interface, v int) error {
	cms := client.CoreV1().ConfigMaps(namespace)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: forbidden, Labels: map[string]string{variantLabel: fmt.Sprint(v)}}}
	return wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		switch {
		case err == nil:
			return false, nil
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
			return true, nil
		}
		return false, err
	})
}

// timeCreates creates n ConfigMaps of each variant (after n/10 untimed
// ones), one after another, the variants in turn, and returns how long
// each took, per variant.
func timeCreates(ctx context.Context, client kubernetes.Interface, n int) ([][]time.Duration, error) {
	cms := client.CoreV1().ConfigMaps(namespace)
	warmup := n / 10
	times := make([][]time.Duration, len(admissionVariants))
	for i := range warmup + n {
		for v := range admissionVariants {
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("admission-%d-%05d", v, i), Labels: map[string]string{variantLabel: fmt.Sprint(v)}},
				Data:       map[string]string{"k": "v"},
			}
			began := time.Now()
			if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				return nil, fmt.Errorf("create (%s): %w", admissionVariants[v], err)
			}
			if i >= warmup {
				times[v] = append(times[v], time.Since(began))
			}
		}
	}
	return times, nil
}

// denyingWebhook is a validating webhook served by this process over TLS:
// it denies forbidden and allows everything else.
type denyingWebhook struct {
	url      string
	caBundle []byte
	srv      *http.Server
}

func startDenyingWebhook() (*denyingWebhook, error) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		return nil, err
	}
	h := &denyingWebhook{url: "https://" + l.Addr().String() + "/validate", caBundle: certPEM}
	h.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: review.Request.Name != forbidden}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	})}
	go func() { _ = h.srv.Serve(l) }()
	return h, nil
}

func (h *denyingWebhook) close() { _ = h.srv.Close() }

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

package admission

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

var (
	crdPath  = filepath.Join("..", "testdata", "kubebuilder", "config", "crd", "bases")
	crontabs = schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}
	none     = admissionregistrationv1.SideEffectClassNone
)

// rule matches CREATEs of resources in group/v1.
func rule(group string, resources ...string) []admissionregistrationv1.RuleWithOperations {
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: resources},
	}}
}

// service is a kubebuilder-style Service reference to the webhook server.
func service(path string) admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
		Namespace: "system", Name: "webhook-service", Path: &path}}
}

// closedURL is an https URL nothing listens on.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "https://" + l.Addr().String() + "/"
}

func selector(key string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{key: "yes"}}
}

func labelled(name string, labels ...string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Labels: map[string]string{}}
	for _, l := range labels {
		m.Labels[l] = "yes"
	}
	return m
}

// TestWebhooks installs webhooks as envtest does (Service references
// pointed at the test's webhook server) and checks what kube-apiserver
// does with them: a mutating webhook patches built-in and custom
// resources, dry-run included; a validating one denies with its message;
// failurePolicy decides what an unreachable webhook means.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	fail, ignore := admissionregistrationv1.Fail, admissionregistrationv1.Ignore
	down := closedURL(t)
	hooks := &testserver.WebhookInstallOptions{
		MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{{
			ObjectMeta: metav1.ObjectMeta{Name: "mutating"},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{
				Name: "label.example.com", ClientConfig: service("/mutate"), Rules: rule("*", "configmaps", "crontabs"),
				ObjectSelector: selector("mutate"), SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			}},
		}},
		ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{{
			ObjectMeta: metav1.ObjectMeta{Name: "validating"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{
				{
					Name: "deny.example.com", ClientConfig: service("/validate"), Rules: rule("", "configmaps"),
					ObjectSelector: selector("deny"), SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
				},
				{
					Name: "down-fail.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &down}, Rules: rule("", "secrets"),
					FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
				},
				{
					Name: "down-ignore.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &down}, Rules: rule("", "serviceaccounts"),
					FailurePolicy: &ignore, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
				},
			},
		}},
	}
	s := testserver.Start(t, testserver.WithCRDs(crdPath), testserver.WithWebhooks(hooks))
	hs := serveHooks(t, hooks.LocalServingHost, hooks.LocalServingPort, hooks.LocalServingCertDir, map[string]review{
		"/mutate": patch(`[{"op":"add","path":"/metadata/labels/mutated","value":"by-webhook"}]`),
		"/validate": func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "not with deny=yes", Code: 403}}
		},
	})
	client := kubernetes.NewForConfigOrDie(s.Config)
	configMaps := client.CoreV1().ConfigMaps("default")
	ctx := t.Context()

	t.Run("a mutating webhook patches a ConfigMap", func(t *testing.T) {
		got, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: labelled("patched", "mutate")}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Labels["mutated"] != "by-webhook" {
			t.Errorf("labels %v, want mutated=by-webhook", got.Labels)
		}
	})
	t.Run("and a custom resource", func(t *testing.T) {
		ct := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "stable.example.com/v1", "kind": "CronTab",
			"metadata": map[string]any{"name": "patched", "labels": map[string]any{"mutate": "yes"}},
			"spec":     map[string]any{"image": "busybox"},
		}}
		got, err := dynamic.NewForConfigOrDie(s.Config).Resource(crontabs).Namespace("default").Create(ctx, ct, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetLabels()["mutated"] != "by-webhook" {
			t.Errorf("labels %v, want mutated=by-webhook", got.GetLabels())
		}
	})
	t.Run("a dry run is patched and not stored, and the webhook is told", func(t *testing.T) {
		got, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: labelled("dry", "mutate")}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Labels["mutated"] != "by-webhook" {
			t.Errorf("labels %v, want mutated=by-webhook", got.Labels)
		}
		reqs := hs.got("/mutate")
		if last := reqs[len(reqs)-1]; last.DryRun == nil || !*last.DryRun || last.Name != "dry" {
			t.Errorf("the webhook's last request is for %q with dryRun %v, want dry with true", last.Name, last.DryRun)
		}
		if _, err := configMaps.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after a dry run: %v, want NotFound", err)
		}
	})
	t.Run("a validating webhook denies with its message", func(t *testing.T) {
		_, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: labelled("denied", "deny")}, metav1.CreateOptions{})
		checkStatus(t, err, 403, `admission webhook "deny.example.com" denied the request: not with deny=yes`)
	})
	t.Run("failurePolicy Fail: an unreachable webhook fails the request", func(t *testing.T) {
		_, err := client.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
		checkStatus(t, err, 500, `Internal error occurred: failed calling webhook "down-fail.example.com": failed to call webhook: Post "`+down+`?timeout=10s": dial tcp `)
	})
	t.Run("failurePolicy Ignore: an unreachable webhook is skipped", func(t *testing.T) {
		if _, err := client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

// checkStatus checks that err is a Status error with code whose message
// starts with want.
func checkStatus(t *testing.T, err error, code int32, want string) {
	t.Helper()
	var status *apierrors.StatusError
	if !errors.As(err, &status) {
		t.Fatalf("got %v, want a %d Status error", err, code)
	}
	if got := status.ErrStatus; got.Code != code || !strings.HasPrefix(got.Message, want) {
		t.Errorf("got %d %q,\nwant %d %q…", got.Code, got.Message, code, want)
	}
}

// TestServiceReferences calls a webhook that names a Service at the
// address --webhook-service maps it to, checking its certificate against
// the Service's DNS name as kube-apiserver does; a Service not mapped is
// upstream's error for a webhook it cannot call.
func TestServiceReferences(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	crt, key, err := certutil.GenerateSelfSignedCertKey("hooks.webhooks.svc", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.WriteFile(filepath.Join(dir, "tls.crt"), crt, 0o600), os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600)); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().(*net.TCPAddr)
	l.Close()
	serveHooks(t, "127.0.0.1", addr.Port, dir, map[string]review{
		"/validate": func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "denied by the Service's webhook"}}
		},
	})
	s := testserver.Start(t, testserver.WithWebhookService("webhooks", "hooks", 443, addr.String()))
	client := kubernetes.NewForConfigOrDie(s.Config)
	ctx := t.Context()
	path := "/validate"
	webhook := func(name, service string, resource string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name: name, Rules: rule("", resource), SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: crt,
				Service: &admissionregistrationv1.ServiceReference{Namespace: "webhooks", Name: service, Path: &path}},
		}
	}
	_, err = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "by-service"},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{webhook("mapped.example.com", "hooks", "configmaps"), webhook("unmapped.example.com", "nowhere", "secrets")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Admission sees a new configuration once its informer has it.
	var lastErr error
	err = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, lastErr = client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "cm-"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return lastErr != nil, nil
	})
	if err != nil {
		t.Fatalf("the webhook never denied: %v", err)
	}
	checkStatus(t, lastErr, 400, `admission webhook "mapped.example.com" denied the request: denied by the Service's webhook`)
	_, err = client.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	checkStatus(t, err, 500, `Internal error occurred: failed calling webhook "unmapped.example.com": failed to call webhook: Post "https://nowhere.webhooks.svc:443/validate?timeout=10s": service webhooks/nowhere:443 has no address here`)
}

// TestBadWebhooks: a webhook configuration that cannot work is refused
// with a 422 naming the field; one that fails when called (a caBundle
// that is not PEM, a reply that is not an AdmissionReview, no reply within
// its timeout) gets upstream's admission error, and the server serves on.
func TestBadWebhooks(t *testing.T) {
	t.Parallel()
	hooks := &testserver.WebhookInstallOptions{}
	s := testserver.Start(t, testserver.WithWebhooks(hooks))
	mux := http.NewServeMux()
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>not a review</html>")) })
	mux.HandleFunc("/hang", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	serveTLS(t, hooks.LocalServingHost, hooks.LocalServingPort, hooks.LocalServingCertDir, mux)
	client := kubernetes.NewForConfigOrDie(s.Config)
	ctx := t.Context()
	base := "https://" + net.JoinHostPort(hooks.LocalServingHost, strconv.Itoa(hooks.LocalServingPort))
	one := int32(1)
	hook := func(name, url string, caBundle []byte, resource string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name: name, Rules: rule("", resource), SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: &one,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
		}
	}
	configs := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	create := func(name string, hooks ...admissionregistrationv1.ValidatingWebhook) error {
		_, err := configs.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: hooks}, metav1.CreateOptions{})
		return err
	}

	err := create("fragment", hook("fragment.example.com", base+"/validate#here", hooks.LocalServingCAData, "configmaps"))
	checkStatus(t, err, 422, `ValidatingWebhookConfiguration.admissionregistration.k8s.io "fragment" is invalid: webhooks[0].clientConfig.url: Invalid value: "here": fragments are not permitted in the URL`)

	if err := create("broken",
		hook("bad-ca.example.com", base+"/garbage", []byte("not PEM"), "configmaps"),
		hook("garbage.example.com", base+"/garbage", hooks.LocalServingCAData, "secrets"),
		hook("hang.example.com", base+"/hang", hooks.LocalServingCAData, "serviceaccounts"),
	); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		create func(context.Context) error
		code   int32
		want   string
	}{
		{"a caBundle that is not PEM", func(ctx context.Context) error {
			_, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
			return err
		}, 500, `Internal error occurred: failed calling webhook "bad-ca.example.com": could not get REST client: unable to load root certificates: unable to parse bytes as PEM block`},
		{"a reply that is not an AdmissionReview", func(ctx context.Context) error {
			_, err := client.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
			return err
		}, 500, `Internal error occurred: failed calling webhook "garbage.example.com": failed to call webhook: couldn't get version/kind; json parse error: `},
		{"no reply within timeoutSeconds", func(ctx context.Context) error {
			_, err := client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, metav1.CreateOptions{})
			return err
		}, 500, `Internal error occurred: failed calling webhook "hang.example.com": failed to call webhook: Post "` + base + `/hang?timeout=1s": context deadline exceeded`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			// The configuration applies once admission's informer has it.
			_ = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				err = tc.create(ctx)
				return err != nil, nil
			})
			checkStatus(t, err, tc.code, tc.want)
		})
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "still-serving"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("after the failed calls: %v", err)
	}
}

// TestConversionWebhook: WithWebhooks points a CRD's conversion at the
// test's webhook server, as envtest does, and reading a custom resource at
// another version than it is stored at calls it.
func TestConversionWebhook(t *testing.T) {
	t.Parallel()
	hooks := &testserver.WebhookInstallOptions{IgnoreSchemeConvertible: true}
	s := testserver.Start(t, testserver.WithCRDs(crdPath), testserver.WithWebhooks(hooks))
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/convert", func(w http.ResponseWriter, r *http.Request) {
		var review apiextensionsv1.ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not a ConversionReview", http.StatusBadRequest)
			return
		}
		calls.Add(1)
		resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, raw := range review.Request.Objects {
			var u unstructured.Unstructured
			if err := json.Unmarshal(raw.Raw, &u.Object); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			u.SetAPIVersion(review.Request.DesiredAPIVersion)
			u.SetAnnotations(map[string]string{"converted-by": "webhook"})
			out, _ := json.Marshal(u.Object)
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
		}
		review.Response, review.Request = resp, nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	})
	serveTLS(t, hooks.LocalServingHost, hooks.LocalServingPort, hooks.LocalServingCertDir, mux)

	crds := apiextensionsclient.NewForConfigOrDie(s.Config).ApiextensionsV1().CustomResourceDefinitions()
	crd, err := crds.Get(t.Context(), "crontabs.stable.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := crd.Spec.Conversion; c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook.ClientConfig.URL == nil ||
		*c.Webhook.ClientConfig.URL != "https://"+net.JoinHostPort(hooks.LocalServingHost, strconv.Itoa(hooks.LocalServingPort))+"/convert" {
		t.Fatalf("the CRD's conversion: %+v", c)
	}
	client := dynamic.NewForConfigOrDie(s.Config)
	ct := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": "converted"}, "spec": map[string]any{"image": "busybox"},
	}}
	if _, err := client.Resource(crontabs).Namespace("default").Create(t.Context(), ct, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1beta1 := schema.GroupVersionResource{Group: "stable.example.com", Version: "v1beta1", Resource: "crontabs"}
	got, err := client.Resource(v1beta1).Namespace("default").Get(t.Context(), "converted", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetAPIVersion() != "stable.example.com/v1beta1" || got.GetAnnotations()["converted-by"] != "webhook" || calls.Load() == 0 {
		t.Errorf("read as v1beta1: %s with annotations %v after %d conversion calls; want the webhook's conversion", got.GetAPIVersion(), got.GetAnnotations(), calls.Load())
	}
}

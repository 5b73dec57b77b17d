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

package resources

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// defaultServiceCIDR returns the kubernetes ServiceCIDR and its Ready
// condition (nil if it has none).
func defaultServiceCIDR(t *testing.T, client kubernetes.Interface) (*networkingv1.ServiceCIDR, *metav1.Condition) {
	t.Helper()
	cidr, err := client.NetworkingV1().ServiceCIDRs().Get(t.Context(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the default ServiceCIDR: %v", err)
	}
	return cidr, apimeta.FindStatusCondition(cidr.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
}

// checkReady fails t unless ready is upstream's condition on the default
// ServiceCIDR: True, no reason, upstream's message.
func checkReady(t *testing.T, ready *metav1.Condition) {
	t.Helper()
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != "" || ready.Message != "Kubernetes default Service CIDR is ready" || ready.LastTransitionTime.IsZero() {
		t.Errorf("Ready condition: got %+v, want True with upstream's message", ready)
	}
}

// TestServiceCIDR: the server serves networking.k8s.io/v1 ServiceCIDRs and
// makes the default one, kubernetes, of the service range, Ready, before
// it is ready, as kube-apiserver does; other ServiceCIDRs are validated as
// upstream's; a restart leaves an existing default one as it is (but for
// an Unknown Ready condition, which it sets True); cluster IPs come from
// the service range whatever the ServiceCIDRs say.
func TestServiceCIDR(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := testserver.Start(t, func(o *server.Options) { o.DataDir = dir })
	client := kubernetes.NewForConfigOrDie(s.Config)
	cidrs := client.NetworkingV1().ServiceCIDRs()
	ctx := t.Context()

	// Right after start, no polling: the hook holds /readyz back.
	def, ready := defaultServiceCIDR(t, client)
	if !slices.Equal(def.Spec.CIDRs, []string{"10.0.0.0/24"}) {
		t.Errorf("spec.cidrs: got %q, want [10.0.0.0/24]", def.Spec.CIDRs)
	}
	checkReady(t, ready)
	if i := slices.IndexFunc(def.ManagedFields, func(m metav1.ManagedFieldsEntry) bool {
		return m.Manager == "kubernetes-service-cidr-controller" && m.Operation == metav1.ManagedFieldsOperationApply && m.Subresource == "status"
	}); i < 0 {
		t.Errorf("managed fields: got %+v, want the status applied by kubernetes-service-cidr-controller", def.ManagedFields)
	}

	// Another, dual-stack; no controller gives it a condition (the
	// servicecidrs controller is kube-controller-manager's).
	extra := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "extra"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/28", "fd00:10:96::/112"}},
		Status: networkingv1.ServiceCIDRStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Mine", LastTransitionTime: metav1.Now()}}}}
	created, err := cidrs.Create(ctx, extra, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(created.Status.Conditions) != 0 || len(created.Finalizers) != 0 {
		t.Errorf("a created ServiceCIDR: got status %+v, finalizers %v; want neither (status is reset on create)", created.Status, created.Finalizers)
	}
	single, err := cidrs.Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "single"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.97.0.0/28"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("kubectl get servicecidrs", func(t *testing.T) {
		out := framework.Kubectl(t, s, "", "get", "servicecidrs")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 4 {
			t.Fatalf("got\n%s\nwant a header and 3 rows", out)
		}
		for i, want := range [][]string{
			{"NAME", "CIDRS", "AGE"},
			{"extra", "10.96.0.0/28,fd00:10:96::/112"},
			{"kubernetes", "10.0.0.0/24"},
			{"single", "10.97.0.0/28"},
		} {
			got := tableCells(lines[i])
			if i == 0 && !slices.Equal(got, want) || i > 0 && (len(got) != 3 || !slices.Equal(got[:2], want)) {
				t.Errorf("line %d: got %q, want %q (and an age)", i, got, want)
			}
		}
	})

	t.Run("invalid", func(t *testing.T) {
		const oneOfEach = "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"
		for _, tt := range []struct {
			name  string
			cidrs []string
			want  string
		}{
			{"empty", nil, `spec.cidrs: Required value: at least one CIDR required`},
			{"three", []string{"10.1.0.0/24", "10.2.0.0/24", "fd00::/64"}, `spec.cidrs: Invalid value: {"CIDRs":["10.1.0.0/24","10.2.0.0/24","fd00::/64"]}: may only hold up to 2 values`},
			{"not-a-cidr", []string{"10.1.0.0"}, `spec.cidrs[0]: Invalid value: "10.1.0.0": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`},
			{"host-bits", []string{"10.1.0.1/24"}, `spec.cidrs[0]: Invalid value: "10.1.0.1/24": must not have bits set beyond the prefix length`},
			{"two-ipv4", []string{"10.1.0.0/24", "10.2.0.0/24"}, `spec.cidrs: Invalid value: ["10.1.0.0/24","10.2.0.0/24"]: ` + oneOfEach},
		} {
			_, err := cidrs.Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: tt.name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: tt.cidrs}}, metav1.CreateOptions{})
			want := `ServiceCIDR.networking.k8s.io "` + tt.name + `" is invalid: ` + tt.want
			if !apierrors.IsInvalid(err) || err.Error() != want {
				t.Errorf("%s: got %v, want 422 %q", tt.name, err, want)
			}
		}
		_, err := cidrs.Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.1.0.0/24"}}}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain`) {
			t.Errorf("a name that is no DNS subdomain: got %v, want 422", err)
		}
	})

	t.Run("update", func(t *testing.T) {
		changed := created.DeepCopy()
		changed.Spec.CIDRs[1] = "fd00:10:97::/112"
		if _, err := cidrs.Update(ctx, changed, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.cidrs[1]: Invalid value: "fd00:10:97::/112": field is immutable`) {
			t.Errorf("a CIDR changed: got %v, want 422 immutable", err)
		}
		if _, err := cidrs.Patch(ctx, "extra", types.MergePatchType, []byte(`{"spec":{"cidrs":["10.96.0.0/28"]}}`), metav1.PatchOptions{}); !apierrors.IsInvalid(err) ||
			!strings.Contains(err.Error(), `spec.cidrs: Invalid value: ["10.96.0.0/28"]: field is immutable`) {
			t.Errorf("a CIDR removed: got %v, want 422 immutable", err)
		}
		dual, err := cidrs.Patch(ctx, "single", types.MergePatchType, []byte(`{"spec":{"cidrs":["10.97.0.0/28","fd00:10:97::/112"]}}`), metav1.PatchOptions{})
		if err != nil || !slices.Equal(dual.Spec.CIDRs, []string{"10.97.0.0/28", "fd00:10:97::/112"}) {
			t.Errorf("the other family added: got %v, %v; want dual stack", dual, err)
		}
		// /status writes status only.
		st := single.DeepCopy()
		st.ResourceVersion = ""
		st.Spec.CIDRs = []string{"10.98.0.0/28"}
		st.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Terminating", Message: "by hand", LastTransitionTime: metav1.Now()}}
		got, err := cidrs.UpdateStatus(ctx, st, metav1.UpdateOptions{})
		if err != nil || !slices.Equal(got.Spec.CIDRs, dual.Spec.CIDRs) || len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Reason != "Terminating" {
			t.Errorf("a status update: got %v, %v; want the condition, spec kept", got, err)
		}
	})

	// Before the restart: the default one gets a label, its Ready condition Unknown.
	def, _ = defaultServiceCIDR(t, client)
	def.Labels = map[string]string{"kept": "yes"}
	if def, err = cidrs.Update(ctx, def, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	apimeta.SetStatusCondition(&def.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionUnknown, Reason: "Restarting", Message: "unknown"})
	if _, err := cidrs.UpdateStatus(ctx, def, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	// A restart keeps it (UID, label) and sets Unknown to True.
	s = testserver.Start(t, func(o *server.Options) { o.DataDir = dir })
	client = kubernetes.NewForConfigOrDie(s.Config)
	cidrs = client.NetworkingV1().ServiceCIDRs()
	after, ready := defaultServiceCIDR(t, client)
	if after.UID != def.UID || after.Labels["kept"] != "yes" || !slices.Equal(after.Spec.CIDRs, []string{"10.0.0.0/24"}) {
		t.Errorf("after a restart: got uid %s, labels %v, cidrs %v; want uid %s, the label, 10.0.0.0/24", after.UID, after.Labels, after.Spec.CIDRs, def.UID)
	}
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.Message != "Kubernetes default Service CIDR is ready" {
		t.Errorf("after a restart, Ready was Unknown: got %+v, want True with upstream's message", ready)
	}
	// Ready=True is left as it is: another restart writes nothing.
	rv := after.ResourceVersion
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	s = testserver.Start(t, func(o *server.Options) { o.DataDir = dir })
	client = kubernetes.NewForConfigOrDie(s.Config)
	cidrs = client.NetworkingV1().ServiceCIDRs()
	if after, _ = defaultServiceCIDR(t, client); after.ResourceVersion != rv {
		t.Errorf("a Ready default ServiceCIDR after a restart: resourceVersion %s, want %s (unwritten)", after.ResourceVersion, rv)
	}

	// A default one of another range is left as it is, without a
	// condition (upstream reports the mismatch); cluster IPs still come
	// from 10.0.0.0/24.
	if err := cidrs.Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	other, err := cidrs.Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.100.0.0/16"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	s = testserver.Start(t, func(o *server.Options) { o.DataDir = dir })
	client = kubernetes.NewForConfigOrDie(s.Config)
	after, ready = defaultServiceCIDR(t, client)
	if after.UID != other.UID || !slices.Equal(after.Spec.CIDRs, []string{"10.100.0.0/16"}) || ready != nil {
		t.Errorf("a default ServiceCIDR of another range after a restart: got uid %s, cidrs %v, Ready %+v; want uid %s, 10.100.0.0/16, no condition", after.UID, after.Spec.CIDRs, ready, other.UID)
	}
	svc, err := client.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if addr, err := netip.ParseAddr(svc.Spec.ClusterIP); err != nil || !netip.MustParsePrefix("10.0.0.0/24").Contains(addr) {
		t.Errorf("cluster IP: got %q, want one of 10.0.0.0/24", svc.Spec.ClusterIP)
	}
}

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
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestBuiltins checks the policy, scheduling, storage and node types and the
// quota, limit range, replication controller, controller revision, network
// policy and ingress class types with the real kubectl (its generators and
// the server's table columns) and with client-go's typed clients.
func TestBuiltins(t *testing.T) {
	t.Parallel()
	// The quota controller's status write would be an event the typed
	// clients' watch of ResourceQuotas does not expect.
	s, client := framework.Start(t, framework.WithoutControllers("resourcequota"))

	t.Run("kubectl create", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"create", "pdb", "web", "--selector=app=web", "--min-available=1"}, "poddisruptionbudget.policy/web created"},
			{[]string{"create", "quota", "compute", "--hard=cpu=1,memory=1G,pods=2"}, "resourcequota/compute created"},
			{[]string{"create", "priorityclass", "high", "--value=1000", "--description=high priority"}, "priorityclass.scheduling.k8s.io/high created"},
		} {
			if out := framework.Kubectl(t, s, "", tt.args...); strings.TrimSpace(out) != tt.want {
				t.Errorf("kubectl %s: got %q, want %q", strings.Join(tt.args, " "), out, tt.want)
			}
		}
		// The system classes exist from the start, as kube-apiserver makes them.
		for name, value := range map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000} {
			if pc, err := client.SchedulingV1().PriorityClasses().Get(t.Context(), name, metav1.GetOptions{}); err != nil || pc.Value != value {
				t.Errorf("system PriorityClass %s: %v, %v; want value %d", name, pc, err, value)
			}
		}
		// kubectl's generators send what the server defaults and validates.
		pc, err := client.SchedulingV1().PriorityClasses().Get(t.Context(), "high", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pc.Value != 1000 || pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptLowerPriority || pc.Generation != 1 {
			t.Errorf("priority class: got value %d, preemptionPolicy %v, generation %d; want 1000, PreemptLowerPriority, 1", pc.Value, pc.PreemptionPolicy, pc.Generation)
		}
		pdb, err := client.PolicyV1().PodDisruptionBudgets("default").Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.String() != "1" || pdb.Generation != 1 {
			t.Errorf("pod disruption budget: got minAvailable %v, generation %d; want 1, 1", pdb.Spec.MinAvailable, pdb.Generation)
		}
	})

	createBuiltins(t, client)

	t.Run("kubectl get", func(t *testing.T) {
		for _, tt := range []struct {
			args    []string
			columns []string
			row     []string // the first row's leading cells
		}{
			{[]string{"get", "pdb"}, []string{"NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"}, []string{"web", "1", "N/A", "0"}},
			{[]string{"get", "quota"}, []string{"NAME", "REQUEST", "LIMIT", "AGE"}, []string{"compute"}},
			{[]string{"get", "pc"}, []string{"NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"}, []string{"high", "1000", "false"}},
			{[]string{"get", "limits"}, []string{"NAME", "CREATED AT"}, []string{"limits"}},
			{[]string{"get", "rc"}, []string{"NAME", "DESIRED", "CURRENT", "READY", "AGE"}, []string{"web", "2", "0", "0"}},
			{[]string{"get", "rc", "-o", "wide"}, []string{"NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"}, []string{"web", "2", "0", "0"}},
			{[]string{"get", "controllerrevisions"}, []string{"NAME", "CONTROLLER", "REVISION", "AGE"}, []string{"web-1", "<none>", "1"}},
			{[]string{"get", "netpol"}, []string{"NAME", "POD-SELECTOR", "AGE"}, []string{"deny-all", "<none>"}},
			{[]string{"get", "ingressclass"}, []string{"NAME", "CONTROLLER", "PARAMETERS", "AGE"}, []string{"nginx", "k8s.io/ingress-nginx", "<none>"}},
			{[]string{"get", "runtimeclass"}, []string{"NAME", "HANDLER", "AGE"}, []string{"gvisor", "runsc"}},
			{[]string{"get", "sc"}, []string{"NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"},
				[]string{"fast (default)", "example.com/csi", "Delete", "Immediate", "false"}},
			{[]string{"get", "csidriver"}, []string{"NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS", "REQUIRESREPUBLISH", "MODES", "AGE"},
				[]string{"csi.example.com", "true", "false", "false", "<unset>", "false", "Persistent"}},
		} {
			t.Run(strings.Join(tt.args[1:], " "), func(t *testing.T) {
				out := framework.Kubectl(t, s, "", tt.args...)
				lines := strings.Split(strings.TrimSpace(out), "\n")
				if len(lines) < 2 {
					t.Fatalf("got\n%s\nwant a header and a row", out)
				}
				if got := tableCells(lines[0]); !slices.Equal(got, tt.columns) {
					t.Errorf("columns: got %q, want %q", got, tt.columns)
				}
				if got := tableCells(lines[1]); len(got) < len(tt.row) || !slices.Equal(got[:len(tt.row)], tt.row) {
					t.Errorf("first row: got %q, want it to start with %q", got, tt.row)
				}
			})
		}
	})

	t.Run("kubectl scale rc", func(t *testing.T) {
		framework.Kubectl(t, s, "", "scale", "rc", "web", "--replicas=3")
		rc, err := client.CoreV1().ReplicationControllers("default").Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(rc.Spec.Replicas, -1); got != 3 || rc.Generation != 2 {
			t.Errorf("after kubectl scale: got replicas %d, generation %d; want 3, 2", got, rc.Generation)
		}
		scale, err := client.CoreV1().ReplicationControllers("default").GetScale(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if scale.Spec.Replicas != 3 || scale.Status.Selector != "app=web" {
			t.Errorf("scale: got replicas %d, selector %q; want 3, %q", scale.Spec.Replicas, scale.Status.Selector, "app=web")
		}
	})

	t.Run("kubectl api-resources", func(t *testing.T) {
		out := framework.Kubectl(t, s, "", "api-resources", "--no-headers")
		for _, want := range [][]string{
			{"poddisruptionbudgets", "pdb", "policy/v1", "true", "PodDisruptionBudget"},
			{"resourcequotas", "quota", "v1", "true", "ResourceQuota"},
			{"limitranges", "limits", "v1", "true", "LimitRange"},
			{"replicationcontrollers", "rc", "v1", "true", "ReplicationController"},
			{"controllerrevisions", "apps/v1", "true", "ControllerRevision"},
			{"networkpolicies", "netpol", "networking.k8s.io/v1", "true", "NetworkPolicy"},
			{"ingressclasses", "networking.k8s.io/v1", "false", "IngressClass"},
			{"servicecidrs", "networking.k8s.io/v1", "false", "ServiceCIDR"},
			{"priorityclasses", "pc", "scheduling.k8s.io/v1", "false", "PriorityClass"},
			{"storageclasses", "sc", "storage.k8s.io/v1", "false", "StorageClass"},
			{"csidrivers", "storage.k8s.io/v1", "false", "CSIDriver"},
			{"runtimeclasses", "node.k8s.io/v1", "false", "RuntimeClass"},
		} {
			if !slices.ContainsFunc(strings.Split(out, "\n"), func(line string) bool { return slices.Equal(strings.Fields(line), want) }) {
				t.Errorf("api-resources: no line %q in\n%s", want, out)
			}
		}
	})

	t.Run("client-go", func(t *testing.T) { checkTypedClients(t, client) })
	t.Run("validation", func(t *testing.T) { checkBuiltinValidation(t, client) })

	// The namespace controller empties the new namespaced types too.
	t.Run("namespace deletion", func(t *testing.T) {
		ctx := t.Context()
		ns := framework.CreateNamespace(t, client)
		om := metav1.ObjectMeta{Name: "x"}
		for _, create := range []func() error{
			func() error {
				_, err := client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: om}, metav1.CreateOptions{})
				return err
			},
			func() error {
				_, err := client.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: om}, metav1.CreateOptions{})
				return err
			},
			func() error {
				_, err := client.CoreV1().LimitRanges(ns).Create(ctx, &corev1.LimitRange{ObjectMeta: om}, metav1.CreateOptions{})
				return err
			},
			func() error {
				_, err := client.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{ObjectMeta: om, Spec: corev1.ReplicationControllerSpec{
					Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}, metav1.CreateOptions{})
				return err
			},
			func() error {
				_, err := client.AppsV1().ControllerRevisions(ns).Create(ctx, &appsv1.ControllerRevision{ObjectMeta: om, Data: runtime.RawExtension{Raw: []byte(`{}`)}}, metav1.CreateOptions{})
				return err
			},
			func() error {
				_, err := client.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: om}, metav1.CreateOptions{})
				return err
			},
		} {
			if err := create(); err != nil {
				t.Fatal(err)
			}
		}
		framework.DeleteNamespace(t, client, ns)
		if list, err := client.CoreV1().ReplicationControllers(ns).List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
			t.Errorf("replication controllers left in the deleted namespace: %v, %v", list, err)
		}
		if list, err := client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
			t.Errorf("pod disruption budgets left in the deleted namespace: %v, %v", list, err)
		}
	})

	t.Run("field selectors", func(t *testing.T) {
		rcs := client.CoreV1().ReplicationControllers("default")
		list, err := rcs.List(t.Context(), metav1.ListOptions{FieldSelector: "status.replicas=0,metadata.name=web"})
		if err != nil || len(list.Items) != 1 {
			t.Errorf("status.replicas=0: got %v, %v; want web", list, err)
		}
		if _, err := rcs.List(t.Context(), metav1.ListOptions{FieldSelector: "spec.replicas=3"}); !apierrors.IsBadRequest(err) {
			t.Errorf("spec.replicas selector: got %v, want BadRequest", err)
		}
		pcs, err := client.SchedulingV1().PriorityClasses().List(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=high"})
		if err != nil || len(pcs.Items) != 1 {
			t.Errorf("priority classes metadata.name=high: got %v, %v; want one", pcs, err)
		}
	})
}

// tableCells splits a line of kubectl's table into its cells: runs of two
// or more spaces separate them ("MIN AVAILABLE" is one).
func tableCells(line string) []string {
	return regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
}

// createBuiltins creates one object of each type kubectl create has no
// generator for, with client-go, and checks what the server defaulted.
func createBuiltins(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	ctx := t.Context()
	labels := map[string]string{"app": "web"}
	rc, err := client.CoreV1().ReplicationControllers("default").Create(ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](2), Template: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(rc.Spec.Selector, labels) || !maps.Equal(rc.Labels, labels) || rc.Generation != 1 {
		t.Errorf("replication controller: got selector %v, labels %v, generation %d; want both %v (from the template), 1", rc.Spec.Selector, rc.Labels, rc.Generation, labels)
	}
	lr, err := client.CoreV1().LimitRanges("default").Create(ctx, &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := lr.Spec.Limits[0].DefaultRequest[corev1.ResourceCPU]; got.String() != "2" {
		t.Errorf("limit range default request: got %s, want 2 (from max, through default)", got.String())
	}
	if _, err := client.AppsV1().ControllerRevisions("default").Create(ctx, &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1"}, Revision: 1, Data: runtime.RawExtension{Raw: []byte(`{"spec":{}}`)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	np, err := client.NetworkingV1().NetworkPolicies("default").Create(ctx, &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-all"},
		Spec:       networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(53))}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	if !slices.Equal(np.Spec.PolicyTypes, wantTypes) || ptr.Deref(np.Spec.Egress[0].Ports[0].Protocol, "") != corev1.ProtocolTCP {
		t.Errorf("network policy: got policyTypes %v, protocol %v; want %v, TCP", np.Spec.PolicyTypes, np.Spec.Egress[0].Ports[0].Protocol, wantTypes)
	}
	if _, err := client.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc, err := client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "example.com/csi",
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(sc.ReclaimPolicy, "") != corev1.PersistentVolumeReclaimDelete || ptr.Deref(sc.VolumeBindingMode, "") != storagev1.VolumeBindingImmediate {
		t.Errorf("storage class: got reclaimPolicy %v, volumeBindingMode %v; want Delete, Immediate", sc.ReclaimPolicy, sc.VolumeBindingMode)
	}
	driver, err := client.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(driver.Spec.AttachRequired, false) || ptr.Deref(driver.Spec.FSGroupPolicy, "") != storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy {
		t.Errorf("CSI driver: got attachRequired %v, fsGroupPolicy %v; want true, ReadWriteOnceWithFSType", driver.Spec.AttachRequired, driver.Spec.FSGroupPolicy)
	}
}

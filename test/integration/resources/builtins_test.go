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
	"context"
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
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
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
	s, client := framework.Start(t)

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

// typedClient is what checkTyped uses of one of client-go's typed clients.
type typedClient[T runtime.Object, L runtime.Object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// checkTyped creates first, gets it, lists it, and watches from the list's
// resourceVersion for the creation of second.
func checkTyped[T runtime.Object, L runtime.Object](t *testing.T, c typedClient[T, L], first, second T) {
	t.Helper()
	ctx := t.Context()
	created, err := c.Create(ctx, first, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	name := nameOf(t, created)
	got, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if uid := uidOf(t, got); uid != uidOf(t, created) || uid == "" {
		t.Errorf("get: got uid %q, want %q", uid, uidOf(t, created))
	}
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(items, func(o runtime.Object) bool { return nameOf(t, o) == name }) {
		t.Errorf("list: %s missing from %d items", name, len(items))
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: listMeta.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	if _, err := c.Create(ctx, second, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	framework.ExpectEvents(t, w, "ADDED "+nameOf(t, second))
}

func nameOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m.GetName()
}

func uidOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(m.GetUID())
}

func checkTypedClients(t *testing.T, client kubernetes.Interface) {
	ns := framework.CreateNamespace(t, client)
	om := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	template := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	for _, tt := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"poddisruptionbudgets", func(t *testing.T) {
			pdb := func(name string) *policyv1.PodDisruptionBudget {
				return &policyv1.PodDisruptionBudget{ObjectMeta: om(name), Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("50%")), Selector: selector}}
			}
			checkTyped(t, client.PolicyV1().PodDisruptionBudgets(ns), pdb("a"), pdb("b"))
		}},
		{"resourcequotas", func(t *testing.T) {
			q := func(name string) *corev1.ResourceQuota {
				return &corev1.ResourceQuota{ObjectMeta: om(name), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")}}}
			}
			checkTyped(t, client.CoreV1().ResourceQuotas(ns), q("a"), q("b"))
		}},
		{"limitranges", func(t *testing.T) {
			lr := func(name string) *corev1.LimitRange {
				return &corev1.LimitRange{ObjectMeta: om(name), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
					Type: corev1.LimitTypePod, Max: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}
			}
			checkTyped(t, client.CoreV1().LimitRanges(ns), lr("a"), lr("b"))
		}},
		{"replicationcontrollers", func(t *testing.T) {
			rc := func(name string) *corev1.ReplicationController {
				return &corev1.ReplicationController{ObjectMeta: om(name), Spec: corev1.ReplicationControllerSpec{Template: template}}
			}
			checkTyped(t, client.CoreV1().ReplicationControllers(ns), rc("a"), rc("b"))
		}},
		{"controllerrevisions", func(t *testing.T) {
			cr := func(name string) *appsv1.ControllerRevision {
				return &appsv1.ControllerRevision{ObjectMeta: om(name), Revision: 2, Data: runtime.RawExtension{Raw: []byte(`{"a":1}`)}}
			}
			checkTyped(t, client.AppsV1().ControllerRevisions(ns), cr("a"), cr("b"))
		}},
		{"networkpolicies", func(t *testing.T) {
			np := func(name string) *networkingv1.NetworkPolicy {
				return &networkingv1.NetworkPolicy{ObjectMeta: om(name)}
			}
			checkTyped(t, client.NetworkingV1().NetworkPolicies(ns), np("a"), np("b"))
		}},
		{"ingressclasses", func(t *testing.T) {
			ic := func(name string) *networkingv1.IngressClass {
				return &networkingv1.IngressClass{ObjectMeta: om(ns + "-" + name), Spec: networkingv1.IngressClassSpec{Controller: "example.com/" + name}}
			}
			checkTyped(t, client.NetworkingV1().IngressClasses(), ic("a"), ic("b"))
		}},
		{"priorityclasses", func(t *testing.T) {
			pc := func(name string) *schedulingv1.PriorityClass {
				return &schedulingv1.PriorityClass{ObjectMeta: om(ns + "-" + name), Value: 10}
			}
			checkTyped(t, client.SchedulingV1().PriorityClasses(), pc("a"), pc("b"))
		}},
		{"storageclasses", func(t *testing.T) {
			sc := func(name string) *storagev1.StorageClass {
				return &storagev1.StorageClass{ObjectMeta: om(ns + "-" + name), Provisioner: "example.com/" + name}
			}
			checkTyped(t, client.StorageV1().StorageClasses(), sc("a"), sc("b"))
		}},
		{"csidrivers", func(t *testing.T) {
			d := func(name string) *storagev1.CSIDriver {
				return &storagev1.CSIDriver{ObjectMeta: om(ns + "-" + name + ".example.com")}
			}
			checkTyped(t, client.StorageV1().CSIDrivers(), d("a"), d("b"))
		}},
		{"runtimeclasses", func(t *testing.T) {
			rc := func(name string) *nodev1.RuntimeClass {
				return &nodev1.RuntimeClass{ObjectMeta: om(ns + "-" + name), Handler: "runc"}
			}
			checkTyped(t, client.NodeV1().RuntimeClasses(), rc("a"), rc("b"))
		}},
	} {
		t.Run(tt.name, tt.run)
	}
}

// checkBuiltinValidation sends one invalid object of each type and expects
// 422 Invalid with upstream's field path.
func checkBuiltinValidation(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	ns := framework.CreateNamespace(t, client)
	om := metav1.ObjectMeta{Name: "invalid"}
	for _, tt := range []struct {
		name  string
		do    func() error
		field string
	}{
		{"pdb minAvailable and maxUnavailable", func() error {
			_, err := client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: om, Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}}, metav1.CreateOptions{})
			return err
		}, "spec"},
		{"pdb percentage above 100", func() error {
			_, err := client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: om, Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: ptr.To(intstr.FromString("150%"))}}, metav1.CreateOptions{})
			return err
		}, "spec.minAvailable"},
		{"quota negative", func() error {
			_, err := client.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: om, Spec: corev1.ResourceQuotaSpec{
				Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}}}, metav1.CreateOptions{})
			return err
		}, "spec.hard[cpu]"},
		{"limit range min above max", func() error {
			_, err := client.CoreV1().LimitRanges(ns).Create(ctx, &corev1.LimitRange{ObjectMeta: om, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type: corev1.LimitTypePod, Min: corev1.ResourceList{"cpu": resource.MustParse("2")}, Max: corev1.ResourceList{"cpu": resource.MustParse("1")}}}}}, metav1.CreateOptions{})
			return err
		}, "spec.limits[0].min[cpu]"},
		{"rc selector does not match", func() error {
			_, err := client.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{ObjectMeta: om, Spec: corev1.ReplicationControllerSpec{
				Selector: map[string]string{"app": "other"}, Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}, metav1.CreateOptions{})
			return err
		}, "spec.template.metadata.labels"},
		{"controller revision negative", func() error {
			_, err := client.AppsV1().ControllerRevisions(ns).Create(ctx, &appsv1.ControllerRevision{ObjectMeta: om, Revision: -1,
				Data: runtime.RawExtension{Raw: []byte(`{}`)}}, metav1.CreateOptions{})
			return err
		}, "revision"},
		{"network policy port", func() error {
			_, err := client.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: om, Spec: networkingv1.NetworkPolicySpec{
				Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(0))}}}}}}, metav1.CreateOptions{})
			return err
		}, "spec.ingress[0].ports[0].port"},
		{"ingress class without controller", func() error {
			_, err := client.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{ObjectMeta: om}, metav1.CreateOptions{})
			return err
		}, "spec.controller"},
		{"priority class above 1e9", func() error {
			_, err := client.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: om, Value: 1000000001}, metav1.CreateOptions{})
			return err
		}, "value"},
		{"storage class without provisioner", func() error {
			_, err := client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: om}, metav1.CreateOptions{})
			return err
		}, "provisioner"},
		{"csi driver name", func() error {
			_, err := client.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Subdomain"}}, metav1.CreateOptions{})
			return err
		}, "metadata.name"},
		{"runtime class handler", func() error {
			_, err := client.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: om, Handler: "run.sc"}, metav1.CreateOptions{})
			return err
		}, "handler"},
		{"priority class value is immutable", func() error {
			pc, err := client.SchedulingV1().PriorityClasses().Get(ctx, "high", metav1.GetOptions{})
			if err != nil {
				return err
			}
			pc.Value = 2000
			_, err = client.SchedulingV1().PriorityClasses().Update(ctx, pc, metav1.UpdateOptions{})
			return err
		}, "value"},
		{"storage class provisioner is immutable", func() error {
			sc, err := client.StorageV1().StorageClasses().Get(ctx, "fast", metav1.GetOptions{})
			if err != nil {
				return err
			}
			sc.Provisioner = "example.com/other"
			_, err = client.StorageV1().StorageClasses().Update(ctx, sc, metav1.UpdateOptions{})
			return err
		}, "provisioner"},
		{"csi driver attachRequired is immutable", func() error {
			d, err := client.StorageV1().CSIDrivers().Get(ctx, "csi.example.com", metav1.GetOptions{})
			if err != nil {
				return err
			}
			d.Spec.AttachRequired = ptr.To(false)
			_, err = client.StorageV1().CSIDrivers().Update(ctx, d, metav1.UpdateOptions{})
			return err
		}, "spec.attachedRequired"},
		{"runtime class handler is immutable", func() error {
			rc, err := client.NodeV1().RuntimeClasses().Get(ctx, "gvisor", metav1.GetOptions{})
			if err != nil {
				return err
			}
			rc.Handler = "runc"
			_, err = client.NodeV1().RuntimeClasses().Update(ctx, rc, metav1.UpdateOptions{})
			return err
		}, "handler"},
		{"ingress class controller is immutable", func() error {
			ic, err := client.NetworkingV1().IngressClasses().Get(ctx, "nginx", metav1.GetOptions{})
			if err != nil {
				return err
			}
			ic.Spec.Controller = "example.com/other"
			_, err = client.NetworkingV1().IngressClasses().Update(ctx, ic, metav1.UpdateOptions{})
			return err
		}, "spec.controller"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			status, ok := err.(apierrors.APIStatus)
			if !ok || !apierrors.IsInvalid(err) {
				t.Fatalf("got %v, want 422 Invalid", err)
			}
			var fields []string
			for _, c := range status.Status().Details.Causes {
				fields = append(fields, c.Field)
			}
			if !slices.Contains(fields, tt.field) {
				t.Errorf("causes' fields: got %q, want %q among them", fields, tt.field)
			}
		})
	}
	if err := client.SchedulingV1().PriorityClasses().Delete(ctx, "system-node-critical", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("delete system-node-critical: got %v, want Forbidden", err)
	}
}

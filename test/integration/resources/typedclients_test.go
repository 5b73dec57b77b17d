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
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
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

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
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
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

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
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

// TestDefaultClasses: as kube-apiserver 1.37's DefaultStorageClass and
// DefaultIngressClass plugins (on by default): a claim or an ingress
// created without a class gets the default one, once there is one (the
// control: before, none).
func TestDefaultClasses(t *testing.T) {
	t.Parallel()
	client := kubernetes.NewForConfigOrDie(testserver.Start(t).Config)
	ctx := t.Context()
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
	ingress := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: networkingv1.IngressSpec{
		DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
	}}
	classOf := func() (storageClass, ingressClass *string) {
		pvc, err := client.CoreV1().PersistentVolumeClaims("default").Create(ctx, claim, dryRun)
		if err != nil {
			t.Fatal(err)
		}
		ing, err := client.NetworkingV1().Ingresses("default").Create(ctx, ingress, dryRun)
		if err != nil {
			t.Fatal(err)
		}
		return pvc.Spec.StorageClassName, ing.Spec.IngressClassName
	}
	if sc, ic := classOf(); sc != nil || ic != nil {
		t.Fatalf("without default classes: got storageClassName %v, ingressClassName %v, want none", ptr.Deref(sc, ""), ptr.Deref(ic, ""))
	}
	if _, err := client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "std",
		Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "example.com/p"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx",
		Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}}, Spec: networkingv1.IngressClassSpec{Controller: "example.com/i"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The classes reach the plugins' informers a moment after their create.
	framework.WaitUntil(t, func() bool {
		sc, ic := classOf()
		return ptr.Deref(sc, "") == "std" && ptr.Deref(ic, "") == "nginx"
	}, "the default classes given")
}

// TestRuntimeClassAndResize: as kube-apiserver 1.37's RuntimeClass and
// PersistentVolumeClaimResize plugins (on by default): a pod gets its
// RuntimeClass's overhead and node selector, and a pod whose overhead
// has no class, or a bound claim that grows though its class does not
// allow it, is refused with upstream's 403. With the plugins disabled (the negative control), neither.
func TestRuntimeClassAndResize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		disabled bool
	}{{name: "on"}, {name: "disabled", disabled: true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := testserver.Start(t, func(o *server.Options) {
				if tc.disabled {
					o.DisableAdmissionPlugins = append(o.DisableAdmissionPlugins, "RuntimeClass", "PersistentVolumeClaimResize")
				}
			})
			client := kubernetes.NewForConfigOrDie(s.Config)
			ctx := t.Context()
			overhead := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
			if _, err := client.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc",
				Overhead: &nodev1.Overhead{PodFixed: overhead}, Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"runtime": "gvisor"}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sandboxed"}, Spec: corev1.PodSpec{RuntimeClassName: ptr.To("gvisor"),
				Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
			// A class the informer has not seen yet is looked up.
			created, err := client.CoreV1().Pods("default").Create(ctx, pod, dryRun)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := created.Spec.Overhead.Cpu().String(), map[bool]string{false: "250m", true: "0"}[tc.disabled]; got != want {
				t.Errorf("overhead cpu: got %s, want %s", got, want)
			}
			if got, want := created.Spec.NodeSelector["runtime"], map[bool]string{false: "gvisor", true: ""}[tc.disabled]; got != want {
				t.Errorf("nodeSelector[runtime]: got %q, want %q", got, want)
			}

			pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "overhead"}, Spec: corev1.PodSpec{Overhead: overhead,
				Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
			_, err = client.CoreV1().Pods("default").Create(ctx, pod, dryRun)
			checkForbidden(t, err, tc.disabled, `pods "overhead" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`)

			claim, err := client.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptr.To("std"),
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// Validation lets only a bound claim grow; its class does not allow it.
			claim.Status.Phase = corev1.ClaimBound
			if claim, err = client.CoreV1().PersistentVolumeClaims("default").UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			claim.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
			_, err = client.CoreV1().PersistentVolumeClaims("default").Update(ctx, claim, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			checkForbidden(t, err, tc.disabled, `persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`)
		})
	}
}

// checkForbidden checks err is the plugin's 403 with message, or, with the
// plugin disabled, anything else.
func checkForbidden(t *testing.T, err error, disabled bool, message string) {
	t.Helper()
	switch forbidden := apierrors.IsForbidden(err) && err.Error() == message; {
	case !disabled && !forbidden:
		t.Errorf("got %v, want 403 %q", err, message)
	case disabled && forbidden:
		t.Errorf("with the plugin disabled: got %v", err)
	}
}

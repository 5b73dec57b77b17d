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

package controllers

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/admission/storageprotection"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/server/controllers"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

var protectionControllers = []string{controllers.PVCProtection, controllers.PVProtection, controllers.VACProtection}

func claim(name, class string) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
	if class != "" {
		c.Spec.VolumeAttributesClassName = &class
	}
	return c
}

func volume(name string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/" + name}},
	}}
}

func class(name string) *storagev1.VolumeAttributesClass {
	return &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: name}, DriverName: "example.com/csi",
		Parameters: map[string]string{"iops": "3000"}}
}

// TestStorageProtection: as kube-apiserver 1.37's StorageObjectInUseProtection
// admission and kube-controller-manager's protection controllers, a claim,
// volume or volume attributes class is created with its finalizer, and
// one deleted while a scheduled pod uses the claim, while the volume is
// Bound or while a claim names the class stays until that ends; each
// deleted unused at the same time goes at once (and shows the controller
// has looked at the one that stays).
func TestStorageProtection(t *testing.T) {
	t.Parallel()
	_, client := framework.Start(t)
	ctx := t.Context()
	ns := framework.CreateNamespace(t, client)
	pvcs, pvs, vacs := client.CoreV1().PersistentVolumeClaims(ns), client.CoreV1().PersistentVolumes(), client.StorageV1().VolumeAttributesClasses()
	for _, c := range []*corev1.PersistentVolumeClaim{claim("used", ""), claim("spare", ""), claim("classy", "gold")} {
		created, err := pvcs.Create(ctx, c, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(created.Finalizers, []string{storageprotection.PVCFinalizer}) {
			t.Errorf("claim %s created with finalizers %v, want [%s]", c.Name, created.Finalizers, storageprotection.PVCFinalizer)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user"}, Spec: corev1.PodSpec{NodeName: "node-1",
		Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
		Volumes:    []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "used"}}}}}}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleteAndWait(t, "claims", pvcs.Delete, pvcs.Get, "used", "spare")
	if err := client.CoreV1().Pods(ns).Delete(ctx, "user", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "claim used, once its pod is gone", pvcs.Get, "used")

	for _, name := range []string{"bound", "free"} {
		created, err := pvs.Create(ctx, volume(name), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(created.Finalizers, []string{storageprotection.PVFinalizer}) {
			t.Errorf("volume %s created with finalizers %v, want [%s]", name, created.Finalizers, storageprotection.PVFinalizer)
		}
	}
	bound, err := pvs.Get(ctx, "bound", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound.Status.Phase = corev1.VolumeBound
	if _, err := pvs.UpdateStatus(ctx, bound, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleteAndWait(t, "volumes", pvs.Delete, pvs.Get, "bound", "free")
	bound, err = pvs.Get(ctx, "bound", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound.Status.Phase = corev1.VolumeReleased
	if _, err := pvs.UpdateStatus(ctx, bound, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "volume bound, once released", pvs.Get, "bound")

	for _, name := range []string{"gold", "silver"} {
		created, err := vacs.Create(ctx, class(name), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(created.Finalizers, []string{storageprotection.VACFinalizer}) {
			t.Errorf("class %s created with finalizers %v, want [%s]", name, created.Finalizers, storageprotection.VACFinalizer)
		}
	}
	deleteAndWait(t, "classes", vacs.Delete, vacs.Get, "gold", "silver")
	if err := pvcs.Delete(ctx, "classy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "class gold, once its claim is gone", vacs.Get, "gold")
}

// deleteAndWait deletes used, then unused; it waits until unused is gone
// and checks that used is still there, being deleted.
func deleteAndWait[T metav1.Object](t *testing.T, what string, del func(context.Context, string, metav1.DeleteOptions) error,
	get func(context.Context, string, metav1.GetOptions) (T, error), used, unused string) {
	t.Helper()
	for _, name := range []string{used, unused} {
		if err := del(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitGone(t, what+" "+unused, get, unused)
	obj, err := get(t.Context(), used, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s %s, still in use: %v", what, used, err)
	}
	if obj.GetDeletionTimestamp() == nil {
		t.Errorf("%s %s: no deletionTimestamp", what, used)
	}
}

func waitGone[T any](t *testing.T, what string, get func(context.Context, string, metav1.GetOptions) (T, error), name string) {
	t.Helper()
	framework.WaitUntil(t, func() bool {
		_, err := get(t.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, what+" gone")
}

// TestStorageProtectionOff: with StorageObjectInUseProtection disabled a
// claim is created without its finalizer; the protection controllers add
// it (as upstream's do to claims made before the plugin was on), and
// with them off too (the control) it never gets one and goes at once.
func TestStorageProtectionOff(t *testing.T) {
	t.Parallel()
	noPlugin := func(o *server.Options) {
		o.DisableAdmissionPlugins = append(o.DisableAdmissionPlugins, "StorageObjectInUseProtection")
	}
	for _, tc := range []struct {
		name      string
		options   []func(*server.Options)
		wantAdded bool
	}{
		{name: "controllers on", options: []func(*server.Options){noPlugin}, wantAdded: true},
		{name: "controllers off", options: []func(*server.Options){noPlugin, framework.WithoutControllers(protectionControllers...)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, client := framework.Start(t, tc.options...)
			ctx := t.Context()
			pvcs := client.CoreV1().PersistentVolumeClaims("default")
			created, err := pvcs.Create(ctx, claim("data", ""), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(created.Finalizers) != 0 {
				t.Fatalf("created with finalizers %v, want none", created.Finalizers)
			}
			if tc.wantAdded {
				framework.WaitUntil(t, func() bool {
					got, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
					return err == nil && slices.Equal(got.Finalizers, []string{storageprotection.PVCFinalizer})
				}, "the controller's finalizer")
				return
			}
			if err := pvcs.Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := pvcs.Get(ctx, "data", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("after delete: got %v, want NotFound", err)
			}
		})
	}
}

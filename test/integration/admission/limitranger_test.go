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
	"errors"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// limitRangeFixture makes a namespace with a LimitRange whose containers
// default to 100m/128Mi requested and 200m/256Mi limited, at most 500m of
// cpu, and whose claims request at most 1Gi.
func limitRangeFixture(t *testing.T, client kubernetes.Interface, ns string) {
	t.Helper()
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	q := resource.MustParse
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type:           corev1.LimitTypeContainer,
		Max:            corev1.ResourceList{corev1.ResourceCPU: q("500m")},
		Default:        corev1.ResourceList{corev1.ResourceCPU: q("200m"), corev1.ResourceMemory: q("256Mi")},
		DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi")},
	}, {
		Type: corev1.LimitTypePersistentVolumeClaim,
		Max:  corev1.ResourceList{corev1.ResourceStorage: q("1Gi")},
	}}}}
	if _, err := client.CoreV1().LimitRanges(ns).Create(t.Context(), lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func podNeeding(name string, limits corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{Limits: limits}}}}}
}

// TestLimitRanger: as kube-apiserver 1.37's LimitRanger (on by default):
// a Pod without requests or limits gets the LimitRange's defaults and the
// annotation saying so; a Pod over the max, and a claim over its max, are
// refused with upstream's message and 403 Forbidden. With the plugin
// disabled (the negative control) the same Pods are created unchanged.
func TestLimitRanger(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		disabled bool
	}{{name: "on"}, {name: "disabled", disabled: true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := testserver.Start(t, func(o *server.Options) {
				if tc.disabled {
					o.DisableAdmissionPlugins = append(o.DisableAdmissionPlugins, "LimitRanger")
				}
			})
			client := kubernetes.NewForConfigOrDie(s.Config)
			ctx := t.Context()
			limitRangeFixture(t, client, "limited")

			created, err := client.CoreV1().Pods("limited").Create(ctx, podNeeding("plain", nil), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := created.Spec.Containers[0].Resources
			annotation := created.Annotations["kubernetes.io/limit-ranger"]
			if tc.disabled {
				if len(got.Requests)+len(got.Limits) > 0 || annotation != "" {
					t.Errorf("disabled: got resources %v and annotation %q, want none", got, annotation)
				}
			} else {
				want := "requests cpu=100m memory=128Mi, limits cpu=200m memory=256Mi"
				if s := describe(got); s != want {
					t.Errorf("defaults: got %s, want %s", s, want)
				}
				if want := "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c"; annotation != want {
					t.Errorf("annotation: got %q, want %q", annotation, want)
				}
			}

			_, err = client.CoreV1().Pods("limited").Create(ctx, podNeeding("big", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}), metav1.CreateOptions{})
			checkRefused(t, err, tc.disabled, `pods "big" is forbidden: maximum cpu usage per Container is 500m, but limit is 1`)

			claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}},
			}}
			_, err = client.CoreV1().PersistentVolumeClaims("limited").Create(ctx, claim, metav1.CreateOptions{})
			checkRefused(t, err, tc.disabled, `persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 2Gi`)
		})
	}
}

// checkRefused checks that err is a 403 Forbidden with message, or, when
// admitted is true, no error.
func checkRefused(t *testing.T, err error, admitted bool, message string) {
	t.Helper()
	if admitted {
		if err != nil {
			t.Errorf("got %v, want it admitted", err)
		}
		return
	}
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) || status.Status().Code != http.StatusForbidden || status.Status().Message != message {
		t.Errorf("got %v, want 403 Forbidden %q", err, message)
	}
}

func describe(r corev1.ResourceRequirements) string {
	return "requests cpu=" + r.Requests.Cpu().String() + " memory=" + r.Requests.Memory().String() +
		", limits cpu=" + r.Limits.Cpu().String() + " memory=" + r.Limits.Memory().String()
}

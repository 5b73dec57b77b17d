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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestNamespaceDefaults: with namespace defaults (the binary's default),
// every namespace gets a default ServiceAccount and the kube-root-ca.crt
// ConfigMap with the server's CA, as kube-controller-manager gives it; both
// come back if deleted.
func TestNamespaceDefaults(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t, testserver.WithNamespaceDefaults())
	ctx := t.Context()
	ns := framework.CreateNamespace(t, client)
	for _, namespace := range []string{"default", "kube-system", ns} {
		framework.Poll(t, "the defaults of "+namespace, 30*time.Second, func() bool {
			_, saErr := client.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
			cm, cmErr := client.CoreV1().ConfigMaps(namespace).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			return saErr == nil && cmErr == nil && cm.Data["ca.crt"] == string(s.Config.CAData)
		})
	}
	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().ServiceAccounts(ns).Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Poll(t, "the defaults to come back", 30*time.Second, func() bool {
		_, saErr := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		_, cmErr := client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return saErr == nil && cmErr == nil
	})
}

// TestServiceAccountAdmission: with namespace defaults, a Pod created in a
// new namespace (maybe before its "default" ServiceAccount is made) gets
// that account and its token volume, and one naming a missing account is
// refused as kube-apiserver refuses it; without them (envtest's setting),
// the Pod is stored as sent.
func TestServiceAccountAdmission(t *testing.T) {
	t.Parallel()
	newPod := func(account string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec:       corev1.PodSpec{ServiceAccountName: account, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}
	}
	t.Run("namespace defaults", func(t *testing.T) {
		t.Parallel()
		_, client := framework.Start(t, testserver.WithNamespaceDefaults())
		ctx := t.Context()
		ns := framework.CreateNamespace(t, client)
		pod, err := client.CoreV1().Pods(ns).Create(ctx, newPod(""), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Spec.ServiceAccountName != "default" || pod.Spec.DeprecatedServiceAccount != "default" { //nolint:staticcheck // the alias upstream sets
			t.Errorf("service account: got %q (alias %q), want default", pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount) //nolint:staticcheck // as above
		}
		if len(pod.Spec.Volumes) != 1 || !strings.HasPrefix(pod.Spec.Volumes[0].Name, "kube-api-access-") || pod.Spec.Volumes[0].Projected == nil {
			t.Fatalf("volumes: got %+v, want one projected kube-api-access-* volume", pod.Spec.Volumes)
		}
		want := []corev1.VolumeMount{{Name: pod.Spec.Volumes[0].Name, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
		if diff := cmp.Diff(want, pod.Spec.Containers[0].VolumeMounts); diff != "" {
			t.Errorf("mounts (-want +got):\n%s", diff)
		}
		_, err = client.CoreV1().Pods(ns).Create(ctx, newPod("robot"), metav1.CreateOptions{})
		if wantErr := `pods "p" is forbidden: error looking up service account ` + ns + `/robot: serviceaccount "robot" not found`; !apierrors.IsForbidden(err) || err.Error() != wantErr {
			t.Errorf("a missing account: got %v, want 403 %q", err, wantErr)
		}
	})
	t.Run("as envtest", func(t *testing.T) {
		t.Parallel()
		_, client := framework.Start(t)
		ns := framework.CreateNamespace(t, client)
		pod, err := client.CoreV1().Pods(ns).Create(t.Context(), newPod("robot"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Spec.ServiceAccountName != "robot" || len(pod.Spec.Volumes) != 0 {
			t.Errorf("got account %q and volumes %+v, want robot and none", pod.Spec.ServiceAccountName, pod.Spec.Volumes)
		}
	})
}

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

package kubeapiserver

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestAdmissionControlEmpty: kwokctl's --admission-control= turns every
// admission plugin off: a ConfigMap in a namespace that does not exist is
// stored (NamespaceLifecycle would refuse it), as on kube-apiserver.
func TestAdmissionControlEmpty(t *testing.T) {
	t.Parallel()
	etcd := startEtcd(t)
	for _, tc := range []struct {
		flag    string
		refused bool
	}{
		{flag: "--admission-control=", refused: false},
		{flag: "--disable-admission-plugins=ServiceAccount", refused: true},
		{flag: "--disable-admission-plugins=ServiceAccount,NamespaceLifecycle", refused: false},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			// --admission-control and --disable-admission-plugins go alone.
			p := withoutFlag(newPKI(t), "disable-admission-plugins")
			s := startAPIServer(t, etcd, p, tc.flag, "--etcd-prefix=/"+strings.NewReplacer("-", "", "=", "", ",", "").Replace(tc.flag))
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
			_, err := s.admin(t).CoreV1().ConfigMaps("nowhere").Create(ctx(t), cm, metav1.CreateOptions{})
			if tc.refused != (err != nil) {
				t.Errorf("a ConfigMap in a namespace that does not exist: got %v, want refused %t", err, tc.refused)
			}
		})
	}
}

// TestAllowPrivileged: kube-apiserver's default (no --allow-privileged)
// refuses a privileged container with upstream's 422; envtest's
// --allow-privileged=true takes it.
func TestAllowPrivileged(t *testing.T) {
	t.Parallel()
	etcd := startEtcd(t)
	for _, tc := range []struct {
		name    string
		allowed bool
	}{{name: "default"}, {name: "envtest", allowed: true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPKI(t)
			if !tc.allowed {
				p = withoutFlag(p, "allow-privileged")
			}
			s := startAPIServer(t, etcd, p, "--etcd-prefix=/"+tc.name)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "root"}, Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "c", Image: "nginx", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}}
			_, err := s.admin(t).CoreV1().Pods("default").Create(ctx(t), pod, metav1.CreateOptions{})
			switch {
			case tc.allowed && err != nil:
				t.Errorf("a privileged pod: got %v, want it created", err)
			case !tc.allowed && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy")):
				t.Errorf("a privileged pod: got %v, want 422 disallowed by cluster policy", err)
			}
		})
	}
}

// TestDefaultTolerationSeconds: a pod gets the not-ready and unreachable
// tolerations for the seconds of kube-apiserver's flags (300 without).
func TestDefaultTolerationSeconds(t *testing.T) {
	t.Parallel()
	s := startAPIServer(t, startEtcd(t), newPKI(t), "--default-not-ready-toleration-seconds=7", "--default-unreachable-toleration-seconds=9")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	created, err := s.admin(t).CoreV1().Pods("default").Create(ctx(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, tol := range created.Spec.Tolerations {
		if tol.Effect == corev1.TaintEffectNoExecute && tol.TolerationSeconds != nil {
			got[tol.Key] = *tol.TolerationSeconds
		}
	}
	if want := map[string]int64{corev1.TaintNodeNotReady: 7, corev1.TaintNodeUnreachable: 9}; !maps.Equal(got, want) {
		t.Errorf("NoExecute tolerations: got %v, want %v", got, want)
	}
}

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
	"slices"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// warnings records the warnings a client is sent.
type warnings struct {
	mu  sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	got := w.got
	w.got = nil
	return got
}

// restrictedViolations is what the Restricted standard says of a pod on
// the host network whose container "c" sets nothing.
const restrictedViolations = `host namespaces (hostNetwork=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
	`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
	`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

// TestPodSecurity: a namespace's pod-security.kubernetes.io labels are
// enforced as kube-apiserver 1.37's PodSecurity admission enforces them
// (the messages are its, side by side): a pod that breaks the enforced
// standard is refused, one that keeps it is created, a workload whose
// template breaks it is created with a warning, a namespace with no label
// allows anything, and a label with no standard is a 422.
func TestPodSecurity(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	ctx := t.Context()
	seen := &warnings{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = seen
	client := kubernetes.NewForConfigOrDie(cfg)
	labels := map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "restricted", Labels: labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}

	_, err := client.CoreV1().Pods("restricted").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "host"}, Spec: spec}, metav1.CreateOptions{})
	if want := `pods "host" is forbidden: violates PodSecurity "restricted:latest": ` + restrictedViolations; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("a pod on the host network: got %v, want %s", err, want)
	}

	compliant := corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		}}},
	}
	if _, err := client.CoreV1().Pods("restricted").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ok"}, Spec: compliant}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a restricted pod: %v", err)
	}

	seen.take()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: spec},
	}}
	if _, err := client.AppsV1().Deployments("restricted").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Errorf("a deployment of such pods: %v", err)
	}
	if want := `would violate PodSecurity "restricted:latest": ` + restrictedViolations; !slices.Equal(seen.take(), []string{want}) {
		t.Errorf("the deployment's warnings: got %q, want %q", seen.got, want)
	}

	if _, err := client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "host"}, Spec: spec}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a pod on the host network in a namespace without labels: %v", err)
	}

	bad := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bad", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "bogus"}}}
	_, err = client.CoreV1().Namespaces().Create(ctx, bad, metav1.CreateOptions{})
	if want := `Namespace "bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("a namespace with no such standard: got %v, want %s", err, want)
	}
}

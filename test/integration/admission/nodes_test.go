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
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestPodTopologyLabels: as kube-apiserver 1.37's PodTopologyLabels plugin
// (on by default), a pod bound to a node, as a scheduler binds it, gets the
// node's zone and region labels; disabled (the negative control), not.
func TestPodTopologyLabels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		disabled bool
	}{{name: "on"}, {name: "disabled", disabled: true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := testserver.Start(t, func(o *server.Options) {
				if tc.disabled {
					o.DisableAdmissionPlugins = append(o.DisableAdmissionPlugins, "PodTopologyLabels")
				}
			})
			client := kubernetes.NewForConfigOrDie(s.Config)
			ctx := t.Context()
			topology := map[string]string{corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1"}
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: maps.Clone(topology)}}
			node.Labels[corev1.LabelHostname] = "node-1"
			if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
			if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			// A pod created on the node gets them too, once the plugin's
			// node informer has the node (as a scheduler's has).
			onNode := pod.DeepCopy()
			onNode.Name, onNode.Spec.NodeName = "on-node", "node-1"
			var labels map[string]string
			if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
				created, err := client.CoreV1().Pods("default").Create(ctx, onNode, dryRun)
				if err != nil {
					return false, err
				}
				labels = created.Labels
				return tc.disabled || labels[corev1.LabelTopologyZone] != "", nil
			}); err != nil {
				t.Fatalf("a pod created on the node: labels %v, err %v", labels, err)
			}
			if tc.disabled && !maps.Equal(labels, pod.Labels) {
				t.Errorf("a pod created on the node: labels %v, want its own", labels)
			}
			binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
			if err := client.CoreV1().Pods("default").Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := client.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"app": "web"}
			if !tc.disabled {
				maps.Copy(want, topology)
			}
			if !maps.Equal(got.Labels, want) || got.Spec.NodeName != "node-1" {
				t.Errorf("the bound pod: labels %v on %q, want %v on node-1", got.Labels, got.Spec.NodeName, want)
			}
		})
	}
}

// TestPodResizeValidator: as kube-apiserver 1.37's PodResizeValidator (on
// by default), a resize of a pod on a node beyond the node's allocatable
// cpu is refused with upstream's 403; one within it is not; disabled (the
// negative control), neither is.
func TestPodResizeValidator(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		disabled bool
	}{{name: "on"}, {name: "disabled", disabled: true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := testserver.Start(t, func(o *server.Options) {
				if tc.disabled {
					o.DisableAdmissionPlugins = append(o.DisableAdmissionPlugins, "PodResizeValidator")
				}
			})
			client := kubernetes.NewForConfigOrDie(s.Config)
			ctx := t.Context()
			node, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "small"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
			if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			requests := func(cpu string) corev1.ResourceList {
				return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Mi")}
			}
			pod, err := client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{NodeName: "small",
				Containers: []corev1.Container{{Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: requests("250m")}}}}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			resize := func(cpu string) error {
				p := pod.DeepCopy()
				p.Spec.Containers[0].Resources.Requests = requests(cpu)
				_, err := client.CoreV1().Pods("default").UpdateResize(ctx, "web", p, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}
			// The plugin's node informer has the node's status once a
			// resize within it passes and one beyond it does not.
			var err2 error
			if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				if err := resize("500m"); err != nil {
					return false, nil
				}
				err2 = resize("2")
				return tc.disabled || err2 != nil, nil
			}); err != nil {
				t.Fatalf("a resize beyond the node: %v, and one within it passing", err2)
			}
			const want = `pods "web" is forbidden: node didn't have enough allocatable resources: cpu, requested: 2000, allocatable: 1000`
			if tc.disabled && err2 != nil || !tc.disabled && (!apierrors.IsForbidden(err2) || err2.Error() != want) {
				t.Errorf("a resize beyond the node: %v, want %s", err2, map[bool]string{false: want, true: "none"}[tc.disabled])
			}
		})
	}
}

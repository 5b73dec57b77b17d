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
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestPriority: as kube-apiserver 1.37's Priority plugin (on by default):
// a Pod gets its PriorityClass's priority and preemption policy (the
// system classes' too), 0 and PreemptLowerPriority without one; a class
// that does not exist, and a second global default class, are refused
// with upstream's message and 403. With the plugin disabled (the negative
// control) Pods are created as sent and a second default is stored.
func TestPriority(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		disabled bool
	}{{name: "on"}, {name: "disabled", disabled: true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := testserver.Start(t, func(o *server.Options) {
				if tc.disabled {
					o.DisableAdmissionPlugins = append(o.DisableAdmissionPlugins, "Priority")
				}
			})
			client := kubernetes.NewForConfigOrDie(s.Config)
			ctx := t.Context()
			classes := client.SchedulingV1().PriorityClasses()
			if _, err := classes.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000,
				PreemptionPolicy: ptr.To(corev1.PreemptNever)}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			pod := func(name, class string) *corev1.Pod {
				return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{PriorityClassName: class,
					Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
			}
			for _, tt := range []struct {
				pod, class string
				priority   int32
				policy     corev1.PreemptionPolicy
			}{
				{pod: "plain", priority: 0, policy: corev1.PreemptLowerPriority},
				{pod: "high", class: "high", priority: 1000, policy: corev1.PreemptNever},
				{pod: "critical", class: "system-node-critical", priority: 2000001000, policy: corev1.PreemptLowerPriority},
			} {
				// The class may reach the plugin's informer a moment after its create.
				var created *corev1.Pod
				framework.WaitUntil(t, func() bool {
					var err error
					created, err = client.CoreV1().Pods("default").Create(ctx, pod(tt.pod, tt.class), metav1.CreateOptions{})
					return err == nil
				}, "pod "+tt.pod+" created")
				priority, policy := ptr.Deref(created.Spec.Priority, -1), ptr.Deref(created.Spec.PreemptionPolicy, "")
				if tc.disabled {
					if created.Spec.Priority != nil || created.Spec.PreemptionPolicy != nil {
						t.Errorf("pod %s, plugin disabled: got priority %d, policy %q; want neither", tt.pod, priority, policy)
					}
				} else if priority != tt.priority || policy != tt.policy {
					t.Errorf("pod %s: got priority %d, policy %q; want %d, %q", tt.pod, priority, policy, tt.priority, tt.policy)
				}
			}

			_, err := client.CoreV1().Pods("default").Create(ctx, pod("unknown", "nope"), metav1.CreateOptions{})
			checkRefused(t, err, tc.disabled, `pods "unknown" is forbidden: no PriorityClass with name nope was found`)

			if _, err := classes.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "d1"}, Value: 7, GlobalDefault: true}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			second := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "d2"}, Value: 8, GlobalDefault: true}
			if tc.disabled {
				if _, err := classes.Create(ctx, second, metav1.CreateOptions{}); err != nil {
					t.Errorf("plugin disabled, a second default: got %v, want it stored", err)
				}
				return
			}
			want := `priorityclasses.scheduling.k8s.io "d2" is forbidden: PriorityClass d1 is already marked as default. Only one default can exist`
			framework.WaitUntil(t, func() bool { // until the plugin's informer has d1
				_, err := classes.Create(ctx, second, metav1.CreateOptions{})
				if err == nil {
					_ = classes.Delete(ctx, "d2", metav1.DeleteOptions{})
				}
				return apierrors.IsForbidden(err) && err.Error() == want
			}, "a second global default refused")
		})
	}
}

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

package pod

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// TestStatusValidation: a status update as kube-apiserver 1.37 refused
// it, in its words.
func TestStatusValidation(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   string
	}{
		{"valid", func(p *corev1.Pod) {
			p.Status.PodIP, p.Status.PodIPs = "10.0.0.1", []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: "example.com/gate", Status: corev1.ConditionTrue}}
		}, ""},
		{"a condition type that is no qualified name", func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: "not ok", Status: corev1.ConditionTrue}}
		}, `Pod "web" is invalid: status.conditions[0].Type: Invalid value: "not ok": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{"pod IPs", func(p *corev1.Pod) {
			p.Status.PodIP, p.Status.PodIPs = "10.0.0.1", []corev1.PodIP{{IP: "10.0.0.2"}, {IP: "010.0.0.3"}}
		}, `Pod "web" is invalid: [status.podIPs[1]: Invalid value: "010.0.0.3": must not have leading 0s, ` +
			`status.podIPs: Invalid value: [{"ip":"10.0.0.2"},{"ip":"010.0.0.3"}]: may specify no more than one IP for each IP family, ` +
			"status.podIPs[0].ip: Invalid value: \"10.0.0.2\": must be equal to `podIP`]"},
		{"a QoS class changed", func(p *corev1.Pod) { p.Status.QOSClass = corev1.PodQOSGuaranteed },
			`Pod "web" is invalid: status.qosClass: Invalid value: "Guaranteed": field is immutable`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPods(t)
			stored := p.seed(t, modified(validPod(), func(p *corev1.Pod) { p.Status.QOSClass = corev1.PodQOSBestEffort }))
			_, _, err := p.status.Update(genericapirequest.WithNamespace(context.Background(), "default"), "web", rest.DefaultUpdatedObjectInfo(modified(stored, tt.mutate)),
				rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if got := fmt.Sprint(err); (err != nil || tt.want != "") && got != tt.want {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestStateTransitions: a container terminated in the stored status may
// leave that state only if kube-apiserver 1.37 would let it restart.
func TestStateTransitions(t *testing.T) {
	terminated := func(name string, code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	running := func(name string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	}
	never, onFailure := corev1.ContainerRestartPolicyNever, corev1.ContainerRestartPolicyOnFailure
	restartOn42 := []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	const refused = `Pod "web" is invalid: status.containerStatuses[1].state: Forbidden: may not be transitioned to non-terminated state`
	tests := []struct {
		name        string
		spec        func(*corev1.PodSpec)
		old, now    []corev1.ContainerStatus
		init, ephem bool // the statuses are init or ephemeral containers'
		want        string
	}{
		{"the pod restarts always", nil, []corev1.ContainerStatus{running("app"), terminated("sidecar", 0)}, []corev1.ContainerStatus{running("app"), running("sidecar")}, false, false, ""},
		{"the pod never restarts", func(s *corev1.PodSpec) { s.RestartPolicy = corev1.RestartPolicyNever },
			[]corev1.ContainerStatus{running("app"), terminated("sidecar", 1)}, []corev1.ContainerStatus{running("app"), running("sidecar")}, false, false, refused},
		{"a failure restarts on failure", func(s *corev1.PodSpec) { s.RestartPolicy = corev1.RestartPolicyOnFailure },
			[]corev1.ContainerStatus{running("app"), terminated("sidecar", 1)}, []corev1.ContainerStatus{running("app"), running("sidecar")}, false, false, ""},
		{"a success does not restart on failure", func(s *corev1.PodSpec) { s.RestartPolicy = corev1.RestartPolicyOnFailure },
			[]corev1.ContainerStatus{running("app"), terminated("sidecar", 0)}, []corev1.ContainerStatus{running("app"), running("sidecar")}, false, false, refused},
		{"the container's policy wins", func(s *corev1.PodSpec) { s.Containers[1].RestartPolicy = &never },
			[]corev1.ContainerStatus{running("app"), terminated("sidecar", 1)}, []corev1.ContainerStatus{running("app"), running("sidecar")}, false, false, refused},
		{"a matching rule restarts", func(s *corev1.PodSpec) {
			s.RestartPolicy, s.Containers[1].RestartPolicy, s.Containers[1].RestartPolicyRules = corev1.RestartPolicyNever, &never, restartOn42
		}, []corev1.ContainerStatus{running("app"), terminated("sidecar", 42)}, []corev1.ContainerStatus{running("app"), running("sidecar")}, false, false, ""},
		{"a rule not matching leaves the policy", func(s *corev1.PodSpec) {
			s.RestartPolicy, s.Containers[1].RestartPolicy, s.Containers[1].RestartPolicyRules = corev1.RestartPolicyNever, &onFailure, restartOn42
		}, []corev1.ContainerStatus{running("app"), terminated("sidecar", 0)}, []corev1.ContainerStatus{running("app"), running("sidecar")}, false, false, refused},
		{"a RestartAllContainers rule lets all restart", func(s *corev1.PodSpec) {
			s.RestartPolicy = corev1.RestartPolicyNever
			s.Containers[0].RestartPolicy, s.Containers[0].RestartPolicyRules = &never, []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}}}}
		}, []corev1.ContainerStatus{running("app"), terminated("sidecar", 0)}, []corev1.ContainerStatus{running("app"), running("sidecar")}, false, false, ""},
		{"a status of no container", func(s *corev1.PodSpec) { s.RestartPolicy = corev1.RestartPolicyOnFailure },
			[]corev1.ContainerStatus{running("app"), terminated("ghost", 1)}, []corev1.ContainerStatus{running("app"), running("ghost")}, false, false, refused},
		{"an init container", func(s *corev1.PodSpec) { s.RestartPolicy = corev1.RestartPolicyNever },
			[]corev1.ContainerStatus{terminated("init", 0)}, []corev1.ContainerStatus{running("init")}, true, false,
			`Pod "web" is invalid: status.initContainerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state`},
		{"an ephemeral container, in a pod that restarts always", nil,
			[]corev1.ContainerStatus{terminated("debug", 1)}, []corev1.ContainerStatus{running("debug"), running("debug")}, false, true,
			`Pod "web" is invalid: status.ephemeralContainerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := func(p *corev1.Pod, statuses []corev1.ContainerStatus) {
				switch {
				case tt.init:
					p.Status.InitContainerStatuses = statuses
				case tt.ephem:
					p.Status.EphemeralContainerStatuses = statuses
				default:
					p.Status.ContainerStatuses = statuses
				}
			}
			p := newPods(t)
			stored := p.seed(t, modified(validPod(), func(p *corev1.Pod) {
				if tt.spec != nil {
					tt.spec(&p.Spec)
				}
				set(p, tt.old)
			}))
			_, _, err := p.status.Update(genericapirequest.WithNamespace(context.Background(), "default"), "web",
				rest.DefaultUpdatedObjectInfo(modified(stored, func(p *corev1.Pod) { set(p, tt.now) })),
				rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if got := fmt.Sprint(err); (err != nil || tt.want != "") && got != tt.want {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
		})
	}
}

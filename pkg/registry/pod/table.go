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
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

var (
	podSpecDoc   = corev1.PodSpec{}.SwaggerDoc()
	podStatusDoc = corev1.PodStatus{}.SwaggerDoc()
)

// table is upstream's pod printer (k8s.io/kubernetes
// pkg/printers/internalversion printPod), wide, as a server's Table is.
var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
		registry.AgeColumn,
		{Name: "IP", Type: "string", Priority: 1, Description: podStatusDoc["podIP"]},
		{Name: "Node", Type: "string", Priority: 1, Description: podSpecDoc["nodeName"]},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: podStatusDoc["nominatedNodeName"]},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: podSpecDoc["readinessGates"]},
	},
	Cells: func(obj runtime.Object) []any { return cells(obj.(*corev1.Pod)) },
}

// nodeUnreachableReason is the reason the node lifecycle controller gives
// the pods of a node it lost.
const nodeUnreachableReason = "NodeLost"

// cells is upstream's printPod: READY counts the running ready containers
// (and started sidecars), STATUS is the phase, or the reason of the first
// init container not done, or of the last container waiting or terminated,
// RESTARTS adds when the last restart was.
func cells(pod *corev1.Pod) []any {
	restarts, sidecarRestarts := 0, 0
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0
	var lastRestart, lastSidecarRestart metav1.Time

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	initContainers := map[string]*corev1.Container{}
	for i := range pod.Spec.InitContainers {
		initContainers[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if isSidecar(&pod.Spec.InitContainers[i]) {
			totalContainers++
		}
	}
	later := func(last *metav1.Time, s corev1.ContainerStatus) {
		if t := s.LastTerminationState.Terminated; t != nil && last.Before(&t.FinishedAt) {
			*last = t.FinishedAt
		}
	}

	initializing := false
	for i, s := range pod.Status.InitContainerStatuses {
		restarts += int(s.RestartCount)
		later(&lastRestart, s)
		sidecar := isSidecar(initContainers[s.Name])
		if sidecar {
			sidecarRestarts += int(s.RestartCount)
			later(&lastSidecarRestart, s)
		}
		switch {
		case s.State.Terminated != nil && s.State.Terminated.ExitCode == 0:
			continue
		case sidecar && s.Started != nil && *s.Started:
			if s.Ready {
				readyContainers++
			}
			continue
		case s.State.Terminated != nil: // initialization failed
			switch t := s.State.Terminated; {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case s.State.Waiting != nil && s.State.Waiting.Reason != "" && s.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + s.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || hasCondition(pod, corev1.PodInitialized) {
		restarts, lastRestart = sidecarRestarts, lastSidecarRestart
		hasRunning, errorReason := false, ""
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			s := pod.Status.ContainerStatuses[i]
			restarts += int(s.RestartCount)
			later(&lastRestart, s)
			switch {
			case s.State.Waiting != nil && s.State.Waiting.Reason != "":
				reason = s.State.Waiting.Reason
			case s.State.Terminated != nil:
				switch t := s.State.Terminated; {
				case t.Reason != "":
					reason = t.Reason
				case t.Signal != 0:
					reason = fmt.Sprintf("Signal:%d", t.Signal)
				default:
					reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
				}
				if s.State.Terminated.ExitCode != 0 {
					errorReason = reason
				}
			case s.Ready && s.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}
		// Back to Running if a container still runs.
		if reason == "Completed" {
			switch {
			case hasRunning && hasCondition(pod, corev1.PodReady):
				reason = "Running"
			case errorReason != "":
				reason = errorReason
			case hasRunning:
				reason = "NotReady"
			}
		}
	}

	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachableReason:
		reason = "Unknown"
	case pod.DeletionTimestamp != nil && !terminal:
		reason = "Terminating"
	}

	restartsCell := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsCell = fmt.Sprintf("%d (%s ago)", restarts, registry.Age(lastRestart))
	}

	ip := pod.Status.PodIP // the first of podIPs, which the API keeps in step with it
	if len(pod.Status.PodIPs) > 0 {
		ip = pod.Status.PodIPs[0].IP
	}
	readinessGates := "<none>"
	if len(pod.Spec.ReadinessGates) > 0 {
		met := 0
		for _, g := range pod.Spec.ReadinessGates {
			for _, c := range pod.Status.Conditions {
				if c.Type == g.ConditionType {
					if c.Status == corev1.ConditionTrue {
						met++
					}
					break
				}
			}
		}
		readinessGates = fmt.Sprintf("%d/%d", met, len(pod.Spec.ReadinessGates))
	}
	return []any{pod.Name, fmt.Sprintf("%d/%d", readyContainers, totalContainers), reason, restartsCell, registry.Age(pod.CreationTimestamp),
		orNone(ip), orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), readinessGates}
}

// isSidecar reports whether c is a restartable init container.
func isSidecar(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func hasCondition(pod *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

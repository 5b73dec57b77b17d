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
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateStateTransitions is upstream's ValidateContainerStateTransition,
// ValidateInitContainerStateTransition and
// ValidateEphemeralContainerStateTransition with ContainerRestartRules and
// RestartAllContainersOnContainerExits on (both beta in 1.37): a container
// terminated in old's status may leave that state only if its restart
// policy or rules would restart it, or a RestartAllContainers rule in the
// pod could; an ephemeral container never.
func validateStateTransitions(p, old *corev1.Pod) field.ErrorList {
	statusPath := field.NewPath("status")
	var errs field.ErrorList
	if !allContainersCouldRestart(&old.Spec) {
		errs = append(errs, stateTransitions(p.Status.ContainerStatuses, old.Status.ContainerStatuses, old.Spec.Containers, &old.Spec, statusPath.Child("containerStatuses"))...)
		errs = append(errs, stateTransitions(p.Status.InitContainerStatuses, old.Status.InitContainerStatuses, old.Spec.InitContainers, &old.Spec, statusPath.Child("initContainerStatuses"))...)
	}
	return append(errs, stateTransitions(p.Status.EphemeralContainerStatuses, old.Status.EphemeralContainerStatuses, nil, nil, statusPath.Child("ephemeralContainerStatuses"))...)
}

// stateTransitions refuses a status in statuses that leaves the terminated
// state its namesake in old had, unless its container in containers would
// restart; spec nil is for ephemeral containers, which never do.
func stateTransitions(statuses, old []corev1.ContainerStatus, containers []corev1.Container, spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, o := range old {
		if o.State.Terminated == nil {
			continue
		}
		for _, s := range statuses {
			if s.Name != o.Name || s.State.Terminated != nil {
				continue
			}
			c := slices.IndexFunc(containers, func(c corev1.Container) bool { return c.Name == o.Name })
			if spec == nil || c < 0 || !shouldRestart(&containers[c], spec, o.State.Terminated.ExitCode) {
				errs = append(errs, field.Forbidden(path.Index(i).Child("state"), "may not be transitioned to non-terminated state"))
			}
			if spec != nil { // upstream's ephemeral check goes on to later namesakes
				break
			}
		}
	}
	return errs
}

// shouldRestart is k8s.io/kubernetes' ContainerShouldRestart
// (pkg/api/v1/pod): the first restart rule matching exitCode if it
// restarts, else the container's restart policy, else the pod's.
func shouldRestart(c *corev1.Container, spec *corev1.PodSpec, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := matchingRestartRule(c, exitCode); ok {
			switch rule.Action {
			case corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleActionRestartAllContainers:
				return true
			}
		}
		switch *c.RestartPolicy {
		case corev1.ContainerRestartPolicyAlways:
			return true
		case corev1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case corev1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	case corev1.RestartPolicyNever:
		return false
	}
	return true // Always, the default
}

// matchingRestartRule is upstream's FindMatchingContainerRestartRule.
func matchingRestartRule(c *corev1.Container, exitCode int32) (corev1.ContainerRestartRule, bool) {
	for _, rule := range c.RestartPolicyRules {
		if rule.ExitCodes == nil {
			continue
		}
		in := slices.Contains(rule.ExitCodes.Values, exitCode)
		switch rule.ExitCodes.Operator {
		case corev1.ContainerRestartRuleOnExitCodesOpIn:
			if in {
				return rule, true
			}
		case corev1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !in {
				return rule, true
			}
		}
	}
	return corev1.ContainerRestartRule{}, false
}

// allContainersCouldRestart is upstream's AllContainersCouldRestart: a
// container of the pod has a RestartAllContainers rule.
func allContainersCouldRestart(spec *corev1.PodSpec) bool {
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, rule := range c.RestartPolicyRules {
			if rule.Action == corev1.ContainerRestartRuleActionRestartAllContainers {
				return true
			}
		}
	}
	return false
}

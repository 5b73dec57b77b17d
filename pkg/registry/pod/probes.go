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

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateHandlers is upstream's check of a container's lifecycle hooks
// and probes (validateLifecycle, validateLivenessProbe,
// validateReadinessProbe, validateStartupProbe).
func validateHandlers(c *corev1.Container, spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	grace := spec.TerminationGracePeriodSeconds
	var errs field.ErrorList
	if l := c.Lifecycle; l != nil {
		lp := p.Child("lifecycle")
		if l.PostStart != nil {
			errs = append(errs, validateHandler(lifecycleHandler(l.PostStart), grace, lp.Child("postStart"))...)
		}
		if l.PreStop != nil {
			errs = append(errs, validateHandler(lifecycleHandler(l.PreStop), grace, lp.Child("preStop"))...)
		}
		if l.StopSignal != nil {
			errs = append(errs, validateStopSignal(l.StopSignal, spec.OS, lp.Child("stopSignal"))...)
		}
	}
	if probe := c.LivenessProbe; probe != nil {
		lp := p.Child("livenessProbe")
		errs = append(errs, validateProbe(probe, grace, lp)...)
		if probe.SuccessThreshold != 1 {
			errs = append(errs, field.Invalid(lp.Child("successThreshold"), probe.SuccessThreshold, "must be 1"))
		}
	}
	if probe := c.ReadinessProbe; probe != nil {
		rp := p.Child("readinessProbe")
		errs = append(errs, validateProbe(probe, grace, rp)...)
		if probe.TerminationGracePeriodSeconds != nil {
			errs = append(errs, field.Invalid(rp.Child("terminationGracePeriodSeconds"), probe.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
		}
	}
	if probe := c.StartupProbe; probe != nil {
		sp := p.Child("startupProbe")
		errs = append(errs, validateProbe(probe, grace, sp)...)
		if probe.SuccessThreshold != 1 {
			errs = append(errs, field.Invalid(sp.Child("successThreshold"), probe.SuccessThreshold, "must be 1"))
		}
	}
	return errs
}

// validateProbe is upstream's: one valid handler, counts not negative.
func validateProbe(probe *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	h := probe.ProbeHandler
	errs := validateHandler(handler{exec: h.Exec, httpGet: h.HTTPGet, tcpSocket: h.TCPSocket, grpc: h.GRPC}, grace, p)
	for _, f := range []struct {
		name  string
		value int32
	}{{"initialDelaySeconds", probe.InitialDelaySeconds}, {"timeoutSeconds", probe.TimeoutSeconds}, {"periodSeconds", probe.PeriodSeconds},
		{"successThreshold", probe.SuccessThreshold}, {"failureThreshold", probe.FailureThreshold}} {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(f.value), p.Child(f.name))...)
	}
	if g := probe.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
	}
	return errs
}

// handler is upstream's commonHandler: a probe's or a hook's actions.
type handler struct {
	exec      *corev1.ExecAction
	httpGet   *corev1.HTTPGetAction
	tcpSocket *corev1.TCPSocketAction
	grpc      *corev1.GRPCAction
	sleep     *corev1.SleepAction
}

func lifecycleHandler(h *corev1.LifecycleHandler) handler {
	return handler{exec: h.Exec, httpGet: h.HTTPGet, tcpSocket: h.TCPSocket, sleep: h.Sleep}
}

// validateHandler is upstream's: exactly one action, valid.
func validateHandler(h handler, grace *int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	action := func(name string, set bool, validate func(*field.Path) field.ErrorList) {
		switch {
		case !set:
		case n > 0:
			errs = append(errs, field.Forbidden(p.Child(name), "may not specify more than 1 handler type"))
		default:
			n++
			errs = append(errs, validate(p.Child(name))...)
		}
	}
	action("exec", h.exec != nil, func(p *field.Path) field.ErrorList {
		if len(h.exec.Command) == 0 {
			return field.ErrorList{field.Required(p.Child("command"), "")}
		}
		return nil
	})
	action("httpGet", h.httpGet != nil, func(p *field.Path) field.ErrorList { return validateHTTPGet(h.httpGet, p) })
	action("tcpSocket", h.tcpSocket != nil, func(p *field.Path) field.ErrorList { return ValidatePortNumOrName(h.tcpSocket.Port, p.Child("port")) })
	action("grpc", h.grpc != nil, func(p *field.Path) field.ErrorList {
		errs := ValidatePortNumOrName(intstr.FromInt32(h.grpc.Port), p.Child("port"))
		if m := h.grpc.Mode; m != nil && *m != corev1.GRPCProbeModePlaintext && *m != corev1.GRPCProbeModeTLS {
			errs = append(errs, field.NotSupported(p.Child("mode"), *m, []corev1.GRPCProbeMode{corev1.GRPCProbeModePlaintext, corev1.GRPCProbeModeTLS}))
		}
		return errs
	})
	action("sleep", h.sleep != nil, func(p *field.Path) field.ErrorList {
		if grace != nil && (h.sleep.Seconds < 0 || h.sleep.Seconds > *grace) {
			return field.ErrorList{field.Invalid(p, h.sleep.Seconds, fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *grace))}
		}
		return nil
	})
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a handler type"))
	}
	return errs
}

// validateHTTPGet is upstream's validateHTTPGetAction.
func validateHTTPGet(h *corev1.HTTPGetAction, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, ValidatePortNumOrName(h.Port, p.Child("port"))...)
	if h.Scheme != corev1.URISchemeHTTP && h.Scheme != corev1.URISchemeHTTPS {
		errs = append(errs, field.NotSupported(p.Child("scheme"), h.Scheme, []corev1.URIScheme{corev1.URISchemeHTTP, corev1.URISchemeHTTPS}))
	}
	for _, header := range h.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(header.Name) {
			errs = append(errs, field.Invalid(p.Child("httpHeaders"), header.Name, msg))
		}
	}
	switch proto := h.Protocol; {
	case proto == nil:
	case *proto != corev1.HTTPProtocolHTTP1 && *proto != corev1.HTTPProtocolHTTP2:
		errs = append(errs, field.NotSupported(p.Child("protocol"), *proto, []corev1.HTTPProtocol{corev1.HTTPProtocolHTTP1, corev1.HTTPProtocolHTTP2}))
	case *proto == corev1.HTTPProtocolHTTP2 && h.Scheme != corev1.URISchemeHTTP:
		errs = append(errs, field.Invalid(p.Child("protocol"), *proto, "is only supported with HTTP (H2C)"))
	case *proto == corev1.HTTPProtocolHTTP2 && h.Host != "":
		errs = append(errs, field.Invalid(p.Child("host"), h.Host, "must be empty when `protocol` is \"HTTP2\""))
	}
	return errs
}

// validatePortNumOrName is upstream's ValidatePortNumOrName.
func ValidatePortNumOrName(port intstr.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(p, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(p, port.StrVal, msg))
		}
	default:
		errs = append(errs, field.InternalError(p, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return errs
}

// linuxStopSignals are the signals a Linux container may be stopped by.
var linuxStopSignals = func() sets.Set[corev1.Signal] {
	s := sets.New[corev1.Signal]("SIGABRT", "SIGALRM", "SIGBUS", "SIGCHLD", "SIGCLD", "SIGCONT", "SIGFPE", "SIGHUP", "SIGILL", "SIGINT",
		"SIGIO", "SIGIOT", "SIGKILL", "SIGPIPE", "SIGPOLL", "SIGPROF", "SIGPWR", "SIGQUIT", "SIGSEGV", "SIGSTKFLT", "SIGSTOP", "SIGSYS",
		"SIGTERM", "SIGTRAP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGUSR1", "SIGUSR2", "SIGVTALRM", "SIGWINCH", "SIGXCPU",
		"SIGXFSZ", "SIGRTMIN", "SIGRTMAX")
	for i := 1; i <= 15; i++ {
		s.Insert(corev1.Signal(fmt.Sprint("SIGRTMIN+", i)))
	}
	for i := 1; i <= 14; i++ {
		s.Insert(corev1.Signal(fmt.Sprint("SIGRTMAX-", i)))
	}
	return s
}()

// validateStopSignal is upstream's: only for a pod that names its OS,
// and one of that OS's signals.
func validateStopSignal(signal *corev1.Signal, os *corev1.PodOS, p *field.Path) field.ErrorList {
	switch {
	case os == nil:
		return field.ErrorList{field.Forbidden(p, "may not be set for containers with empty `spec.os.name`")}
	case os.Name == corev1.Windows && *signal != corev1.SIGKILL && *signal != corev1.SIGTERM:
		return field.ErrorList{field.NotSupported(p, signal, []corev1.Signal{corev1.SIGKILL, corev1.SIGTERM})}
	case os.Name == corev1.Linux && !linuxStopSignals.Has(*signal):
		return field.ErrorList{field.NotSupported(p, signal, sets.List(linuxStopSignals))}
	}
	return nil
}

var (
	containerRestartPolicies = []corev1.ContainerRestartPolicy{corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyNever, corev1.ContainerRestartPolicyOnFailure}
	restartRuleActions       = []corev1.ContainerRestartRuleAction{corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleActionRestartAllContainers}
	restartRuleOperators     = []corev1.ContainerRestartRuleOnExitCodesOperator{corev1.ContainerRestartRuleOnExitCodesOpIn, corev1.ContainerRestartRuleOnExitCodesOpNotIn}
)

// validateRestartPolicy is upstream's validateContainerRestartPolicy with
// ContainerRestartRules and RestartAllContainersOnContainerExits on: a
// policy where there are rules, at most 20 rules, each with a known
// action and exit codes.
func validateRestartPolicy(c *corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch policy := c.RestartPolicy; {
	case policy == nil && len(c.RestartPolicyRules) == 0:
		return nil
	case policy == nil:
		errs = append(errs, field.Required(p.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
	case !sets.New(containerRestartPolicies...).Has(*policy):
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), *policy, containerRestartPolicies))
	}
	rulesPath := p.Child("restartPolicyRules")
	if len(c.RestartPolicyRules) > 20 {
		errs = append(errs, field.TooMany(rulesPath, len(c.RestartPolicyRules), 20))
	}
	for i, rule := range c.RestartPolicyRules {
		rp := rulesPath.Index(i)
		if !sets.New(restartRuleActions...).Has(rule.Action) {
			errs = append(errs, field.NotSupported(rp.Child("action"), rule.Action, restartRuleActions))
		}
		if rule.ExitCodes == nil {
			errs = append(errs, field.Required(rp.Child("exitCodes"), "must be specified"))
			continue
		}
		if !sets.New(restartRuleOperators...).Has(rule.ExitCodes.Operator) {
			errs = append(errs, field.NotSupported(rp.Child("exitCodes", "operator"), rule.ExitCodes.Operator, restartRuleOperators))
		}
		if len(rule.ExitCodes.Values) > 255 {
			errs = append(errs, field.TooMany(rp.Child("exitCodes", "values"), len(rule.ExitCodes.Values), 255))
		}
	}
	return errs
}

// validateInitRestartPolicy is upstream's validateInitContainerRestartPolicy
// with the same gates on: rules need a policy.
func validateInitRestartPolicy(c *corev1.Container, p *field.Path) field.ErrorList {
	if c.RestartPolicy == nil {
		if len(c.RestartPolicyRules) > 0 {
			return field.ErrorList{field.Required(p.Child("restartPolicy"), "must specify restartPolicy when restart rules are used")}
		}
		return nil
	}
	return validateRestartPolicy(c, p)
}

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
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The parts of the pod warnings (warnings.go) that look at one field.

func hasKey(m map[string]string, key string) bool {
	_, ok := m[key]
	return ok
}

// visitContainers calls visit with every container of spec and its path,
// the ephemeral containers' common part included.
func visitContainers(spec *corev1.PodSpec, specPath *field.Path, visit func(c *corev1.Container, p *field.Path)) {
	for i := range spec.InitContainers {
		visit(&spec.InitContainers[i], specPath.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		visit(&spec.Containers[i], specPath.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		visit((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), specPath.Child("ephemeralContainers").Index(i))
	}
}

// duplicateWarnings warns of each item whose key an earlier item has.
func duplicateWarnings[T any](items []T, path *field.Path, child, format string, key func(T) string) []string {
	var warnings []string
	seen := sets.New[string]()
	for i, item := range items {
		k := key(item)
		if seen.Has(k) {
			warnings = append(warnings, fmt.Sprintf("%s: "+format, path.Index(i).Child(child), k))
		}
		seen.Insert(k)
	}
	return warnings
}

// fractionalWarnings warns of a byte quantity with a fraction of a byte.
func fractionalWarnings(list corev1.ResourceList, name corev1.ResourceName, path *field.Path) []string {
	if value, ok := list[name]; ok && value.MilliValue()%1000 != 0 {
		return []string{fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer", path.Key(string(name)), value.String())}
	}
	return nil
}

// envWarnings warns of a variable that hides an earlier one of its name,
// unless it extends it (X="$(X)123").
func envWarnings(env []corev1.EnvVar, path *field.Path) []string {
	var warnings []string
	seen := sets.New[string]()
	for i, e := range env {
		if !seen.Has(e.Name) {
			seen.Insert(e.Name)
			continue
		}
		ref := fmt.Sprintf("$(%s)", e.Name)
		if e.ValueFrom != nil || e.Value == ref || !strings.Contains(e.Value, ref) {
			warnings = append(warnings, fmt.Sprintf("%s: hides previous definition of %q, which may be dropped when using apply", path.Index(i), e.Name))
		}
	}
	return warnings
}

// portWarnings warns of ports that overlap, over all containers, then of
// port names given twice.
func portWarnings(spec *corev1.PodSpec, specPath *field.Path) []string {
	type portAt struct {
		path *field.Path
		port corev1.ContainerPort
	}
	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	byNumber := map[string][]portAt{}
	visitContainers(spec, specPath, func(c *corev1.Container, p *field.Path) {
		for i, port := range c.Ports {
			at := portAt{p.Child("ports").Index(i), port}
			if port.HostIP != "" && port.HostPort == 0 {
				warn("%s: hostIP set without hostPort: %+v", at.path, port)
			}
			k := fmt.Sprintf("%d/%s", port.ContainerPort, port.Protocol)
			for _, other := range byNumber[k] {
				switch a, b := port.HostIP == "", other.port.HostIP == ""; {
				case port.HostIP == other.port.HostIP && port.HostPort == other.port.HostPort:
					warn("%s: duplicate port definition with %s", at.path, other.path)
				case port.HostPort == 0 || other.port.HostPort == 0:
					warn("%s: overlapping port definition with %s", at.path, other.path)
				case port.HostPort == other.port.HostPort && a != b:
					warn("%s: dangerously ambiguous port definition with %s", at.path, other.path)
				}
			}
			byNumber[k] = append(byNumber[k], at)
		}
	})
	byName := map[string]*field.Path{}
	visitContainers(spec, specPath, func(c *corev1.Container, p *field.Path) {
		for i, port := range c.Ports {
			if port.Name == "" {
				continue
			}
			if other, ok := byName[port.Name]; ok {
				warn("%s: duplicate port name %q with %s, services and probes that select ports by name will use %s", p.Child("ports").Index(i), port.Name, other, other)
			} else {
				byName[port.Name] = p.Child("ports").Index(i)
			}
		}
	})
	return warnings
}

// appArmorProfileOf returns the profile a deprecated AppArmor annotation
// names, or nil (upstream's ApparmorFieldForAnnotation).
func appArmorProfileOf(annotation string) *corev1.AppArmorProfile {
	switch {
	case annotation == corev1.DeprecatedAppArmorBetaProfileNameUnconfined:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	case annotation == corev1.DeprecatedAppArmorBetaProfileRuntimeDefault:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	case strings.HasPrefix(annotation, corev1.DeprecatedAppArmorBetaProfileNamePrefix):
		if name := strings.TrimPrefix(annotation, corev1.DeprecatedAppArmorBetaProfileNamePrefix); name != "" {
			return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
		}
	}
	return nil
}

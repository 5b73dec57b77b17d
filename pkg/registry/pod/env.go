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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
)

// validateEnv is upstream's ValidateEnv with RelaxedEnvironmentVariableValidation
// and EnvFiles on (GA and beta in 1.37): names, and each valueFrom.
func validateEnv(vars []corev1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range vars {
		ip := p.Index(i)
		if ev.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		for _, msg := range relaxedEnvVarName(ev.Name) {
			errs = append(errs, field.Invalid(ip.Child("name"), ev.Name, msg))
		}
		errs = append(errs, validateValueFrom(ev, ip.Child("valueFrom"))...)
	}
	return errs
}

// relaxedEnvVarName is k8s.io/apimachinery's IsRelaxedEnvVarName of a
// name that is not empty.
func relaxedEnvVarName(name string) []string {
	if name == "" {
		return nil
	}
	return validation.IsRelaxedEnvVarName(name)
}

// envFieldPaths are the pod fields an environment variable may read.
var envFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
	"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")

// containerResourcePaths are the resources a resourceFieldRef may read.
var containerResourcePaths = sets.New("limits.cpu", "limits.memory", "limits.ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage")

// validateValueFrom is upstream's validateEnvVarValueFrom: one source, valid,
// and no value beside it.
func validateValueFrom(ev corev1.EnvVar, p *field.Path) field.ErrorList {
	from := ev.ValueFrom
	if from == nil {
		return nil
	}
	var errs field.ErrorList
	sources := 0
	if from.FieldRef != nil {
		sources++
		errs = append(errs, validateObjectFieldSelector(from.FieldRef, envFieldPaths, p.Child("fieldRef"))...)
	}
	if from.ResourceFieldRef != nil {
		sources++
		errs = append(errs, validateResourceFieldSelector(from.ResourceFieldRef, false, p.Child("resourceFieldRef"))...)
	}
	if ref := from.ConfigMapKeyRef; ref != nil {
		sources++
		errs = append(errs, validateKeySelector(ref.Name, ref.Key, p.Child("configMapKeyRef"))...)
	}
	if ref := from.SecretKeyRef; ref != nil {
		sources++
		errs = append(errs, validateKeySelector(ref.Name, ref.Key, p.Child("secretKeyRef"))...)
	}
	if ref := from.FileKeyRef; ref != nil {
		sources++
		errs = append(errs, validateFileKeySelector(ref, p.Child("fileKeyRef"))...)
	}
	switch {
	case sources == 0:
		errs = append(errs, field.Invalid(p, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case ev.Value != "":
		errs = append(errs, field.Invalid(p, "", "may not be specified when `value` is not empty"))
	case sources > 1:
		errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
	}
	return errs
}

// validateObjectFieldSelector is upstream's: an API version and a field
// path it can convert (ConvertDownwardAPIFieldLabel), among paths or a
// label or annotation by key.
func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, paths sets.Set[string], p *field.Path) field.ErrorList {
	switch {
	case fs.APIVersion == "":
		return field.ErrorList{field.Required(p.Child("apiVersion"), "")}
	case fs.FieldPath == "":
		return field.ErrorList{field.Required(p.Child("fieldPath"), "")}
	}
	internal, err := downwardAPIFieldLabel(fs.APIVersion, fs.FieldPath)
	if err != nil {
		return field.ErrorList{field.Invalid(p.Child("fieldPath"), fs.FieldPath, fmt.Sprintf("error converting fieldPath: %v", err))}
	}
	path, subscript, ok := splitSubscriptedPath(internal)
	var errs field.ErrorList
	switch {
	case ok && path == "metadata.annotations":
		subscript = strings.ToLower(subscript)
		fallthrough
	case ok && path == "metadata.labels":
		for _, msg := range validation.IsQualifiedName(subscript) {
			errs = append(errs, field.Invalid(p, subscript, msg))
		}
	case ok:
		errs = append(errs, field.Invalid(p, path, "does not support subscript"))
	case !paths.Has(path):
		errs = append(errs, field.NotSupported(p.Child("fieldPath"), path, sets.List(paths)))
	}
	return errs
}

// downwardAPIFieldLabel is k8s.io/kubernetes' ConvertDownwardAPIFieldLabel
// (pkg/apis/core/pods) of a pod's field.
func downwardAPIFieldLabel(version, label string) (string, error) {
	if version != "v1" {
		return "", fmt.Errorf("unsupported pod version: %s", version)
	}
	if path, _, ok := splitSubscriptedPath(label); ok {
		if path == "metadata.annotations" || path == "metadata.labels" {
			return label, nil
		}
		return "", fmt.Errorf("field label does not support subscript: %s", label)
	}
	switch label {
	case "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
		"spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName", "status.phase", "status.hostIP", "status.hostIPs",
		"status.podIP", "status.podIPs":
		return label, nil
	case "spec.host": // old v1 clients'
		return "spec.nodeName", nil
	}
	return "", fmt.Errorf("field label not supported: %s", label)
}

// splitSubscriptedPath is k8s.io/kubernetes' SplitMaybeSubscriptedPath
// (pkg/fieldpath): "metadata.labels['a']" is metadata.labels and a.
func splitSubscriptedPath(fieldPath string) (string, string, bool) {
	s, ok := strings.CutSuffix(fieldPath, "']")
	if !ok {
		return fieldPath, "", false
	}
	path, subscript, ok := strings.Cut(s, "['")
	if !ok || path == "" {
		return fieldPath, "", false
	}
	return path, subscript, true
}

// validateResourceFieldSelector is upstream's validateContainerResourceFieldSelector:
// a container (in a volume), and a resource it reads, with a divisor of
// its units.
func validateResourceFieldSelector(fs *corev1.ResourceFieldSelector, volume bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case volume && fs.ContainerName == "":
		errs = append(errs, field.Required(p.Child("containerName"), ""))
	case fs.Resource == "":
		errs = append(errs, field.Required(p.Child("resource"), ""))
	case !containerResourcePaths.Has(fs.Resource) && !strings.HasPrefix(fs.Resource, "limits.hugepages-") && !strings.HasPrefix(fs.Resource, "requests.hugepages-"):
		errs = append(errs, field.NotSupported(p.Child("resource"), fs.Resource, sets.List(containerResourcePaths)))
	}
	return append(errs, validateDivisor(fs.Resource, fs.Divisor, p)...)
}

var (
	cpuDivisors  = []string{"1m", "1"}
	byteDivisors = []string{"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"}
)

// validateDivisor is upstream's validateContainerResourceDivisor.
func validateDivisor(name string, divisor resource.Quantity, p *field.Path) field.ErrorList {
	if divisor.IsZero() {
		return nil
	}
	const bytes = "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the "
	d := divisor.String()
	var errs field.ErrorList
	switch name {
	case "limits.cpu", "requests.cpu":
		if !slices.Contains(cpuDivisors, d) {
			errs = append(errs, field.Invalid(p.Child("divisor"), name, "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	case "limits.memory", "requests.memory":
		if !slices.Contains(byteDivisors, d) {
			errs = append(errs, field.Invalid(p.Child("divisor"), name, bytes+"memory resource"))
		}
	case "limits.ephemeral-storage", "requests.ephemeral-storage":
		if !slices.Contains(byteDivisors, d) {
			errs = append(errs, field.Invalid(p.Child("divisor"), name, bytes+"local ephemeral storage resource"))
		}
	}
	if (strings.HasPrefix(name, "requests.hugepages-") || strings.HasPrefix(name, "limits.hugepages-")) && !slices.Contains(byteDivisors, d) {
		errs = append(errs, field.Invalid(p.Child("divisor"), name, bytes+"hugepages resource"))
	}
	return errs
}

// validateKeySelector is upstream's validateConfigMapKeySelector and
// validateSecretKeySelector: a name (if any) and a key.
func validateKeySelector(name, key string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(p.Child("name"), name, msg))
	}
	if key == "" {
		return append(errs, field.Required(p.Child("key"), ""))
	}
	for _, msg := range validation.IsConfigMapKey(key) {
		errs = append(errs, field.Invalid(p.Child("key"), key, msg))
	}
	return errs
}

// validateFileKeySelector is upstream's: a key, a volume and a path with
// no backsteps.
func validateFileKeySelector(s *corev1.FileKeySelector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	}
	for _, msg := range relaxedEnvVarName(s.Key) {
		errs = append(errs, field.Invalid(p.Child("key"), s.Key, msg))
	}
	if s.VolumeName == "" {
		errs = append(errs, field.Required(p.Child("volumeName"), ""))
	}
	errs = append(errs, dns1123Label(s.VolumeName, p.Child("volumeName"))...)
	if s.Path == "" {
		return append(errs, field.Required(p.Child("path"), ""))
	}
	return append(errs, volume.PathNoBacksteps(s.Path, p.Child("path"))...)
}

// validateEnvFrom is upstream's ValidateEnvFrom: prefixes, and one source
// each, named.
func validateEnvFrom(sources []corev1.EnvFromSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range sources {
		ip := p.Index(i)
		for _, msg := range relaxedEnvVarName(ev.Prefix) {
			errs = append(errs, field.Invalid(ip.Child("prefix"), ev.Prefix, msg))
		}
		n := 0
		if ref := ev.ConfigMapRef; ref != nil {
			n++
			errs = append(errs, validateRefName(ref.Name, ip.Child("configMapRef", "name"))...)
		}
		if ref := ev.SecretRef; ref != nil {
			n++
			errs = append(errs, validateRefName(ref.Name, ip.Child("secretRef", "name"))...)
		}
		switch {
		case n == 0:
			errs = append(errs, field.Invalid(p, "", "must specify one of: `configMapRef` or `secretRef`"))
		case n > 1:
			errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

// validateRefName is upstream's check of a ConfigMap's or Secret's name an
// envFrom names: required, a DNS subdomain (as a prefix: a trailing dash
// allowed).
func validateRefName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, true) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// validateFileKeyRefVolumes is upstream's: a fileKeyRef reads an emptyDir
// volume of the pod.
func validateFileKeyRefVolumes(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	visitContainers(spec, p, func(c *corev1.Container, cp *field.Path) {
		for j, env := range c.Env {
			if env.ValueFrom == nil || env.ValueFrom.FileKeyRef == nil {
				continue
			}
			name, np := env.ValueFrom.FileKeyRef.VolumeName, cp.Child("env").Index(j).Child("valueFrom", "fileKeyRef", "volumeName")
			switch i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == name }); {
			case i < 0:
				errs = append(errs, field.NotFound(np, name))
			case spec.Volumes[i].EmptyDir == nil:
				errs = append(errs, field.Invalid(np, name, "referenced volume must be of type emptyDir"))
			}
		}
	})
	return errs
}

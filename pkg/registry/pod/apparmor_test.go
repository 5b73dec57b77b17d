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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestAppArmorVersionSkew: as upstream's create, a container's deprecated
// annotation becomes its profile field unless it is the pod's profile or
// names no valid one, and is warned of unless it is the pod's profile.
func TestAppArmorVersionSkew(t *testing.T) {
	const prefix = corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix
	localhost := &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("web")}
	warning := func(container string) string {
		return `metadata.annotations[container.apparmor.security.beta.kubernetes.io/` + container + `]: deprecated since v1.30; use the "appArmorProfile" field instead`
	}
	tests := []struct {
		name        string
		annotations map[string]string
		podProfile  *corev1.AppArmorProfile
		want        []*corev1.AppArmorProfile // of init, app and sidecar
		warnings    []string
	}{
		{"copied unless the pod's", map[string]string{prefix + "init": "runtime/default", prefix + "app": "localhost/web"},
			&corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}, []*corev1.AppArmorProfile{nil, localhost, nil}, []string{warning("app")}},
		{"no valid profile: warned of only", map[string]string{prefix + "sidecar": "localhost/ padded"},
			nil, []*corev1.AppArmorProfile{nil, nil, nil}, []string{warning("sidecar")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := modified(validPod(), func(p *corev1.Pod) {
				p.ResourceVersion, p.UID, p.Annotations = "", "", tt.annotations
				p.Spec.SecurityContext = &corev1.PodSecurityContext{AppArmorProfile: tt.podProfile}
			})
			var w registrytest.Warnings
			out, err := newPods(t).store.Create(w.Context("default"), pod, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			spec := out.(*corev1.Pod).Spec
			var got []*corev1.AppArmorProfile
			for _, c := range append(spec.InitContainers, spec.Containers...) {
				var profile *corev1.AppArmorProfile
				if c.SecurityContext != nil {
					profile = c.SecurityContext.AppArmorProfile
				}
				got = append(got, profile)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("the containers' profiles (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, w.Got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAppArmorValidation: the deprecated annotations as kube-apiserver
// 1.37 refused them, in its words: a profile unlike the field's (or the
// pod's), a container that does not exist, a profile of no known form.
func TestAppArmorValidation(t *testing.T) {
	const prefix = corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix
	strategy := newPods(t).store.CreateStrategy
	tests := []struct {
		name        string
		annotations map[string]string
		profile     *corev1.AppArmorProfile
		want        []string
	}{
		{"unlike the pod's", map[string]string{prefix + "app": "unconfined", prefix + "sidecar": "localhost/ x"},
			&corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined},
			[]string{"spec.containers[1].securityContext.appArmorProfile.type: Forbidden: apparmor type in annotation and field must match"}},
		{"unknown container, unknown form", map[string]string{prefix + "zz": "runtime/default", prefix + "app": "bogus"}, nil, []string{
			`metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: Invalid value: "bogus": invalid AppArmor profile name: "bogus"`,
			`metadata.annotations[container.apparmor.security.beta.kubernetes.io/zz]: Invalid value: "zz": container not found`,
		}},
		{"another localhost profile", map[string]string{prefix + "app": "localhost/web"},
			&corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("other")},
			[]string{"spec.containers[0].securityContext.appArmorProfile.localhostProfile: Forbidden: apparmor profile in annotation and field must match"}},
		{"the same", map[string]string{prefix + "app": "runtime/default"}, &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := modified(validPod(), func(p *corev1.Pod) {
				p.Annotations = tt.annotations
				p.Spec.SecurityContext = &corev1.PodSecurityContext{AppArmorProfile: tt.profile}
			})
			if diff := cmp.Diff(tt.want, registrytest.Messages(strategy.Validate(t.Context(), pod))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

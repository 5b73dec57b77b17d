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

package apps

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		// mutate changes a valid object; skip says the case does not apply.
		mutate func(p parts)
		skip   func(p parts) bool
		want   []string
	}{
		{name: "valid", mutate: func(parts) {}, want: []string{}},
		{
			name:   "negative replicas",
			mutate: func(p parts) { *p.replicas = ptr.To[int32](-1) },
			skip:   func(p parts) bool { return p.replicas == nil },
			want:   []string{"spec.replicas: Invalid value"},
		},
		{
			name:   "zero replicas",
			mutate: func(p parts) { *p.replicas = ptr.To[int32](0) },
			skip:   func(p parts) bool { return p.replicas == nil },
			want:   []string{},
		},
		{
			name:   "empty selector",
			mutate: func(p parts) { *p.selector = &metav1.LabelSelector{} },
			want:   []string{"spec.selector: Invalid value"},
		},
		{
			name:   "selector that does not match the template's labels",
			mutate: func(p parts) { *p.selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}} },
			want:   []string{"spec.template.metadata.labels: Invalid value"},
		},
		{
			name: "selector by expression that matches",
			mutate: func(p parts) {
				*p.selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}},
				}}
			},
			want: []string{},
		},
		{
			name:   "template without labels",
			mutate: func(p parts) { p.template.Labels = nil },
			want:   []string{"spec.template.metadata.labels: Invalid value"},
		},
		{
			name:   "restartPolicy OnFailure",
			mutate: func(p parts) { p.template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			want:   []string{"spec.template.spec.restartPolicy: Unsupported value"},
		},
		{
			name:   "restartPolicy Never",
			mutate: func(p parts) { p.template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			want:   []string{"spec.template.spec.restartPolicy: Unsupported value"},
		},
		{
			name:   "no containers",
			mutate: func(p parts) { p.template.Spec.Containers = nil },
			want:   []string{"spec.template.spec.containers: Required value"},
		},
		{
			name:   "container without an image",
			mutate: func(p parts) { p.template.Spec.Containers[1].Image = "" },
			want:   []string{"spec.template.spec.containers[1].image: Required value"},
		},
	}
	for _, k := range kinds {
		t.Run(k.resource, func(t *testing.T) {
			strategy := registrytest.REST(t, NewStorage, k.resource).CreateStrategy
			for _, tt := range tests {
				obj := k.valid()
				if tt.skip != nil && tt.skip(k.parts(obj)) {
					continue
				}
				t.Run(tt.name, func(t *testing.T) {
					tt.mutate(k.parts(obj))
					got := registrytest.ErrorPaths(strategy.Validate(context.Background(), obj))
					if diff := cmp.Diff(tt.want, got); diff != "" {
						t.Errorf("Validate errors (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

func TestValidateDeploymentStrategy(t *testing.T) {
	rollingUpdate := func(maxUnavailable, maxSurge intstr.IntOrString) appsv1.DeploymentStrategy {
		return appsv1.DeploymentStrategy{
			Type:          appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &maxUnavailable, MaxSurge: &maxSurge},
		}
	}
	tests := []struct {
		name     string
		strategy appsv1.DeploymentStrategy
		want     []string
	}{
		{name: "defaulted rolling update (25%/25%)", strategy: validDeployment().Spec.Strategy, want: []string{}},
		{name: "Recreate", strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}, want: []string{}},
		{
			name: "Recreate with rollingUpdate",
			strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RecreateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(1))},
			},
			want: []string{"spec.strategy.rollingUpdate: Forbidden"},
		},
		{
			name:     "maxSurge and maxUnavailable 0",
			strategy: rollingUpdate(intstr.FromInt32(0), intstr.FromInt32(0)),
			want:     []string{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value"},
		},
		{
			name:     "maxSurge and maxUnavailable 0%",
			strategy: rollingUpdate(intstr.FromString("0%"), intstr.FromString("0%")),
			want:     []string{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value"},
		},
		{
			name:     "maxUnavailable 0, maxSurge 1",
			strategy: rollingUpdate(intstr.FromInt32(0), intstr.FromInt32(1)),
			want:     []string{},
		},
		{
			name:     "maxUnavailable 10%, maxSurge 0",
			strategy: rollingUpdate(intstr.FromString("10%"), intstr.FromInt32(0)),
			want:     []string{},
		},
	}
	store := registrytest.REST(t, NewStorage, "deployments")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := registrytest.Modified(validDeployment(), func(d *appsv1.Deployment) { d.Spec.Strategy = tt.strategy })
			got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), d))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
			// The same checks run on update.
			got = registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), d, validDeployment()))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p parts)
		skip   func(p parts) bool
		want   []string
	}{
		{name: "no change", mutate: func(parts) {}, want: []string{}},
		{
			name:   "replicas may change",
			mutate: func(p parts) { *p.replicas = ptr.To[int32](10) },
			skip:   func(p parts) bool { return p.replicas == nil },
			want:   []string{},
		},
		{
			name:   "template may change",
			mutate: func(p parts) { p.template.Spec.Containers[0].Image = "nginx:1.26" },
			want:   []string{},
		},
		{
			name: "selector may not change",
			mutate: func(p parts) {
				*p.selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "front"}}
				p.template.Labels = map[string]string{"app": "web", "tier": "front"}
			},
			want: []string{"spec.selector: Invalid value"},
		},
		{
			name:   "the new object is validated",
			mutate: func(p parts) { p.template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			want:   []string{"spec.template.spec.restartPolicy: Unsupported value"},
		},
	}
	for _, k := range kinds {
		t.Run(k.resource, func(t *testing.T) {
			strategy := registrytest.REST(t, NewStorage, k.resource).UpdateStrategy
			for _, tt := range tests {
				old, obj := k.valid(), k.valid()
				if tt.skip != nil && tt.skip(k.parts(obj)) {
					continue
				}
				t.Run(tt.name, func(t *testing.T) {
					tt.mutate(k.parts(obj))
					got := registrytest.ErrorPaths(strategy.ValidateUpdate(context.Background(), obj, old))
					if diff := cmp.Diff(tt.want, got); diff != "" {
						t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

func TestValidateStatefulSetUpdate(t *testing.T) {
	claim := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}}
	tests := []registrytest.Mutation[*appsv1.StatefulSet]{
		{Name: "replicas", Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.Replicas = ptr.To[int32](0) }, Want: []string{}},
		{Name: "template", Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.Template.Spec.Containers[0].Image = "nginx:2" }, Want: []string{}},
		{
			Name: "updateStrategy",
			Mutate: func(ss *appsv1.StatefulSet) {
				ss.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
			},
			Want: []string{},
		},
		{Name: "minReadySeconds", Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.MinReadySeconds = 10 }, Want: []string{}},
		{Name: "revisionHistoryLimit", Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.RevisionHistoryLimit = ptr.To[int32](2) }, Want: []string{}},
		{
			Name: "ordinals",
			Mutate: func(ss *appsv1.StatefulSet) {
				ss.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 1}
			},
			Want: []string{},
		},
		{
			Name: "persistentVolumeClaimRetentionPolicy",
			Mutate: func(ss *appsv1.StatefulSet) {
				ss.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
			},
			Want: []string{},
		},
		{Name: "serviceName", Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.ServiceName = "other" }, Want: []string{"spec.serviceName: Invalid value"}},
		{
			Name:   "podManagementPolicy",
			Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.PodManagementPolicy = appsv1.ParallelPodManagement },
			Want:   []string{"spec.podManagementPolicy: Invalid value"},
		},
		{
			Name:   "volumeClaimTemplates",
			Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{claim} },
			Want:   []string{"spec.volumeClaimTemplates: Invalid value"},
		},
		{
			Name: "selector, serviceName and replicas: an error for each immutable field",
			Mutate: func(ss *appsv1.StatefulSet) {
				ss.Spec.ServiceName = "other"
				ss.Spec.Replicas = ptr.To[int32](1)
				ss.Spec.Selector.MatchLabels["tier"] = "x"
				ss.Spec.Template.Labels["tier"] = "x"
			},
			Want: []string{"spec.selector: Invalid value", "spec.serviceName: Invalid value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "statefulsets").UpdateStrategy
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			old := validStatefulSet()
			obj := registrytest.Modified(old, tt.Mutate)
			got := registrytest.ErrorPaths(strategy.ValidateUpdate(context.Background(), obj, old))
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
			// validateStatefulSetUpdate works on copies.
			if diff := cmp.Diff(registrytest.Modified(validStatefulSet(), tt.Mutate), obj); diff != "" {
				t.Errorf("new statefulset after ValidateUpdate (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(validStatefulSet(), old); diff != "" {
				t.Errorf("old statefulset after ValidateUpdate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNames: a StatefulSet's name must be a DNS label (its pods' hostnames
// are "<name>-<ordinal>"); the others', a DNS subdomain.
func TestNames(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.resource, func(t *testing.T) {
			obj := k.valid()
			obj.(metav1.Object).SetName("web.v1")
			want := []string{}
			if k.resource == "statefulsets" {
				want = []string{`metadata.name: Invalid value: "web.v1": must not contain dots`}
			}
			strategy := registrytest.REST(t, NewStorage, k.resource).CreateStrategy
			if diff := cmp.Diff(want, registrytest.Messages(strategy.Validate(context.Background(), obj))); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

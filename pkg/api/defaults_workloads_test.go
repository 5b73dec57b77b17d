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

package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// decodeDefaulted decodes data as the API server decodes a request body: into the
// served version, defaulted.
func decodeDefaulted(t *testing.T, gv schema.GroupVersion, data string) runtime.Object {
	t.Helper()
	obj, _, err := Codecs.UniversalDecoder(gv).Decode([]byte(data), nil, nil)
	if err != nil {
		t.Fatalf("Decode: got error %v, want none", err)
	}
	return obj
}

// podTemplateJSON is a pod template with one container and labels app=x.
const podTemplateJSON = `{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx:1.25"}]}}`

// defaultedTemplate is podTemplateJSON after the defaults every pod template gets.
func defaultedTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "c", Image: "nginx:1.25", ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			DNSPolicy:                     corev1.DNSClusterFirst,
			SecurityContext:               &corev1.PodSecurityContext{},
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			SchedulerName:                 "default-scheduler",
		},
	}
}

var selectorAppX = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}

// ignoreServiceLinks leaves enableServiceLinks out of template comparisons:
// TestWorkloadTemplatesGetPodSpecDefaultsOnly checks it.
var ignoreServiceLinks = cmpopts.IgnoreFields(corev1.PodSpec{}, "EnableServiceLinks")

func TestDecodeDeploymentDefaults(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { return ptr.To(intstr.FromString(s)) }
	tests := []struct {
		name string
		spec string
		want appsv1.DeploymentSpec
	}{
		{
			name: "empty",
			spec: `{"selector":{"matchLabels":{"app":"x"}},"template":` + podTemplateJSON + `}`,
			want: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: selectorAppX,
				Template: defaultedTemplate(),
				Strategy: appsv1.DeploymentStrategy{
					Type:          appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: pct("25%"), MaxSurge: pct("25%")},
				},
				RevisionHistoryLimit:    ptr.To[int32](10),
				ProgressDeadlineSeconds: ptr.To[int32](600),
			},
		},
		{
			name: "explicit values kept, maxSurge filled in",
			spec: `{"replicas":0,"revisionHistoryLimit":2,"progressDeadlineSeconds":60,"selector":{"matchLabels":{"app":"x"}},"template":` + podTemplateJSON +
				`,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1}}}`,
			want: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](0),
				Selector: selectorAppX,
				Template: defaultedTemplate(),
				Strategy: appsv1.DeploymentStrategy{
					Type:          appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: pct("25%")},
				},
				RevisionHistoryLimit:    ptr.To[int32](2),
				ProgressDeadlineSeconds: ptr.To[int32](60),
			},
		},
		{
			name: "Recreate: no rollingUpdate",
			spec: `{"selector":{"matchLabels":{"app":"x"}},"template":` + podTemplateJSON + `,"strategy":{"type":"Recreate"}}`,
			want: appsv1.DeploymentSpec{
				Replicas:                ptr.To[int32](1),
				Selector:                selectorAppX,
				Template:                defaultedTemplate(),
				Strategy:                appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
				RevisionHistoryLimit:    ptr.To[int32](10),
				ProgressDeadlineSeconds: ptr.To[int32](600),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, appsv1.SchemeGroupVersion, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"default"},"spec":`+tt.spec+`}`)
			d, ok := obj.(*appsv1.Deployment)
			if !ok {
				t.Fatalf("Decode: got %T, want *appsv1.Deployment", obj)
			}
			if diff := cmp.Diff(tt.want, d.Spec, ignoreServiceLinks); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeStatefulSetDefaults(t *testing.T) {
	obj := decodeDefaulted(t, appsv1.SchemeGroupVersion, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},
		"spec":{"serviceName":"db","selector":{"matchLabels":{"app":"x"}},"template":`+podTemplateJSON+`,
		"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}}`)
	ss, ok := obj.(*appsv1.StatefulSet)
	if !ok {
		t.Fatalf("Decode: got %T, want *appsv1.StatefulSet", obj)
	}
	got := ss.Spec
	type summary struct {
		Replicas, RevisionHistoryLimit, Partition *int32
		PodManagementPolicy                       appsv1.PodManagementPolicyType
		UpdateStrategy                            appsv1.StatefulSetUpdateStrategyType
		Retention                                 *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy
		ClaimVolumeMode                           *corev1.PersistentVolumeMode
		Template                                  corev1.PodTemplateSpec
	}
	var partition *int32
	if got.UpdateStrategy.RollingUpdate != nil {
		partition = got.UpdateStrategy.RollingUpdate.Partition
	}
	want := summary{
		Replicas: ptr.To[int32](1), RevisionHistoryLimit: ptr.To[int32](10), Partition: ptr.To[int32](0),
		PodManagementPolicy: appsv1.OrderedReadyPodManagement,
		UpdateStrategy:      appsv1.RollingUpdateStatefulSetStrategyType,
		Retention: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		},
		ClaimVolumeMode: ptr.To(corev1.PersistentVolumeFilesystem),
		Template:        defaultedTemplate(),
	}
	if diff := cmp.Diff(want, summary{
		Replicas: got.Replicas, RevisionHistoryLimit: got.RevisionHistoryLimit, Partition: partition,
		PodManagementPolicy: got.PodManagementPolicy, UpdateStrategy: got.UpdateStrategy.Type,
		Retention: got.PersistentVolumeClaimRetentionPolicy, ClaimVolumeMode: got.VolumeClaimTemplates[0].Spec.VolumeMode,
		Template: got.Template,
	}, ignoreServiceLinks); diff != "" {
		t.Errorf("defaulted spec (-want +got):\n%s", diff)
	}
	if mu := got.UpdateStrategy.RollingUpdate.MaxUnavailable; mu == nil || mu.IntValue() != 1 {
		t.Errorf("rollingUpdate.maxUnavailable: got %v, want 1 (MaxUnavailableStatefulSet)", mu)
	}
	if c := got.VolumeClaimTemplates[0]; c.APIVersion != "v1" || c.Kind != "PersistentVolumeClaim" {
		t.Errorf("claim template's apiVersion and kind: got %q, %q; want v1, PersistentVolumeClaim", c.APIVersion, c.Kind)
	}

	t.Run("explicit values kept", func(t *testing.T) {
		obj := decodeDefaulted(t, appsv1.SchemeGroupVersion, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},
			"spec":{"replicas":3,"podManagementPolicy":"Parallel","updateStrategy":{"type":"OnDelete"},
			"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete"},"selector":{"matchLabels":{"app":"x"}},"template":`+podTemplateJSON+`}}`)
		ss := obj.(*appsv1.StatefulSet)
		if *ss.Spec.Replicas != 3 || ss.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
			t.Errorf("replicas, podManagementPolicy: got %d, %q, want 3, Parallel", *ss.Spec.Replicas, ss.Spec.PodManagementPolicy)
		}
		if diff := cmp.Diff(appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}, ss.Spec.UpdateStrategy); diff != "" {
			t.Errorf("updateStrategy (-want +got):\n%s", diff)
		}
		want := &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
			WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		}
		if diff := cmp.Diff(want, ss.Spec.PersistentVolumeClaimRetentionPolicy); diff != "" {
			t.Errorf("persistentVolumeClaimRetentionPolicy (-want +got):\n%s", diff)
		}
	})
}

// TestDecodeStatefulSetDefaultsAsUpstream covers two details of upstream's
// StatefulSet defaults (k8s.io/kubernetes pkg/apis/apps/v1):
//   - SetDefaults_StatefulSet makes spec.updateStrategy.rollingUpdate only
//     when it defaulted the type; an explicit RollingUpdate type without
//     rollingUpdate keeps it nil.
//   - the generated SetObjectDefaults_StatefulSet runs
//     SetDefaults_PersistentVolumeClaim on each volume claim template, so
//     their status.phase is Pending.
func TestDecodeStatefulSetDefaultsAsUpstream(t *testing.T) {
	t.Run("explicit RollingUpdate type", func(t *testing.T) {
		obj := decodeDefaulted(t, appsv1.SchemeGroupVersion, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},
			"spec":{"updateStrategy":{"type":"RollingUpdate"},"selector":{"matchLabels":{"app":"x"}},"template":`+podTemplateJSON+`}}`)
		if got := obj.(*appsv1.StatefulSet).Spec.UpdateStrategy.RollingUpdate; got != nil {
			t.Errorf("updateStrategy.rollingUpdate: got %+v, want nil", got)
		}
	})
	t.Run("volume claim template phase", func(t *testing.T) {
		obj := decodeDefaulted(t, appsv1.SchemeGroupVersion, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},
			"spec":{"selector":{"matchLabels":{"app":"x"}},"template":`+podTemplateJSON+`,"volumeClaimTemplates":[{"metadata":{"name":"data"}}]}}`)
		if got := obj.(*appsv1.StatefulSet).Spec.VolumeClaimTemplates[0].Status.Phase; got != corev1.ClaimPending {
			t.Errorf("volumeClaimTemplates[0].status.phase: got %q, want %q", got, corev1.ClaimPending)
		}
	})
}

func TestDecodeDaemonSetDefaults(t *testing.T) {
	tests := []struct {
		name     string
		strategy string
		want     appsv1.DaemonSetUpdateStrategy
	}{
		{
			name: "rolling update",
			want: appsv1.DaemonSetUpdateStrategy{
				Type:          appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromInt32(0))},
			},
		},
		{
			name:     "rolling update with maxSurge",
			strategy: `,"updateStrategy":{"rollingUpdate":{"maxSurge":"10%"}}`,
			want: appsv1.DaemonSetUpdateStrategy{
				Type:          appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromString("10%"))},
			},
		},
		{
			name:     "OnDelete",
			strategy: `,"updateStrategy":{"type":"OnDelete"}`,
			want:     appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, appsv1.SchemeGroupVersion, `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"default"},
				"spec":{"selector":{"matchLabels":{"app":"x"}},"template":`+podTemplateJSON+tt.strategy+`}}`)
			ds, ok := obj.(*appsv1.DaemonSet)
			if !ok {
				t.Fatalf("Decode: got %T, want *appsv1.DaemonSet", obj)
			}
			want := appsv1.DaemonSetSpec{Selector: selectorAppX, Template: defaultedTemplate(), UpdateStrategy: tt.want, RevisionHistoryLimit: ptr.To[int32](10)}
			if diff := cmp.Diff(want, ds.Spec, ignoreServiceLinks); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeReplicaSetDefaults(t *testing.T) {
	obj := decodeDefaulted(t, appsv1.SchemeGroupVersion, `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs","namespace":"default"},
		"spec":{"selector":{"matchLabels":{"app":"x"}},"template":`+podTemplateJSON+`}}`)
	want := appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: selectorAppX, Template: defaultedTemplate()}
	if diff := cmp.Diff(want, obj.(*appsv1.ReplicaSet).Spec, ignoreServiceLinks); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}

func TestDecodeWorkloadListDefaults(t *testing.T) {
	obj := decodeDefaulted(t, appsv1.SchemeGroupVersion, `{"apiVersion":"apps/v1","kind":"DeploymentList","items":[
		{"metadata":{"name":"a"},"spec":{"selector":{"matchLabels":{"app":"x"}},"template":`+podTemplateJSON+`}},
		{"metadata":{"name":"b"},"spec":{"replicas":4,"selector":{"matchLabels":{"app":"x"}},"template":`+podTemplateJSON+`}}]}`)
	list, ok := obj.(*appsv1.DeploymentList)
	if !ok {
		t.Fatalf("Decode: got %T, want *appsv1.DeploymentList", obj)
	}
	var got []int32
	for _, d := range list.Items {
		got = append(got, *d.Spec.Replicas, *d.Spec.RevisionHistoryLimit)
	}
	if diff := cmp.Diff([]int32{1, 10, 4, 10}, got); diff != "" {
		t.Errorf("replicas, revisionHistoryLimit of each item (-want +got):\n%s", diff)
	}
}

// TestWorkloadTemplatesGetPodSpecDefaultsOnly: upstream defaults a pod
// template (in a Deployment, StatefulSet, DaemonSet, ReplicaSet, Job,
// CronJob or PodTemplate) with SetDefaults_PodSpec and the container and
// volume defaults, not with SetDefaults_Pod: enableServiceLinks stays
// unset and requests are not copied from limits ("we only want this
// defaulting semantic to take place on a v1.Pod and not a v1.PodTemplate",
// pkg/apis/core/v1/defaults.go); a configMap volume gets defaultMode 0644
// (SetDefaults_ConfigMapVolumeSource).
func TestWorkloadTemplatesGetPodSpecDefaultsOnly(t *testing.T) {
	template := `{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx:1.25","resources":{"limits":{"cpu":"1"}}}],` +
		`"volumes":[{"name":"cfg","configMap":{"name":"cfg"}}]}}`
	obj := decodeDefaulted(t, appsv1.SchemeGroupVersion, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"default"},
		"spec":{"selector":{"matchLabels":{"app":"x"}},"template":`+template+`}}`)
	spec := obj.(*appsv1.Deployment).Spec.Template.Spec
	if spec.EnableServiceLinks != nil {
		t.Errorf("template enableServiceLinks: got %v, want unset", *spec.EnableServiceLinks)
	}
	if got := spec.Containers[0].Resources.Requests; got != nil {
		t.Errorf("template container requests: got %v, want none", got)
	}
	if got := spec.Volumes[0].ConfigMap.DefaultMode; got == nil || *got != corev1.ConfigMapVolumeSourceDefaultMode {
		t.Errorf("template configMap volume defaultMode: got %v, want %d", got, corev1.ConfigMapVolumeSourceDefaultMode)
	}
}

func TestDecodeRoleBindingDefaults(t *testing.T) {
	obj := decodeDefaulted(t, rbacv1.SchemeGroupVersion, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"rb","namespace":"default"},
		"roleRef":{"kind":"Role","name":"reader"},
		"subjects":[{"kind":"User","name":"alice"},{"kind":"Group","name":"devs"},{"kind":"ServiceAccount","name":"bot","namespace":"default"},{"kind":"User","name":"bob","apiGroup":"example.com"}]}`)
	rb, ok := obj.(*rbacv1.RoleBinding)
	if !ok {
		t.Fatalf("Decode: got %T, want *rbacv1.RoleBinding", obj)
	}
	want := &rbacv1.RoleBinding{
		TypeMeta:   rb.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: "rb", Namespace: "default"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
		Subjects: []rbacv1.Subject{
			{Kind: "User", Name: "alice", APIGroup: "rbac.authorization.k8s.io"},
			{Kind: "Group", Name: "devs", APIGroup: "rbac.authorization.k8s.io"},
			{Kind: "ServiceAccount", Name: "bot", Namespace: "default"},
			{Kind: "User", Name: "bob", APIGroup: "example.com"},
		},
	}
	if diff := cmp.Diff(want, rb); diff != "" {
		t.Errorf("role binding (-want +got):\n%s", diff)
	}
	crb := decodeDefaulted(t, rbacv1.SchemeGroupVersion, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"crb"},
		"roleRef":{"kind":"ClusterRole","name":"view"},"subjects":[{"kind":"Group","name":"devs"}]}`).(*rbacv1.ClusterRoleBinding)
	got := []string{crb.RoleRef.APIGroup, crb.Subjects[0].APIGroup}
	if diff := cmp.Diff([]string{"rbac.authorization.k8s.io", "rbac.authorization.k8s.io"}, got); diff != "" {
		t.Errorf("cluster role binding apiGroups (-want +got):\n%s", diff)
	}
}

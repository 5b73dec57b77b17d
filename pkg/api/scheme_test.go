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
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSchemeKnowsServedTypesInBothVersions(t *testing.T) {
	internalCore := schema.GroupVersion{Group: corev1.GroupName, Version: runtime.APIVersionInternal}
	internalCoordination := schema.GroupVersion{Group: coordinationv1.GroupName, Version: runtime.APIVersionInternal}
	internal := func(group string) schema.GroupVersion {
		return schema.GroupVersion{Group: group, Version: runtime.APIVersionInternal}
	}
	tests := []struct {
		name string
		obj  runtime.Object
		want []schema.GroupVersionKind
	}{
		{name: "pod", obj: &corev1.Pod{}, want: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Pod"), internalCore.WithKind("Pod")}},
		{name: "configmap list", obj: &corev1.ConfigMapList{}, want: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMapList"), internalCore.WithKind("ConfigMapList")}},
		{name: "lease", obj: &coordinationv1.Lease{}, want: []schema.GroupVersionKind{coordinationv1.SchemeGroupVersion.WithKind("Lease"), internalCoordination.WithKind("Lease")}},
		{name: "replication controller", obj: &corev1.ReplicationController{}, want: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ReplicationController"), internalCore.WithKind("ReplicationController")}},
		{name: "pod disruption budget", obj: &policyv1.PodDisruptionBudget{}, want: []schema.GroupVersionKind{policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), internal(policyv1.GroupName).WithKind("PodDisruptionBudget")}},
		{name: "priority class list", obj: &schedulingv1.PriorityClassList{}, want: []schema.GroupVersionKind{schedulingv1.SchemeGroupVersion.WithKind("PriorityClassList"), internal(schedulingv1.GroupName).WithKind("PriorityClassList")}},
		{name: "csi driver", obj: &storagev1.CSIDriver{}, want: []schema.GroupVersionKind{storagev1.SchemeGroupVersion.WithKind("CSIDriver"), internal(storagev1.GroupName).WithKind("CSIDriver")}},
		{name: "runtime class", obj: &nodev1.RuntimeClass{}, want: []schema.GroupVersionKind{nodev1.SchemeGroupVersion.WithKind("RuntimeClass"), internal(nodev1.GroupName).WithKind("RuntimeClass")}},
		{name: "network policy", obj: &networkingv1.NetworkPolicy{}, want: []schema.GroupVersionKind{networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"), internal(networkingv1.GroupName).WithKind("NetworkPolicy")}},
		{name: "service cidr list", obj: &networkingv1.ServiceCIDRList{}, want: []schema.GroupVersionKind{networkingv1.SchemeGroupVersion.WithKind("ServiceCIDRList"), internal(networkingv1.GroupName).WithKind("ServiceCIDRList")}},
		{name: "controller revision", obj: &appsv1.ControllerRevision{}, want: []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("ControllerRevision"), internal(appsv1.GroupName).WithKind("ControllerRevision")}},
		{name: "horizontal pod autoscaler hub", obj: &autoscalingv2.HorizontalPodAutoscaler{}, want: []schema.GroupVersionKind{
			autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"), internal(autoscalingv1.GroupName).WithKind("HorizontalPodAutoscaler")}},
		{name: "horizontal pod autoscaler v1", obj: &autoscalingv1.HorizontalPodAutoscalerList{}, want: []schema.GroupVersionKind{
			autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscalerList")}},
		{name: "scale", obj: &autoscalingv1.Scale{}, want: []schema.GroupVersionKind{
			autoscalingv1.SchemeGroupVersion.WithKind("Scale"), internal(autoscalingv1.GroupName).WithKind("Scale")}},
		{name: "validating webhook configuration", obj: &admissionregistrationv1.ValidatingWebhookConfiguration{}, want: []schema.GroupVersionKind{
			admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingWebhookConfiguration"), internal(admissionregistrationv1.GroupName).WithKind("ValidatingWebhookConfiguration")}},
		{name: "mutating admission policy binding list", obj: &admissionregistrationv1.MutatingAdmissionPolicyBindingList{}, want: []schema.GroupVersionKind{
			admissionregistrationv1.SchemeGroupVersion.WithKind("MutatingAdmissionPolicyBindingList"), internal(admissionregistrationv1.GroupName).WithKind("MutatingAdmissionPolicyBindingList")}},
		{name: "certificate signing request", obj: &certificatesv1.CertificateSigningRequest{}, want: []schema.GroupVersionKind{
			certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), internal(certificatesv1.GroupName).WithKind("CertificateSigningRequest")}},
		{name: "cluster trust bundle list", obj: &certificatesv1.ClusterTrustBundleList{}, want: []schema.GroupVersionKind{
			certificatesv1.SchemeGroupVersion.WithKind("ClusterTrustBundleList"), internal(certificatesv1.GroupName).WithKind("ClusterTrustBundleList")}},
		{name: "storage version migration", obj: &storagemigrationv1.StorageVersionMigration{}, want: []schema.GroupVersionKind{
			storagemigrationv1.SchemeGroupVersion.WithKind("StorageVersionMigration"), internal(storagemigrationv1.GroupName).WithKind("StorageVersionMigration")}},
		{name: "flow schema", obj: &flowcontrolv1.FlowSchema{}, want: []schema.GroupVersionKind{
			flowcontrolv1.SchemeGroupVersion.WithKind("FlowSchema"), internal(flowcontrolv1.GroupName).WithKind("FlowSchema")}},
		{name: "component status list", obj: &corev1.ComponentStatusList{}, want: []schema.GroupVersionKind{
			corev1.SchemeGroupVersion.WithKind("ComponentStatusList"), internalCore.WithKind("ComponentStatusList")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gvks, _, err := Scheme.ObjectKinds(tt.obj)
			if err != nil {
				t.Fatalf("ObjectKinds: got error %v, want none", err)
			}
			for _, want := range tt.want {
				found := false
				for _, got := range gvks {
					found = found || got == want
				}
				if !found {
					t.Errorf("ObjectKinds: got %v, want it to include %v", gvks, want)
				}
			}
		})
	}
}

func TestDecodeAppliesDefaults(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		check func(obj runtime.Object) (got, want string)
	}{
		{
			name: "secret type",
			data: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default"}}`,
			check: func(obj runtime.Object) (string, string) {
				return string(obj.(*corev1.Secret).Type), string(corev1.SecretTypeOpaque)
			},
		},
		{
			name: "namespace label",
			data: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod"}}`,
			check: func(obj runtime.Object) (string, string) {
				return obj.(*corev1.Namespace).Labels[corev1.LabelMetadataName], "prod"
			},
		},
		{
			name: "pod restartPolicy",
			data: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`,
			check: func(obj runtime.Object) (string, string) {
				return string(obj.(*corev1.Pod).Spec.RestartPolicy), string(corev1.RestartPolicyAlways)
			},
		},
	}
	decoder := Codecs.UniversalDecoder(corev1.SchemeGroupVersion)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, _, err := decoder.Decode([]byte(tt.data), nil, nil)
			if err != nil {
				t.Fatalf("Decode: got error %v, want none", err)
			}
			if got, want := tt.check(obj); got != want {
				t.Errorf("defaulted value: got %q, want %q", got, want)
			}
		})
	}
}

func TestStorageVersions(t *testing.T) {
	want := map[string]string{"": "v1", "coordination.k8s.io": "v1", "apps": "v1", "autoscaling": "v2", "batch": "v1",
		"discovery.k8s.io": "v1", "networking.k8s.io": "v1", "node.k8s.io": "v1", "policy": "v1",
		"rbac.authorization.k8s.io": "v1", "scheduling.k8s.io": "v1", "storage.k8s.io": "v1", "resource.k8s.io": "v1", "admissionregistration.k8s.io": "v1",
		"certificates.k8s.io": "v1", "storagemigration.k8s.io": "v1",
		"flowcontrol.apiserver.k8s.io": "v1"}
	if len(StorageVersions) != len(want) {
		t.Fatalf("StorageVersions: got %v, want one per group of %v", StorageVersions, want)
	}
	for _, gv := range StorageVersions {
		if v, ok := want[gv.Group]; !ok || v != gv.Version {
			t.Errorf("storage version of group %q: got %q, want %q", gv.Group, gv.Version, v)
		}
	}
}

func TestAutoscalingPrefersV2(t *testing.T) {
	want := []schema.GroupVersion{autoscalingv2.SchemeGroupVersion, autoscalingv1.SchemeGroupVersion}
	if got := Scheme.PrioritizedVersionsForGroup(autoscalingv1.GroupName); !slices.Equal(got, want) {
		t.Errorf("autoscaling versions: got %v, want %v", got, want)
	}
}

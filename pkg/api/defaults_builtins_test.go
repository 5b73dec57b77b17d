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
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestDecodeReplicationControllerDefaults(t *testing.T) {
	tests := []struct {
		name       string
		data       string
		wantLabels map[string]string
		want       corev1.ReplicationControllerSpec
	}{
		{
			name:       "selector, labels and replicas from the template",
			data:       `{"metadata":{"name":"rc","namespace":"default"},"spec":{"template":` + podTemplateJSON + `}}`,
			wantLabels: map[string]string{"app": "x"},
			want:       corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](1), Selector: map[string]string{"app": "x"}, Template: ptr.To(defaultedTemplate())},
		},
		{
			name:       "explicit selector, labels and replicas kept",
			data:       `{"metadata":{"name":"rc","labels":{"team":"a"}},"spec":{"replicas":0,"selector":{"app":"x","tier":"web"},"template":` + podTemplateJSON + `}}`,
			wantLabels: map[string]string{"team": "a"},
			want:       corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](0), Selector: map[string]string{"app": "x", "tier": "web"}, Template: ptr.To(defaultedTemplate())},
		},
		{
			name: "no template: only replicas",
			data: `{"metadata":{"name":"rc"},"spec":{}}`,
			want: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](1)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"ReplicationController",`+tt.data[1:])
			rc := obj.(*corev1.ReplicationController)
			if diff := cmp.Diff(tt.want, rc.Spec, ignoreServiceLinks); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLabels, rc.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("defaulted selector is a copy of the template's labels", func(t *testing.T) {
		rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}}}}
		Scheme.Default(rc)
		rc.Spec.Template.Labels["app"] = "changed"
		if got := rc.Spec.Selector["app"]; got != "x" {
			t.Errorf("selector after changing the template: got %q, want %q", got, "x")
		}
	})
}

func TestDecodeLimitRangeDefaults(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name string
		item string
		want corev1.LimitRangeItem
	}{
		{
			name: "container: default from max, default request from default",
			item: `{"type":"Container","max":{"cpu":"2","memory":"1Gi"}}`,
			want: corev1.LimitRangeItem{Type: corev1.LimitTypeContainer,
				Max:            corev1.ResourceList{"cpu": q("2"), "memory": q("1Gi")},
				Default:        corev1.ResourceList{"cpu": q("2"), "memory": q("1Gi")},
				DefaultRequest: corev1.ResourceList{"cpu": q("2"), "memory": q("1Gi")}},
		},
		{
			name: "container: default request from min when there is no default",
			item: `{"type":"Container","min":{"cpu":"100m"},"default":{"memory":"512Mi"}}`,
			want: corev1.LimitRangeItem{Type: corev1.LimitTypeContainer,
				Min:            corev1.ResourceList{"cpu": q("100m")},
				Default:        corev1.ResourceList{"memory": q("512Mi")},
				DefaultRequest: corev1.ResourceList{"cpu": q("100m"), "memory": q("512Mi")}},
		},
		{
			name: "container: explicit values kept, empty maps added",
			item: `{"type":"Container"}`,
			want: corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Default: corev1.ResourceList{}, DefaultRequest: corev1.ResourceList{}},
		},
		{
			name: "pod: nothing defaulted",
			item: `{"type":"Pod","max":{"cpu":"4"}}`,
			want: corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: corev1.ResourceList{"cpu": q("4")}},
		},
		{
			name: "quantities rounded up to milli-units",
			item: `{"type":"PersistentVolumeClaim","min":{"storage":"1.0001m"}}`,
			want: corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Min: corev1.ResourceList{"storage": q("2m")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"l"},"spec":{"limits":[`+tt.item+`]}}`)
			got := obj.(*corev1.LimitRange).Spec.Limits[0]
			if diff := cmp.Diff(tt.want, got, quantityEqual); diff != "" {
				t.Errorf("limit (-want +got):\n%s", diff)
			}
		})
	}
}

// quantityEqual compares quantities by value, as upstream's semantic equality does.
var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestDecodeResourceQuotaRoundsUp(t *testing.T) {
	obj := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},
		"spec":{"hard":{"cpu":"0.0001","pods":"10"}},"status":{"used":{"memory":"1.5m"}}}`)
	quota := obj.(*corev1.ResourceQuota)
	want := corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"cpu": resource.MustParse("1m"), "pods": resource.MustParse("10")}}
	if diff := cmp.Diff(want, quota.Spec, quantityEqual); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if got, want := quota.Status.Used.Memory().String(), "2m"; got != want {
		t.Errorf("status.used.memory: got %s, want %s", got, want)
	}
}

func TestDecodeNetworkPolicyDefaults(t *testing.T) {
	tcp, udp := ptr.To(corev1.ProtocolTCP), ptr.To(corev1.ProtocolUDP)
	port80 := ptr.To(intstr.FromInt32(80))
	tests := []struct {
		name string
		spec string
		want networkingv1.NetworkPolicySpec
	}{
		{
			name: "empty: an Ingress policy",
			spec: `{"podSelector":{}}`,
			want: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
		},
		{
			name: "egress rules: Ingress and Egress, ports TCP unless set",
			spec: `{"podSelector":{},"ingress":[{"ports":[{"port":80}]}],"egress":[{"ports":[{"port":80,"protocol":"UDP"},{}]}]}`,
			want: networkingv1.NetworkPolicySpec{
				Ingress:     []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: port80, Protocol: tcp}}}},
				Egress:      []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: port80, Protocol: udp}, {Protocol: tcp}}}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			},
		},
		{
			name: "explicit policyTypes kept",
			spec: `{"podSelector":{},"egress":[{}],"policyTypes":["Egress"]}`,
			want: networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{}}, PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, networkingv1.SchemeGroupVersion, `{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"np"},"spec":`+tt.spec+`}`)
			if diff := cmp.Diff(tt.want, obj.(*networkingv1.NetworkPolicy).Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeIngressClassDefaults(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want networkingv1.IngressClassSpec
	}{
		{name: "no parameters", spec: `{"controller":"example.com/ingress"}`, want: networkingv1.IngressClassSpec{Controller: "example.com/ingress"}},
		{
			name: "parameters: scope Cluster",
			spec: `{"controller":"example.com/ingress","parameters":{"kind":"Params","name":"p"}}`,
			want: networkingv1.IngressClassSpec{Controller: "example.com/ingress", Parameters: &networkingv1.IngressClassParametersReference{
				Kind: "Params", Name: "p", Scope: ptr.To(networkingv1.IngressClassParametersReferenceScopeCluster)}},
		},
		{
			name: "explicit scope kept",
			spec: `{"controller":"example.com/ingress","parameters":{"kind":"Params","name":"p","scope":"Namespace","namespace":"ns"}}`,
			want: networkingv1.IngressClassSpec{Controller: "example.com/ingress", Parameters: &networkingv1.IngressClassParametersReference{
				Kind: "Params", Name: "p", Scope: ptr.To(networkingv1.IngressClassParametersReferenceScopeNamespace), Namespace: ptr.To("ns")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, networkingv1.SchemeGroupVersion, `{"apiVersion":"networking.k8s.io/v1","kind":"IngressClass","metadata":{"name":"c"},"spec":`+tt.spec+`}`)
			if diff := cmp.Diff(tt.want, obj.(*networkingv1.IngressClass).Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodePriorityClassDefaults(t *testing.T) {
	tests := []struct {
		name string
		data string
		want corev1.PreemptionPolicy
	}{
		{name: "PreemptLowerPriority", data: `"value":1000`, want: corev1.PreemptLowerPriority},
		{name: "explicit Never kept", data: `"value":1000,"preemptionPolicy":"Never"`, want: corev1.PreemptNever},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, schedulingv1.SchemeGroupVersion, `{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},`+tt.data+`}`)
			if got := obj.(*schedulingv1.PriorityClass).PreemptionPolicy; got == nil || *got != tt.want {
				t.Errorf("preemptionPolicy: got %v, want %q", got, tt.want)
			}
		})
	}
}

func TestDecodeStorageClassDefaults(t *testing.T) {
	tests := []struct {
		name        string
		data        string
		wantReclaim corev1.PersistentVolumeReclaimPolicy
		wantBinding storagev1.VolumeBindingMode
	}{
		{name: "Delete and Immediate", data: `"provisioner":"example.com/csi"`, wantReclaim: corev1.PersistentVolumeReclaimDelete, wantBinding: storagev1.VolumeBindingImmediate},
		{
			name:        "explicit values kept",
			data:        `"provisioner":"example.com/csi","reclaimPolicy":"Retain","volumeBindingMode":"WaitForFirstConsumer"`,
			wantReclaim: corev1.PersistentVolumeReclaimRetain, wantBinding: storagev1.VolumeBindingWaitForFirstConsumer,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, storagev1.SchemeGroupVersion, `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"fast"},`+tt.data+`}`)
			sc := obj.(*storagev1.StorageClass)
			if sc.ReclaimPolicy == nil || *sc.ReclaimPolicy != tt.wantReclaim {
				t.Errorf("reclaimPolicy: got %v, want %q", sc.ReclaimPolicy, tt.wantReclaim)
			}
			if sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != tt.wantBinding {
				t.Errorf("volumeBindingMode: got %v, want %q", sc.VolumeBindingMode, tt.wantBinding)
			}
		})
	}
}

func TestDecodeCSIDriverDefaults(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want storagev1.CSIDriverSpec
	}{
		{
			name: "empty",
			spec: `{}`,
			want: storagev1.CSIDriverSpec{
				AttachRequired: ptr.To(true), PodInfoOnMount: ptr.To(false), StorageCapacity: ptr.To(false), RequiresRepublish: ptr.To(false),
				SELinuxMount: ptr.To(false), PreventPodSchedulingIfMissing: ptr.To(false),
				FSGroupPolicy:        ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy),
				VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
			},
		},
		{
			name: "explicit values kept",
			spec: `{"attachRequired":false,"podInfoOnMount":true,"storageCapacity":true,"requiresRepublish":true,"seLinuxMount":true,
				"preventPodSchedulingIfMissing":true,"fsGroupPolicy":"File","volumeLifecycleModes":["Ephemeral"]}`,
			want: storagev1.CSIDriverSpec{
				AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(true), StorageCapacity: ptr.To(true), RequiresRepublish: ptr.To(true),
				SELinuxMount: ptr.To(true), PreventPodSchedulingIfMissing: ptr.To(true),
				FSGroupPolicy:        ptr.To(storagev1.FileFSGroupPolicy),
				VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, storagev1.SchemeGroupVersion, `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"csi.example.com"},"spec":`+tt.spec+`}`)
			if diff := cmp.Diff(tt.want, obj.(*storagev1.CSIDriver).Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeBuiltinListDefaults: lists default their items, and the types
// upstream leaves alone stay as sent.
func TestDecodeBuiltinListDefaults(t *testing.T) {
	obj := decodeDefaulted(t, schedulingv1.SchemeGroupVersion, `{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClassList","items":[{"metadata":{"name":"a"},"value":1}]}`)
	if got := obj.(*schedulingv1.PriorityClassList).Items[0].PreemptionPolicy; got == nil || *got != corev1.PreemptLowerPriority {
		t.Errorf("item preemptionPolicy: got %v, want %q", got, corev1.PreemptLowerPriority)
	}
	pdb := decodeDefaulted(t, policyv1.SchemeGroupVersion, `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"p"},"spec":{"minAvailable":1}}`)
	want := policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))}
	if diff := cmp.Diff(want, pdb.(*policyv1.PodDisruptionBudget).Spec); diff != "" {
		t.Errorf("pod disruption budget spec (-want +got):\n%s", diff)
	}
}

// TestDecodePodCertificateRequestDefaults: maxExpirationSeconds is a day
// unless set (SetObjectDefaults_PodCertificateRequest), in lists too.
func TestDecodePodCertificateRequestDefaults(t *testing.T) {
	tests := []struct {
		name string
		data string
		want int32
	}{
		{name: "unset", data: `{"apiVersion":"certificates.k8s.io/v1","kind":"PodCertificateRequest","metadata":{"name":"r"},"spec":{}}`, want: 86400},
		{name: "set", data: `{"apiVersion":"certificates.k8s.io/v1","kind":"PodCertificateRequest","metadata":{"name":"r"},"spec":{"maxExpirationSeconds":3600}}`, want: 3600},
		{name: "list item", data: `{"apiVersion":"certificates.k8s.io/v1","kind":"PodCertificateRequestList","items":[{"metadata":{"name":"r"},"spec":{}}]}`, want: 86400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, certificatesv1.SchemeGroupVersion, tt.data)
			if list, ok := obj.(*certificatesv1.PodCertificateRequestList); ok {
				obj = &list.Items[0]
			}
			if got := obj.(*certificatesv1.PodCertificateRequest).Spec.MaxExpirationSeconds; got == nil || *got != tt.want {
				t.Errorf("maxExpirationSeconds: got %v, want %d", got, tt.want)
			}
		})
	}
}

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
	"maps"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// addBuiltinDefaults registers the defaults of the policy, scheduling,
// storage, node, networking and certificates types and of the core quota,
// limit range and replication controller types, as upstream's defaults.go
// of each group (k8s.io/kubernetes pkg/apis/*/v1) and its generated
// defaulters. PodDisruptionBudget, RuntimeClass and ControllerRevision
// have none.
func addBuiltinDefaults(s *runtime.Scheme) {
	s.AddTypeDefaultingFunc(&corev1.ReplicationController{}, func(obj any) { defaultReplicationController(obj.(*corev1.ReplicationController)) })
	s.AddTypeDefaultingFunc(&corev1.ResourceQuota{}, func(obj any) {
		q := obj.(*corev1.ResourceQuota)
		for _, list := range []corev1.ResourceList{q.Spec.Hard, q.Status.Hard, q.Status.Used} {
			roundUpToMilli(list)
		}
	})
	s.AddTypeDefaultingFunc(&corev1.LimitRange{}, func(obj any) {
		for i := range obj.(*corev1.LimitRange).Spec.Limits {
			defaultLimitRangeItem(&obj.(*corev1.LimitRange).Spec.Limits[i])
		}
	})
	s.AddTypeDefaultingFunc(&networkingv1.NetworkPolicy{}, func(obj any) { defaultNetworkPolicy(obj.(*networkingv1.NetworkPolicy)) })
	s.AddTypeDefaultingFunc(&networkingv1.IngressClass{}, func(obj any) {
		if p := obj.(*networkingv1.IngressClass).Spec.Parameters; p != nil && p.Scope == nil {
			p.Scope = ptr.To(networkingv1.IngressClassParametersReferenceScopeCluster)
		}
	})
	s.AddTypeDefaultingFunc(&schedulingv1.PriorityClass{}, func(obj any) {
		if pc := obj.(*schedulingv1.PriorityClass); pc.PreemptionPolicy == nil {
			pc.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
		}
	})
	s.AddTypeDefaultingFunc(&storagev1.StorageClass{}, func(obj any) {
		sc := obj.(*storagev1.StorageClass)
		if sc.ReclaimPolicy == nil {
			sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimDelete)
		}
		if sc.VolumeBindingMode == nil {
			sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
		}
	})
	s.AddTypeDefaultingFunc(&storagev1.CSIDriver{}, func(obj any) { defaultCSIDriver(&obj.(*storagev1.CSIDriver).Spec) })
	s.AddTypeDefaultingFunc(&certificatesv1.PodCertificateRequest{}, func(obj any) {
		if spec := &obj.(*certificatesv1.PodCertificateRequest).Spec; spec.MaxExpirationSeconds == nil {
			spec.MaxExpirationSeconds = ptr.To[int32](86400)
		}
	})
}

// builtinDefaultedLists are the lists whose items addBuiltinDefaults defaults.
var builtinDefaultedLists = []runtime.Object{
	&corev1.ReplicationControllerList{}, &corev1.ResourceQuotaList{}, &corev1.LimitRangeList{},
	&networkingv1.NetworkPolicyList{}, &networkingv1.IngressClassList{},
	&schedulingv1.PriorityClassList{}, &storagev1.StorageClassList{}, &storagev1.CSIDriverList{},
	&certificatesv1.PodCertificateRequestList{},
}

// defaultReplicationController takes the selector and the labels, when
// unset, from the template's labels, then replicas 1, then the template's
// pod spec defaults (SetObjectDefaults_ReplicationController).
func defaultReplicationController(rc *corev1.ReplicationController) {
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = maps.Clone(t.Labels)
		}
		if len(rc.Labels) == 0 {
			rc.Labels = maps.Clone(t.Labels)
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptr.To[int32](1)
	}
	if rc.Spec.Template != nil {
		DefaultPodSpec(&rc.Spec.Template.Spec)
	}
}

// defaultLimitRangeItem is SetDefaults_LimitRangeItem: a container's default
// limit falls back to its max, its default request to the default limit,
// then to the min; then every quantity is rounded up to milli-units.
func defaultLimitRangeItem(item *corev1.LimitRangeItem) {
	if item.Type == corev1.LimitTypeContainer {
		if item.Default == nil {
			item.Default = corev1.ResourceList{}
		}
		if item.DefaultRequest == nil {
			item.DefaultRequest = corev1.ResourceList{}
		}
		for _, fill := range []struct{ from, to corev1.ResourceList }{
			{item.Max, item.Default}, {item.Default, item.DefaultRequest}, {item.Min, item.DefaultRequest},
		} {
			for name, q := range fill.from {
				if _, ok := fill.to[name]; !ok {
					fill.to[name] = q.DeepCopy()
				}
			}
		}
	}
	for _, list := range []corev1.ResourceList{item.Max, item.Min, item.Default, item.DefaultRequest, item.MaxLimitRequestRatio} {
		roundUpToMilli(list)
	}
}

// roundUpToMilli is SetDefaults_ResourceList: quantities finer than a
// milli-unit are rounded up to one.
func roundUpToMilli(list corev1.ResourceList) {
	for name, q := range list {
		q.RoundUp(-3)
		list[name] = q
	}
}

// defaultNetworkPolicy: ports are TCP unless set, and a policy without
// policyTypes is an Ingress policy, and an Egress one too if it has egress rules.
func defaultNetworkPolicy(np *networkingv1.NetworkPolicy) {
	for i := range np.Spec.Ingress {
		defaultNetworkPolicyPorts(np.Spec.Ingress[i].Ports)
	}
	for i := range np.Spec.Egress {
		defaultNetworkPolicyPorts(np.Spec.Egress[i].Ports)
	}
	if len(np.Spec.PolicyTypes) == 0 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(np.Spec.Egress) != 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

func defaultNetworkPolicyPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			ports[i].Protocol = ptr.To(corev1.ProtocolTCP)
		}
	}
}

// defaultCSIDriver is SetDefaults_CSIDriver with upstream 1.37's default
// gates (SELinuxMountReadWriteOncePod and VolumeLimitScaling on).
func defaultCSIDriver(spec *storagev1.CSIDriverSpec) {
	for _, b := range []struct {
		field **bool
		value bool
	}{
		{&spec.AttachRequired, true}, {&spec.PodInfoOnMount, false}, {&spec.StorageCapacity, false},
		{&spec.RequiresRepublish, false}, {&spec.SELinuxMount, false}, {&spec.PreventPodSchedulingIfMissing, false},
	} {
		if *b.field == nil {
			*b.field = ptr.To(b.value)
		}
	}
	if spec.FSGroupPolicy == nil {
		spec.FSGroupPolicy = ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(spec.VolumeLifecycleModes) == 0 {
		spec.VolumeLifecycleModes = append(spec.VolumeLifecycleModes, storagev1.VolumeLifecyclePersistent)
	}
}

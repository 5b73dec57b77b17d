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
	"math"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// addWorkloadDefaults registers the defaults of the apps, batch, service,
// storage, node, discovery and rbac types, as upstream's defaults.go of each
// group (k8s.io/kubernetes pkg/apis/*/v1) and its generated defaulters,
// which default every nested pod template too.
func addWorkloadDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&appsv1.Deployment{}, func(obj any) { defaultDeployment(obj.(*appsv1.Deployment)) })
	s.AddTypeDefaultingFunc(&appsv1.StatefulSet{}, func(obj any) { defaultStatefulSet(obj.(*appsv1.StatefulSet)) })
	s.AddTypeDefaultingFunc(&appsv1.DaemonSet{}, func(obj any) { defaultDaemonSet(obj.(*appsv1.DaemonSet)) })
	s.AddTypeDefaultingFunc(&appsv1.ReplicaSet{}, func(obj any) {
		rs := obj.(*appsv1.ReplicaSet)
		if rs.Spec.Replicas == nil {
			rs.Spec.Replicas = ptr.To[int32](1)
		}
		DefaultPodSpec(&rs.Spec.Template.Spec)
	})
	s.AddTypeDefaultingFunc(&batchv1.Job{}, func(obj any) { defaultJob(&obj.(*batchv1.Job).Spec, &obj.(*batchv1.Job).ObjectMeta.Labels) })
	s.AddTypeDefaultingFunc(&batchv1.CronJob{}, func(obj any) { defaultCronJob(obj.(*batchv1.CronJob)) })
	s.AddTypeDefaultingFunc(&corev1.Service{}, func(obj any) { defaultService(obj.(*corev1.Service)) })
	s.AddTypeDefaultingFunc(&corev1.Endpoints{}, func(obj any) {
		for _, subset := range obj.(*corev1.Endpoints).Subsets {
			for i := range subset.Ports {
				if subset.Ports[i].Protocol == "" {
					subset.Ports[i].Protocol = corev1.ProtocolTCP
				}
			}
		}
	})
	s.AddTypeDefaultingFunc(&discoveryv1.EndpointSlice{}, func(obj any) {
		for i := range obj.(*discoveryv1.EndpointSlice).Ports {
			p := &obj.(*discoveryv1.EndpointSlice).Ports[i]
			if p.Name == nil {
				p.Name = ptr.To("")
			}
			if p.Protocol == nil {
				p.Protocol = ptr.To(corev1.ProtocolTCP)
			}
		}
	})
	s.AddTypeDefaultingFunc(&corev1.PersistentVolumeClaim{}, func(obj any) { defaultClaim(obj.(*corev1.PersistentVolumeClaim)) })
	s.AddTypeDefaultingFunc(&corev1.PersistentVolume{}, func(obj any) {
		pv := obj.(*corev1.PersistentVolume)
		if pv.Spec.PersistentVolumeReclaimPolicy == "" {
			pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
		}
		if pv.Spec.VolumeMode == nil {
			pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
		}
		if hp := pv.Spec.HostPath; hp != nil && hp.Type == nil {
			hp.Type = ptr.To(corev1.HostPathUnset)
		}
		defaultPersistentVolumeSource(&pv.Spec.PersistentVolumeSource)
		if pv.Status.Phase == "" {
			pv.Status.Phase = corev1.VolumePending
		}
	})
	s.AddTypeDefaultingFunc(&corev1.Node{}, func(obj any) {
		n := obj.(*corev1.Node)
		if n.Status.Allocatable == nil && len(n.Status.Capacity) > 0 {
			n.Status.Allocatable = n.Status.Capacity.DeepCopy()
		}
	})
	s.AddTypeDefaultingFunc(&rbacv1.RoleBinding{}, func(obj any) {
		defaultBinding(&obj.(*rbacv1.RoleBinding).RoleRef, obj.(*rbacv1.RoleBinding).Subjects)
	})
	s.AddTypeDefaultingFunc(&rbacv1.ClusterRoleBinding{}, func(obj any) {
		defaultBinding(&obj.(*rbacv1.ClusterRoleBinding).RoleRef, obj.(*rbacv1.ClusterRoleBinding).Subjects)
	})
	return nil
}

var (
	defaultPercent25 = intstr.FromString("25%")
	defaultOne       = intstr.FromInt32(1)
	defaultZero      = intstr.FromInt32(0)
)

func defaultDeployment(d *appsv1.Deployment) {
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptr.To[int32](1)
	}
	if d.Spec.Strategy.Type == "" {
		d.Spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if d.Spec.Strategy.RollingUpdate == nil {
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if d.Spec.Strategy.RollingUpdate.MaxUnavailable == nil {
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(defaultPercent25)
		}
		if d.Spec.Strategy.RollingUpdate.MaxSurge == nil {
			d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(defaultPercent25)
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	}
	DefaultPodSpec(&d.Spec.Template.Spec)
}

func defaultStatefulSet(ss *appsv1.StatefulSet) {
	if ss.Spec.PodManagementPolicy == "" {
		ss.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	// Unlike a Deployment's, an explicit RollingUpdate type without
	// rollingUpdate keeps it nil.
	if ss.Spec.UpdateStrategy.Type == "" {
		ss.Spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if ss.Spec.UpdateStrategy.RollingUpdate == nil {
			ss.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if ru := ss.Spec.UpdateStrategy.RollingUpdate; ss.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && ru != nil {
		if ru.Partition == nil {
			ru.Partition = ptr.To[int32](0)
		}
		if ru.MaxUnavailable == nil { // MaxUnavailableStatefulSet, on in kube-apiserver 1.37
			ru.MaxUnavailable = ptr.To(defaultOne)
		}
	}
	// As upstream's v1 conversion writes them.
	for i := range ss.Spec.VolumeClaimTemplates {
		ss.Spec.VolumeClaimTemplates[i].APIVersion, ss.Spec.VolumeClaimTemplates[i].Kind = "v1", "PersistentVolumeClaim"
	}
	if ss.Spec.PersistentVolumeClaimRetentionPolicy == nil {
		ss.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if p := ss.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted == "" {
		p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if p := ss.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenScaled == "" {
		p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if ss.Spec.Replicas == nil {
		ss.Spec.Replicas = ptr.To[int32](1)
	}
	if ss.Spec.RevisionHistoryLimit == nil {
		ss.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	for i := range ss.Spec.VolumeClaimTemplates {
		defaultClaim(&ss.Spec.VolumeClaimTemplates[i])
	}
	DefaultPodSpec(&ss.Spec.Template.Spec)
}

func defaultDaemonSet(ds *appsv1.DaemonSet) {
	if ds.Spec.UpdateStrategy.Type == "" {
		ds.Spec.UpdateStrategy.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if ds.Spec.UpdateStrategy.RollingUpdate == nil {
			ds.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable == nil {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(defaultOne)
		}
		if ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge == nil {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = ptr.To(defaultZero)
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	DefaultPodSpec(&ds.Spec.Template.Spec)
}

func defaultClaim(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Spec.VolumeMode == nil {
		pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
}

func defaultJob(spec *batchv1.JobSpec, labels *map[string]string) {
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptr.To[int32](1)
	}
	if spec.Parallelism == nil {
		spec.Parallelism = ptr.To[int32](1)
	}
	if spec.BackoffLimit == nil {
		spec.BackoffLimit = ptr.To[int32](6)
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = ptr.To[int32](math.MaxInt32)
		}
	}
	if spec.PodFailurePolicy != nil {
		for _, rule := range spec.PodFailurePolicy.Rules {
			for i := range rule.OnPodConditions {
				if rule.OnPodConditions[i].Status == "" {
					rule.OnPodConditions[i].Status = corev1.ConditionTrue
				}
			}
		}
	}
	if labels != nil && len(*labels) == 0 && len(spec.Template.Labels) > 0 {
		*labels = spec.Template.Labels
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.PodReplacementPolicy == nil {
		spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		}
	}
	if spec.ManualSelector == nil {
		spec.ManualSelector = ptr.To(false)
	}
	DefaultPodSpec(&spec.Template.Spec)
}

func defaultCronJob(cj *batchv1.CronJob) {
	if cj.Spec.ConcurrencyPolicy == "" {
		cj.Spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if cj.Spec.Suspend == nil {
		cj.Spec.Suspend = ptr.To(false)
	}
	if cj.Spec.SuccessfulJobsHistoryLimit == nil {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if cj.Spec.FailedJobsHistoryLimit == nil {
		cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	DefaultPodSpec(&cj.Spec.JobTemplate.Spec.Template.Spec)
}

func defaultService(svc *corev1.Service) {
	if svc.Spec.SessionAffinity == "" {
		svc.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	switch svc.Spec.SessionAffinity {
	case corev1.ServiceAffinityNone:
		svc.Spec.SessionAffinityConfig = nil
	case corev1.ServiceAffinityClientIP:
		if svc.Spec.SessionAffinityConfig == nil {
			svc.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{}
		}
		if svc.Spec.SessionAffinityConfig.ClientIP == nil {
			svc.Spec.SessionAffinityConfig.ClientIP = &corev1.ClientIPConfig{}
		}
		if svc.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds == nil {
			svc.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds = ptr.To(corev1.DefaultClientIPServiceAffinitySeconds)
		}
	}
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if (svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer || len(svc.Spec.ExternalIPs) > 0) && svc.Spec.ExternalTrafficPolicy == "" {
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if svc.Spec.InternalTrafficPolicy == nil && svc.Spec.Type != corev1.ServiceTypeExternalName {
		svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.AllocateLoadBalancerNodePorts == nil {
		svc.Spec.AllocateLoadBalancerNodePorts = ptr.To(true)
	}
	for i := range svc.Status.LoadBalancer.Ingress {
		if in := &svc.Status.LoadBalancer.Ingress[i]; in.IP != "" && in.IPMode == nil {
			in.IPMode = ptr.To(corev1.LoadBalancerIPModeVIP)
		}
	}
}

func defaultBinding(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
	for i := range subjects {
		if subjects[i].APIGroup == "" && (subjects[i].Kind == rbacv1.UserKind || subjects[i].Kind == rbacv1.GroupKind) {
			subjects[i].APIGroup = rbacv1.GroupName
		}
	}
}

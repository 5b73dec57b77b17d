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

package main

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	"k8s.io/kubernetes/pkg/apis/batch"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	"k8s.io/kubernetes/pkg/apis/certificates"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	"k8s.io/kubernetes/pkg/apis/coordination"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/apis/discovery"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	"k8s.io/kubernetes/pkg/apis/flowcontrol"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	"k8s.io/kubernetes/pkg/apis/networking"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	nodeapi "k8s.io/kubernetes/pkg/apis/node"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	"k8s.io/kubernetes/pkg/apis/policy"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	"k8s.io/kubernetes/pkg/apis/rbac"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	"k8s.io/kubernetes/pkg/apis/resource"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	"k8s.io/kubernetes/pkg/apis/storage"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"k8s.io/kubernetes/pkg/apis/storagemigration"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/resolver"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/apps/controllerrevision"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	csr "k8s.io/kubernetes/pkg/registry/certificates/certificates"
	"k8s.io/kubernetes/pkg/registry/certificates/clustertrustbundle"
	"k8s.io/kubernetes/pkg/registry/certificates/podcertificaterequest"
	"k8s.io/kubernetes/pkg/registry/coordination/lease"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/endpoint"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/core/limitrange"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolume"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/podtemplate"
	"k8s.io/kubernetes/pkg/registry/core/replicationcontroller"
	"k8s.io/kubernetes/pkg/registry/core/resourcequota"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/discovery/endpointslice"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/flowschema"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/prioritylevelconfiguration"
	"k8s.io/kubernetes/pkg/registry/networking/ingress"
	"k8s.io/kubernetes/pkg/registry/networking/ingressclass"
	"k8s.io/kubernetes/pkg/registry/networking/ipaddress"
	"k8s.io/kubernetes/pkg/registry/networking/networkpolicy"
	"k8s.io/kubernetes/pkg/registry/networking/servicecidr"
	"k8s.io/kubernetes/pkg/registry/node/runtimeclass"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
	"k8s.io/kubernetes/pkg/registry/resource/deviceclass"
	"k8s.io/kubernetes/pkg/registry/resource/devicetaintrule"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaimtemplate"
	"k8s.io/kubernetes/pkg/registry/resource/resourceslice"
	"k8s.io/kubernetes/pkg/registry/scheduling/priorityclass"
	"k8s.io/kubernetes/pkg/registry/storage/csidriver"
	"k8s.io/kubernetes/pkg/registry/storage/csinode"
	"k8s.io/kubernetes/pkg/registry/storage/csistoragecapacity"
	"k8s.io/kubernetes/pkg/registry/storage/storageclass"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattachment"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattributesclass"
	storagemigrationstrategy "k8s.io/kubernetes/pkg/registry/storagemigration/storagemigration"
)

// A kind is how upstream validates objects of one kind.
type kind struct {
	gv schema.GroupVersion
	// versioned and internal are empty objects of the kind.
	versioned, internal runtime.Object
	// strategy and status are its strategies, and its status's (the
	// strategy again for a kind without status).
	strategy, status strategy
}

type strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

var kinds = map[string]kind{
	"Pod":                   {corev1.SchemeGroupVersion, &corev1.Pod{}, &core.Pod{}, pod.Strategy, pod.StatusStrategy},
	"Service":               {corev1.SchemeGroupVersion, &corev1.Service{}, &core.Service{}, service.Strategy, service.StatusStrategy},
	"ReplicationController": {corev1.SchemeGroupVersion, &corev1.ReplicationController{}, &core.ReplicationController{}, replicationcontroller.Strategy, replicationcontroller.StatusStrategy},
	"PodTemplate":           {corev1.SchemeGroupVersion, &corev1.PodTemplate{}, &core.PodTemplate{}, podtemplate.Strategy, podtemplate.Strategy},
	"PersistentVolumeClaim": {corev1.SchemeGroupVersion, &corev1.PersistentVolumeClaim{}, &core.PersistentVolumeClaim{}, persistentvolumeclaim.Strategy, persistentvolumeclaim.StatusStrategy},
	"PersistentVolume":      {corev1.SchemeGroupVersion, &corev1.PersistentVolume{}, &core.PersistentVolume{}, persistentvolume.Strategy, persistentvolume.StatusStrategy},
	"Node":                  {corev1.SchemeGroupVersion, &corev1.Node{}, &core.Node{}, node.Strategy, node.StatusStrategy},
	"ConfigMap":             {corev1.SchemeGroupVersion, &corev1.ConfigMap{}, &core.ConfigMap{}, configmap.Strategy, configmap.Strategy},
	"Secret":                {corev1.SchemeGroupVersion, &corev1.Secret{}, &core.Secret{}, secret.Strategy, secret.Strategy},
	"Namespace":             {corev1.SchemeGroupVersion, &corev1.Namespace{}, &core.Namespace{}, namespace.Strategy, namespace.StatusStrategy},
	"ServiceAccount":        {corev1.SchemeGroupVersion, &corev1.ServiceAccount{}, &core.ServiceAccount{}, serviceaccount.Strategy, serviceaccount.Strategy},
	"Event":                 {corev1.SchemeGroupVersion, &corev1.Event{}, &core.Event{}, event.Strategy, event.Strategy},
	"ResourceQuota":         {corev1.SchemeGroupVersion, &corev1.ResourceQuota{}, &core.ResourceQuota{}, resourcequota.Strategy, resourcequota.StatusStrategy},
	"LimitRange":            {corev1.SchemeGroupVersion, &corev1.LimitRange{}, &core.LimitRange{}, limitrange.Strategy, limitrange.Strategy},

	"Job":     {batchv1.SchemeGroupVersion, &batchv1.Job{}, &batch.Job{}, job.Strategy, job.StatusStrategy},
	"CronJob": {batchv1.SchemeGroupVersion, &batchv1.CronJob{}, &batch.CronJob{}, cronjob.Strategy, cronjob.StatusStrategy},

	"Deployment":  {appsv1.SchemeGroupVersion, &appsv1.Deployment{}, &apps.Deployment{}, deployment.Strategy, deployment.StatusStrategy},
	"ReplicaSet":  {appsv1.SchemeGroupVersion, &appsv1.ReplicaSet{}, &apps.ReplicaSet{}, replicaset.Strategy, replicaset.StatusStrategy},
	"StatefulSet": {appsv1.SchemeGroupVersion, &appsv1.StatefulSet{}, &apps.StatefulSet{}, statefulset.Strategy, statefulset.StatusStrategy},
	"DaemonSet":   {appsv1.SchemeGroupVersion, &appsv1.DaemonSet{}, &apps.DaemonSet{}, daemonset.Strategy, daemonset.StatusStrategy},

	"Ingress":       {networkingv1.SchemeGroupVersion, &networkingv1.Ingress{}, &networking.Ingress{}, ingress.Strategy, ingress.StatusStrategy},
	"IngressClass":  {networkingv1.SchemeGroupVersion, &networkingv1.IngressClass{}, &networking.IngressClass{}, ingressclass.Strategy, ingressclass.Strategy},
	"NetworkPolicy": {networkingv1.SchemeGroupVersion, &networkingv1.NetworkPolicy{}, &networking.NetworkPolicy{}, networkpolicy.Strategy, networkpolicy.Strategy},
	"EndpointSlice": {discoveryv1.SchemeGroupVersion, &discoveryv1.EndpointSlice{}, &discovery.EndpointSlice{}, endpointslice.Strategy, endpointslice.Strategy},

	"Role":               {rbacv1.SchemeGroupVersion, &rbacv1.Role{}, &rbac.Role{}, role.Strategy, role.Strategy},
	"ClusterRole":        {rbacv1.SchemeGroupVersion, &rbacv1.ClusterRole{}, &rbac.ClusterRole{}, clusterrole.Strategy, clusterrole.Strategy},
	"RoleBinding":        {rbacv1.SchemeGroupVersion, &rbacv1.RoleBinding{}, &rbac.RoleBinding{}, rolebinding.Strategy, rolebinding.Strategy},
	"ClusterRoleBinding": {rbacv1.SchemeGroupVersion, &rbacv1.ClusterRoleBinding{}, &rbac.ClusterRoleBinding{}, clusterrolebinding.Strategy, clusterrolebinding.Strategy},

	"ValidatingWebhookConfiguration": {admissionregistrationv1.SchemeGroupVersion, &admissionregistrationv1.ValidatingWebhookConfiguration{}, &admissionregistration.ValidatingWebhookConfiguration{},
		validatingwebhookconfiguration.Strategy, validatingwebhookconfiguration.Strategy},
	"MutatingWebhookConfiguration": {admissionregistrationv1.SchemeGroupVersion, &admissionregistrationv1.MutatingWebhookConfiguration{}, &admissionregistration.MutatingWebhookConfiguration{},
		mutatingwebhookconfiguration.Strategy, mutatingwebhookconfiguration.Strategy},

	"HorizontalPodAutoscaler": {autoscalingv2.SchemeGroupVersion, &autoscalingv2.HorizontalPodAutoscaler{}, &autoscaling.HorizontalPodAutoscaler{},
		horizontalpodautoscaler.Strategy, horizontalpodautoscaler.StatusStrategy},
	"PodDisruptionBudget": {policyv1.SchemeGroupVersion, &policyv1.PodDisruptionBudget{}, &policy.PodDisruptionBudget{}, poddisruptionbudget.Strategy, poddisruptionbudget.StatusStrategy},
	"CertificateSigningRequest": {certificatesv1.SchemeGroupVersion, &certificatesv1.CertificateSigningRequest{}, &certificates.CertificateSigningRequest{},
		csr.Strategy, csr.StatusStrategy},
	"Lease":         {coordinationv1.SchemeGroupVersion, &coordinationv1.Lease{}, &coordination.Lease{}, lease.Strategy, lease.Strategy},
	"RuntimeClass":  {nodev1.SchemeGroupVersion, &nodev1.RuntimeClass{}, &nodeapi.RuntimeClass{}, runtimeclass.Strategy, runtimeclass.Strategy},
	"PriorityClass": {schedulingv1.SchemeGroupVersion, &schedulingv1.PriorityClass{}, &scheduling.PriorityClass{}, priorityclass.Strategy, priorityclass.Strategy},
	"StorageClass":  {storagev1.SchemeGroupVersion, &storagev1.StorageClass{}, &storage.StorageClass{}, storageclass.Strategy, storageclass.Strategy},
	"CSIDriver":     {storagev1.SchemeGroupVersion, &storagev1.CSIDriver{}, &storage.CSIDriver{}, csidriver.Strategy, csidriver.Strategy},

	"Endpoints":          {corev1.SchemeGroupVersion, &corev1.Endpoints{}, &core.Endpoints{}, endpoint.Strategy, endpoint.Strategy},
	"ControllerRevision": {appsv1.SchemeGroupVersion, &appsv1.ControllerRevision{}, &apps.ControllerRevision{}, controllerrevision.Strategy, controllerrevision.Strategy},
	"IPAddress":          {networkingv1.SchemeGroupVersion, &networkingv1.IPAddress{}, &networking.IPAddress{}, ipaddress.Strategy, ipaddress.Strategy},
	"ServiceCIDR":        {networkingv1.SchemeGroupVersion, &networkingv1.ServiceCIDR{}, &networking.ServiceCIDR{}, servicecidr.Strategy, servicecidr.StatusStrategy},
	"VolumeAttachment":   {storagev1.SchemeGroupVersion, &storagev1.VolumeAttachment{}, &storage.VolumeAttachment{}, volumeattachment.Strategy, volumeattachment.StatusStrategy},
	"CSINode":            {storagev1.SchemeGroupVersion, &storagev1.CSINode{}, &storage.CSINode{}, csinode.Strategy, csinode.StatusStrategy},
	"CSIStorageCapacity": {storagev1.SchemeGroupVersion, &storagev1.CSIStorageCapacity{}, &storage.CSIStorageCapacity{}, csistoragecapacity.Strategy, csistoragecapacity.Strategy},
	"VolumeAttributesClass": {storagev1.SchemeGroupVersion, &storagev1.VolumeAttributesClass{}, &storage.VolumeAttributesClass{},
		volumeattributesclass.Strategy, volumeattributesclass.Strategy},
	"ClusterTrustBundle": {certificatesv1.SchemeGroupVersion, &certificatesv1.ClusterTrustBundle{}, &certificates.ClusterTrustBundle{},
		clustertrustbundle.Strategy, clustertrustbundle.Strategy},
	"PodCertificateRequest": {certificatesv1.SchemeGroupVersion, &certificatesv1.PodCertificateRequest{}, &certificates.PodCertificateRequest{},
		podcertificaterequest.NewStrategy(), podcertificaterequest.NewStrategy()}, // its status strategy needs an authorizer
	"StorageVersionMigration": {storagemigrationv1.SchemeGroupVersion, &storagemigrationv1.StorageVersionMigration{}, &storagemigration.StorageVersionMigration{},
		storagemigrationstrategy.Strategy, storagemigrationstrategy.StatusStrategy},

	"FlowSchema": {flowcontrolv1.SchemeGroupVersion, &flowcontrolv1.FlowSchema{}, &flowcontrol.FlowSchema{}, flowschema.Strategy, flowschema.StatusStrategy},
	"PriorityLevelConfiguration": {flowcontrolv1.SchemeGroupVersion, &flowcontrolv1.PriorityLevelConfiguration{}, &flowcontrol.PriorityLevelConfiguration{},
		prioritylevelconfiguration.Strategy, prioritylevelconfiguration.StatusStrategy},

	"ValidatingAdmissionPolicy": {admissionregistrationv1.SchemeGroupVersion, &admissionregistrationv1.ValidatingAdmissionPolicy{}, &admissionregistration.ValidatingAdmissionPolicy{},
		validatingAdmissionPolicies, validatingadmissionpolicy.NewStatusStrategy(validatingAdmissionPolicies)},
	"ValidatingAdmissionPolicyBinding": {admissionregistrationv1.SchemeGroupVersion, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, &admissionregistration.ValidatingAdmissionPolicyBinding{},
		validatingBindings, validatingBindings},
	"MutatingAdmissionPolicy": {admissionregistrationv1.SchemeGroupVersion, &admissionregistrationv1.MutatingAdmissionPolicy{}, &admissionregistration.MutatingAdmissionPolicy{},
		mutatingadmissionpolicy.NewStrategy(nil, nil), mutatingadmissionpolicy.NewStrategy(nil, nil)},
	"MutatingAdmissionPolicyBinding": {admissionregistrationv1.SchemeGroupVersion, &admissionregistrationv1.MutatingAdmissionPolicyBinding{}, &admissionregistration.MutatingAdmissionPolicyBinding{},
		mutatingBindings, mutatingBindings},

	"DeviceClass":     {resourcev1.SchemeGroupVersion, &resourcev1.DeviceClass{}, &resource.DeviceClass{}, deviceclass.Strategy, deviceclass.Strategy},
	"DeviceTaintRule": {resourcev1.SchemeGroupVersion, &resourcev1.DeviceTaintRule{}, &resource.DeviceTaintRule{}, devicetaintrule.Strategy, devicetaintrule.StatusStrategy},
	"ResourceSlice":   {resourcev1.SchemeGroupVersion, &resourcev1.ResourceSlice{}, &resource.ResourceSlice{}, resourceslice.Strategy, resourceslice.Strategy},
	"ResourceClaim":   {resourcev1.SchemeGroupVersion, &resourcev1.ResourceClaim{}, &resource.ResourceClaim{}, resourceClaims, resourceclaim.NewStatusStrategy(resourceClaims)},
	"ResourceClaimTemplate": {resourcev1.SchemeGroupVersion, &resourcev1.ResourceClaimTemplate{}, &resource.ResourceClaimTemplate{},
		resourceclaimtemplate.NewStrategy(namespaces), resourceclaimtemplate.NewStrategy(namespaces)},
}

// The strategies that take what a server has: no authorizer (upstream
// skips the checks that need one), a resolver of kinds to resources
// (bindings ask for one before they look for the authorizer), and
// namespaces of a fake client (the admin-access checks look a claim's up).
var (
	namespaces                  = fake.NewClientset().CoreV1().Namespaces()
	resourceClaims              = resourceclaim.NewStrategy(namespaces, nil)
	validatingAdmissionPolicies = validatingadmissionpolicy.NewStrategy(nil, nil)
	resources                   = resolver.ResourceResolverFunc(func(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
		return gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind) + "s"), nil
	})
	validatingBindings = validatingadmissionpolicybinding.NewStrategy(nil, nil, resources)
	mutatingBindings   = mutatingadmissionpolicybinding.NewStrategy(nil, nil, resources)
)

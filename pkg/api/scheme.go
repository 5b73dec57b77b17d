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
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

var (
	// Scheme knows every served type.
	Scheme = runtime.NewScheme()
	// Codecs encodes and decodes the served types in JSON, YAML, protobuf and CBOR.
	Codecs = serializer.NewCodecFactory(Scheme)
	// ParameterCodec decodes query parameters into options structs.
	ParameterCodec = runtime.NewParameterCodec(Scheme)
)

// StorageVersions are the versions objects are stored in etcd as, one per
// group that has storage (events.k8s.io Events are core Events in etcd,
// as upstream keeps them).
var StorageVersions = []schema.GroupVersion{
	corev1.SchemeGroupVersion,
	coordinationv1.SchemeGroupVersion,
	appsv1.SchemeGroupVersion,
	autoscalingv2.SchemeGroupVersion,
	batchv1.SchemeGroupVersion,
	discoveryv1.SchemeGroupVersion,
	networkingv1.SchemeGroupVersion,
	nodev1.SchemeGroupVersion,
	policyv1.SchemeGroupVersion,
	rbacv1.SchemeGroupVersion,
	schedulingv1.SchemeGroupVersion,
	storagev1.SchemeGroupVersion,
	resourcev1.SchemeGroupVersion,
	admissionregistrationv1.SchemeGroupVersion,
	certificatesv1.SchemeGroupVersion,
	storagemigrationv1.SchemeGroupVersion,
	flowcontrolv1.SchemeGroupVersion,
}

// internalTypes are the served types registered again as the internal
// version of their group: generic handlers decode to the internal ("hub")
// version and back, and with one Go type behind both the scheme only
// rewrites the kind. Order matters: it is the order of a type's kinds.
// events.k8s.io's hub is the core Event, as upstream's
// (its v1 Event converts to and from it, conversion.go); autoscaling's
// HorizontalPodAutoscaler hub is v2's, the version upstream stores (v1's
// converts to and from it, autoscaling.go).
var internalTypes = []struct {
	group string
	types []runtime.Object
}{
	{corev1.GroupName, []runtime.Object{
		&corev1.Namespace{}, &corev1.NamespaceList{},
		&corev1.ConfigMap{}, &corev1.ConfigMapList{},
		&corev1.Secret{}, &corev1.SecretList{},
		&corev1.Pod{}, &corev1.PodList{},
		&corev1.PodTemplate{}, &corev1.PodTemplateList{},
		&corev1.ServiceAccount{}, &corev1.ServiceAccountList{},
		&corev1.Event{}, &corev1.EventList{},
		&corev1.Service{}, &corev1.ServiceList{},
		&corev1.Endpoints{}, &corev1.EndpointsList{},
		&corev1.PersistentVolumeClaim{}, &corev1.PersistentVolumeClaimList{},
		&corev1.PersistentVolume{}, &corev1.PersistentVolumeList{},
		&corev1.Node{}, &corev1.NodeList{},
		&corev1.ResourceQuota{}, &corev1.ResourceQuotaList{},
		&corev1.LimitRange{}, &corev1.LimitRangeList{},
		&corev1.ReplicationController{}, &corev1.ReplicationControllerList{},
		&corev1.ComponentStatus{}, &corev1.ComponentStatusList{},
	}},
	{coordinationv1.GroupName, []runtime.Object{&coordinationv1.Lease{}, &coordinationv1.LeaseList{}}},
	{appsv1.GroupName, []runtime.Object{
		&appsv1.Deployment{}, &appsv1.DeploymentList{},
		&appsv1.StatefulSet{}, &appsv1.StatefulSetList{},
		&appsv1.DaemonSet{}, &appsv1.DaemonSetList{},
		&appsv1.ReplicaSet{}, &appsv1.ReplicaSetList{},
		&appsv1.ControllerRevision{}, &appsv1.ControllerRevisionList{},
	}},
	{autoscalingv1.GroupName, []runtime.Object{
		&autoscalingv1.Scale{},
		&autoscalingv2.HorizontalPodAutoscaler{}, &autoscalingv2.HorizontalPodAutoscalerList{},
	}},
	{batchv1.GroupName, []runtime.Object{&batchv1.Job{}, &batchv1.JobList{}, &batchv1.CronJob{}, &batchv1.CronJobList{}}},
	{discoveryv1.GroupName, []runtime.Object{&discoveryv1.EndpointSlice{}, &discoveryv1.EndpointSliceList{}}},
	{networkingv1.GroupName, []runtime.Object{
		&networkingv1.Ingress{}, &networkingv1.IngressList{},
		&networkingv1.NetworkPolicy{}, &networkingv1.NetworkPolicyList{},
		&networkingv1.IngressClass{}, &networkingv1.IngressClassList{},
		&networkingv1.IPAddress{}, &networkingv1.IPAddressList{},
		&networkingv1.ServiceCIDR{}, &networkingv1.ServiceCIDRList{},
	}},
	{nodev1.GroupName, []runtime.Object{&nodev1.RuntimeClass{}, &nodev1.RuntimeClassList{}}},
	{policyv1.GroupName, []runtime.Object{&policyv1.PodDisruptionBudget{}, &policyv1.PodDisruptionBudgetList{}}},
	{rbacv1.GroupName, []runtime.Object{
		&rbacv1.Role{}, &rbacv1.RoleList{},
		&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleList{},
		&rbacv1.RoleBinding{}, &rbacv1.RoleBindingList{},
		&rbacv1.ClusterRoleBinding{}, &rbacv1.ClusterRoleBindingList{},
	}},
	{schedulingv1.GroupName, []runtime.Object{&schedulingv1.PriorityClass{}, &schedulingv1.PriorityClassList{}}},
	{storagev1.GroupName, []runtime.Object{
		&storagev1.StorageClass{}, &storagev1.StorageClassList{},
		&storagev1.CSIDriver{}, &storagev1.CSIDriverList{},
		&storagev1.CSINode{}, &storagev1.CSINodeList{},
		&storagev1.CSIStorageCapacity{}, &storagev1.CSIStorageCapacityList{},
		&storagev1.VolumeAttachment{}, &storagev1.VolumeAttachmentList{},
		&storagev1.VolumeAttributesClass{}, &storagev1.VolumeAttributesClassList{},
	}},
	{resourcev1.GroupName, []runtime.Object{
		&resourcev1.DeviceClass{}, &resourcev1.DeviceClassList{},
		&resourcev1.DeviceTaintRule{}, &resourcev1.DeviceTaintRuleList{},
		&resourcev1.ResourceClaim{}, &resourcev1.ResourceClaimList{},
		&resourcev1.ResourceClaimTemplate{}, &resourcev1.ResourceClaimTemplateList{},
		&resourcev1.ResourceSlice{}, &resourcev1.ResourceSliceList{},
	}},
	{admissionregistrationv1.GroupName, []runtime.Object{
		&admissionregistrationv1.ValidatingWebhookConfiguration{}, &admissionregistrationv1.ValidatingWebhookConfigurationList{},
		&admissionregistrationv1.MutatingWebhookConfiguration{}, &admissionregistrationv1.MutatingWebhookConfigurationList{},
		&admissionregistrationv1.ValidatingAdmissionPolicy{}, &admissionregistrationv1.ValidatingAdmissionPolicyList{},
		&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{},
		&admissionregistrationv1.MutatingAdmissionPolicy{}, &admissionregistrationv1.MutatingAdmissionPolicyList{},
		&admissionregistrationv1.MutatingAdmissionPolicyBinding{}, &admissionregistrationv1.MutatingAdmissionPolicyBindingList{},
	}},
	{certificatesv1.GroupName, []runtime.Object{
		&certificatesv1.CertificateSigningRequest{}, &certificatesv1.CertificateSigningRequestList{},
		&certificatesv1.ClusterTrustBundle{}, &certificatesv1.ClusterTrustBundleList{},
		&certificatesv1.PodCertificateRequest{}, &certificatesv1.PodCertificateRequestList{},
	}},
	{storagemigrationv1.GroupName, []runtime.Object{&storagemigrationv1.StorageVersionMigration{}, &storagemigrationv1.StorageVersionMigrationList{}}},
	{flowcontrolv1.GroupName, []runtime.Object{
		&flowcontrolv1.FlowSchema{}, &flowcontrolv1.FlowSchemaList{},
		&flowcontrolv1.PriorityLevelConfiguration{}, &flowcontrolv1.PriorityLevelConfigurationList{},
	}},
	{eventsv1.GroupName, []runtime.Object{&corev1.Event{}, &corev1.EventList{}}},
	// The reviews, which are only created (and TokenRequest, the
	// serviceaccounts/token subresource's kind).
	{authenticationv1.GroupName, []runtime.Object{&authenticationv1.TokenReview{}, &authenticationv1.SelfSubjectReview{}, &authenticationv1.TokenRequest{}}},
	{authorizationv1.GroupName, []runtime.Object{
		&authorizationv1.SubjectAccessReview{}, &authorizationv1.SelfSubjectAccessReview{},
		&authorizationv1.LocalSubjectAccessReview{}, &authorizationv1.SelfSubjectRulesReview{},
	}},
}

func init() {
	utilruntime.Must(AddToScheme(Scheme))
}

// AddToScheme registers the served types, their internal twins, defaults,
// conversions and field label conversions on s.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		authenticationv1.AddToScheme,
		authorizationv1.AddToScheme,
		coordinationv1.AddToScheme,
		appsv1.AddToScheme,
		autoscalingv1.AddToScheme,
		autoscalingv2.AddToScheme,
		batchv1.AddToScheme,
		discoveryv1.AddToScheme,
		networkingv1.AddToScheme,
		nodev1.AddToScheme,
		policyv1.AddToScheme,
		rbacv1.AddToScheme,
		schedulingv1.AddToScheme,
		storagev1.AddToScheme,
		resourcev1.AddToScheme,
		eventsv1.AddToScheme,
		admissionregistrationv1.AddToScheme,
		certificatesv1.AddToScheme,
		storagemigrationv1.AddToScheme,
		flowcontrolv1.AddToScheme,
		addDefaultingFuncs,
		addEventConversions,
		addAutoscalingConversions,
		addFieldLabelConversions,
		addPodLogOptionsConversion,
		addPodStreamOptionsConversions,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	// autoscaling/v2 is preferred, as upstream's.
	if err := s.SetVersionPriority(autoscalingv2.SchemeGroupVersion, autoscalingv1.SchemeGroupVersion); err != nil {
		return err
	}
	for _, g := range internalTypes {
		s.AddKnownTypes(schema.GroupVersion{Group: g.group, Version: runtime.APIVersionInternal}, g.types...)
	}

	// Options and status types every API server registers (as sample-apiserver does).
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	metav1.AddToGroupVersion(s, unversioned)
	s.AddUnversionedTypes(unversioned,
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return nil
}

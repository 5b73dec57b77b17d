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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
)

// The field selectors each type supports, as upstream's field-label conversions
// and GetAttrs define them. A selector on any other field is a 400.

// PodFields is the field set a pod is selected by.
func PodFields(p *corev1.Pod) fields.Set {
	podIP := ""
	if len(p.Status.PodIPs) > 0 {
		podIP = p.Status.PodIPs[0].IP
	}
	f := fields.Set{
		"spec.nodeName":            p.Spec.NodeName,
		"spec.restartPolicy":       string(p.Spec.RestartPolicy),
		"spec.schedulerName":       p.Spec.SchedulerName,
		"spec.serviceAccountName":  p.Spec.ServiceAccountName,
		"spec.hostNetwork":         fmt.Sprint(p.Spec.HostNetwork),
		"status.phase":             string(p.Status.Phase),
		"status.podIP":             podIP,
		"status.nominatedNodeName": p.Status.NominatedNodeName,
	}
	return generic.AddObjectMetaFieldsSet(f, &p.ObjectMeta, true)
}

// EventFields is the field set an event is selected by.
func EventFields(e *corev1.Event) fields.Set {
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	f := fields.Set{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         source,
		"type":                           e.Type,
	}
	return generic.AddObjectMetaFieldsSet(f, &e.ObjectMeta, true)
}

// NamespaceFields is the field set a namespace is selected by.
func NamespaceFields(ns *corev1.Namespace) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"status.phase": string(ns.Status.Phase)}, &ns.ObjectMeta, false)
}

// SecretFields is the field set a secret is selected by.
func SecretFields(s *corev1.Secret) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"type": string(s.Type)}, &s.ObjectMeta, true)
}

// ServiceFields is the field set a service is selected by.
func ServiceFields(s *corev1.Service) fields.Set {
	f := fields.Set{"spec.clusterIP": s.Spec.ClusterIP, "spec.type": string(s.Spec.Type)}
	return generic.AddObjectMetaFieldsSet(f, &s.ObjectMeta, true)
}

// NodeFields is the field set a node is selected by.
func NodeFields(n *corev1.Node) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"spec.unschedulable": fmt.Sprint(n.Spec.Unschedulable)}, &n.ObjectMeta, false)
}

// ReplicaSetFields is the field set a replica set is selected by.
func ReplicaSetFields(rs *appsv1.ReplicaSet) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"status.replicas": fmt.Sprint(rs.Status.Replicas)}, &rs.ObjectMeta, true)
}

// ReplicationControllerFields is the field set a replication controller is selected by.
func ReplicationControllerFields(rc *corev1.ReplicationController) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"status.replicas": fmt.Sprint(rc.Status.Replicas)}, &rc.ObjectMeta, true)
}

// JobFields is the field set a job is selected by.
func JobFields(j *batchv1.Job) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"status.successful": fmt.Sprint(j.Status.Succeeded)}, &j.ObjectMeta, true)
}

// ResourceSliceFields is the field set a resource slice is selected by:
// its node ("" for none), driver and pool.
func ResourceSliceFields(rs *resourcev1.ResourceSlice) fields.Set {
	node := ""
	if rs.Spec.NodeName != nil {
		node = *rs.Spec.NodeName
	}
	f := fields.Set{
		resourcev1.ResourceSliceSelectorNodeName: node,
		resourcev1.ResourceSliceSelectorDriver:   rs.Spec.Driver,
		resourcev1.ResourceSliceSelectorPoolName: rs.Spec.Pool.Name,
	}
	return generic.AddObjectMetaFieldsSet(f, &rs.ObjectMeta, false)
}

// CertificateSigningRequestFields is the field set a certificate signing
// request is selected by: its signer.
func CertificateSigningRequestFields(csr *certificatesv1.CertificateSigningRequest) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"spec.signerName": csr.Spec.SignerName}, &csr.ObjectMeta, false)
}

// ClusterTrustBundleFields is the field set a cluster trust bundle is
// selected by: its signer ("" for none).
func ClusterTrustBundleFields(b *certificatesv1.ClusterTrustBundle) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"spec.signerName": b.Spec.SignerName}, &b.ObjectMeta, false)
}

// PodCertificateRequestFields is the field set a pod certificate request
// is selected by: its signer, pod and node.
func PodCertificateRequestFields(req *certificatesv1.PodCertificateRequest) fields.Set {
	f := fields.Set{"spec.signerName": req.Spec.SignerName, "spec.podName": req.Spec.PodName, "spec.nodeName": string(req.Spec.NodeName)}
	return generic.AddObjectMetaFieldsSet(f, &req.ObjectMeta, true)
}

// podCertificateRequestLabels are the field labels upstream's conversion
// accepts for pod certificate requests: their field set but
// metadata.namespace, which a selector may therefore not name.
func podCertificateRequestLabels() fields.Set {
	set := PodCertificateRequestFields(&certificatesv1.PodCertificateRequest{})
	delete(set, "metadata.namespace")
	return set
}

// addFieldLabelConversions accepts exactly the labels of the field sets above;
// kinds without one accept metadata.name and metadata.namespace (the scheme's default).
func addFieldLabelConversions(s *runtime.Scheme) error {
	for gvk, set := range map[schema.GroupVersionKind]fields.Set{
		corev1.SchemeGroupVersion.WithKind("Pod"):                               PodFields(&corev1.Pod{}),
		corev1.SchemeGroupVersion.WithKind("Event"):                             EventFields(&corev1.Event{}),
		corev1.SchemeGroupVersion.WithKind("Namespace"):                         NamespaceFields(&corev1.Namespace{}),
		corev1.SchemeGroupVersion.WithKind("Secret"):                            SecretFields(&corev1.Secret{}),
		corev1.SchemeGroupVersion.WithKind("Service"):                           ServiceFields(&corev1.Service{}),
		corev1.SchemeGroupVersion.WithKind("Node"):                              NodeFields(&corev1.Node{}),
		appsv1.SchemeGroupVersion.WithKind("ReplicaSet"):                        ReplicaSetFields(&appsv1.ReplicaSet{}),
		corev1.SchemeGroupVersion.WithKind("ReplicationController"):             ReplicationControllerFields(&corev1.ReplicationController{}),
		batchv1.SchemeGroupVersion.WithKind("Job"):                              JobFields(&batchv1.Job{}),
		resourcev1.SchemeGroupVersion.WithKind("ResourceSlice"):                 ResourceSliceFields(&resourcev1.ResourceSlice{}),
		certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"): CertificateSigningRequestFields(&certificatesv1.CertificateSigningRequest{}),
		certificatesv1.SchemeGroupVersion.WithKind("ClusterTrustBundle"):        ClusterTrustBundleFields(&certificatesv1.ClusterTrustBundle{}),
		certificatesv1.SchemeGroupVersion.WithKind("PodCertificateRequest"):     podCertificateRequestLabels(),
	} {
		if err := s.AddFieldLabelConversionFunc(gvk, labelsOf(set)); err != nil {
			return err
		}
	}
	return s.AddFieldLabelConversionFunc(eventsv1.SchemeGroupVersion.WithKind("Event"), eventsV1FieldLabel)
}

func labelsOf(set fields.Set) runtime.FieldLabelConversionFunc {
	return func(label, value string) (string, string, error) {
		if _, ok := set[label]; ok {
			return label, value, nil
		}
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
}

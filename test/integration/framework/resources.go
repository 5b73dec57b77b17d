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

package framework

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var podSpec = map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}

var (
	labelsX       = map[string]any{"app": "x"}
	workloadSpec  = map[string]any{"selector": map[string]any{"matchLabels": labelsX}, "template": map[string]any{"metadata": map[string]any{"labels": labelsX}, "spec": podSpec}}
	jobPodSpec    = map[string]any{"containers": podSpec["containers"], "restartPolicy": "Never"}
	policyRules   = []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get"}}}
	bindingToRole = func(kind string) map[string]any {
		return map[string]any{
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": "r"},
			"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}},
		}
	}
)

// ServedResource is a served resource with a minimal valid body.
type ServedResource struct {
	GVR     schema.GroupVersionResource
	Kind    string
	Cluster bool // cluster-scoped
	Body    map[string]any
}

// GVR is group's resource in version v1.
func GVR(group, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}
}

// ServedResources are every served resource (but namespaces) with a minimal valid body.
var ServedResources = []ServedResource{
	{GVR: GVR("", "configmaps"), Kind: "ConfigMap", Body: map[string]any{"data": map[string]any{"k": "v"}}},
	{GVR: GVR("", "secrets"), Kind: "Secret", Body: map[string]any{"stringData": map[string]any{"k": "v"}}},
	{GVR: GVR("", "pods"), Kind: "Pod", Body: map[string]any{"spec": podSpec}},
	{GVR: GVR("", "podtemplates"), Kind: "PodTemplate", Body: map[string]any{"template": map[string]any{"spec": podSpec}}},
	{GVR: GVR("", "serviceaccounts"), Kind: "ServiceAccount"},
	{GVR: GVR("", "events"), Kind: "Event", Body: map[string]any{"reason": "Test", "type": "Normal"}},
	{GVR: GVR("", "services"), Kind: "Service", Body: map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": 80}}}}},
	{GVR: GVR("", "endpoints"), Kind: "Endpoints", Body: map[string]any{"subsets": []any{map[string]any{
		"addresses": []any{map[string]any{"ip": "10.1.2.3"}}, "ports": []any{map[string]any{"port": 80}}}}}},
	{GVR: GVR("", "persistentvolumeclaims"), Kind: "PersistentVolumeClaim", Body: map[string]any{"spec": map[string]any{
		"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}}},
	{GVR: GVR("", "persistentvolumes"), Kind: "PersistentVolume", Cluster: true, Body: map[string]any{"spec": map[string]any{
		"capacity": map[string]any{"storage": "1Gi"}, "accessModes": []any{"ReadWriteOnce"}, "hostPath": map[string]any{"path": "/tmp/pv"}}}},
	{GVR: GVR("", "nodes"), Kind: "Node", Cluster: true},
	{GVR: GVR("", "resourcequotas"), Kind: "ResourceQuota", Body: map[string]any{"spec": map[string]any{"hard": map[string]any{"pods": "10"}}}},
	{GVR: GVR("", "limitranges"), Kind: "LimitRange", Body: map[string]any{"spec": map[string]any{
		"limits": []any{map[string]any{"type": "Container", "max": map[string]any{"cpu": "1"}}}}}},
	{GVR: GVR("", "replicationcontrollers"), Kind: "ReplicationController", Body: map[string]any{"spec": map[string]any{
		"template": map[string]any{"metadata": map[string]any{"labels": labelsX}, "spec": podSpec}}}},
	{GVR: GVR("apps", "deployments"), Kind: "Deployment", Body: map[string]any{"spec": workloadSpec}},
	{GVR: GVR("apps", "statefulsets"), Kind: "StatefulSet", Body: map[string]any{"spec": workloadSpec}},
	{GVR: GVR("apps", "daemonsets"), Kind: "DaemonSet", Body: map[string]any{"spec": workloadSpec}},
	{GVR: GVR("apps", "replicasets"), Kind: "ReplicaSet", Body: map[string]any{"spec": workloadSpec}},
	{GVR: GVR("apps", "controllerrevisions"), Kind: "ControllerRevision", Body: map[string]any{"revision": int64(1), "data": map[string]any{"spec": map[string]any{}}}},
	{GVR: schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}, Kind: "HorizontalPodAutoscaler", Body: map[string]any{"spec": map[string]any{
		"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}, "maxReplicas": int64(3)}}},
	{GVR: GVR("batch", "jobs"), Kind: "Job", Body: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": jobPodSpec}}}},
	{GVR: GVR("batch", "cronjobs"), Kind: "CronJob", Body: map[string]any{"spec": map[string]any{"schedule": "*/5 * * * *",
		"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": jobPodSpec}}}}}},
	{GVR: GVR("coordination.k8s.io", "leases"), Kind: "Lease", Body: map[string]any{"spec": map[string]any{"holderIdentity": "me"}}},
	{GVR: GVR("discovery.k8s.io", "endpointslices"), Kind: "EndpointSlice", Body: map[string]any{"addressType": "IPv4",
		"endpoints": []any{map[string]any{"addresses": []any{"10.1.2.3"}}}, "ports": []any{map[string]any{"port": 80}}}},
	{GVR: GVR("events.k8s.io", "events"), Kind: "Event", Body: map[string]any{"eventTime": "2026-01-01T00:00:00.000000Z",
		"reportingController": "example.com/test", "reportingInstance": "test-1", "action": "Test", "reason": "Test", "type": "Normal",
		"regarding": map[string]any{"kind": "Pod", "name": "p", "namespace": "default"}}},
	{GVR: GVR("networking.k8s.io", "ingresses"), Kind: "Ingress", Body: map[string]any{"spec": map[string]any{
		"defaultBackend": map[string]any{"service": map[string]any{"name": "svc", "port": map[string]any{"number": 80}}}}}},
	{GVR: GVR("networking.k8s.io", "networkpolicies"), Kind: "NetworkPolicy", Body: map[string]any{"spec": map[string]any{"podSelector": map[string]any{}}}},
	{GVR: GVR("networking.k8s.io", "ingressclasses"), Kind: "IngressClass", Cluster: true, Body: map[string]any{"spec": map[string]any{"controller": "example.com/ingress"}}},
	{GVR: GVR("networking.k8s.io", "servicecidrs"), Kind: "ServiceCIDR", Cluster: true, Body: map[string]any{"spec": map[string]any{"cidrs": []any{"10.96.0.0/28"}}}},
	{GVR: GVR("node.k8s.io", "runtimeclasses"), Kind: "RuntimeClass", Cluster: true, Body: map[string]any{"handler": "runc"}},
	{GVR: GVR("policy", "poddisruptionbudgets"), Kind: "PodDisruptionBudget", Body: map[string]any{"spec": map[string]any{
		"minAvailable": int64(1), "selector": map[string]any{"matchLabels": labelsX}}}},
	{GVR: GVR("rbac.authorization.k8s.io", "roles"), Kind: "Role", Body: map[string]any{"rules": policyRules}},
	{GVR: GVR("rbac.authorization.k8s.io", "clusterroles"), Kind: "ClusterRole", Cluster: true, Body: map[string]any{"rules": policyRules}},
	{GVR: GVR("rbac.authorization.k8s.io", "rolebindings"), Kind: "RoleBinding", Body: bindingToRole("Role")},
	{GVR: GVR("rbac.authorization.k8s.io", "clusterrolebindings"), Kind: "ClusterRoleBinding", Cluster: true, Body: bindingToRole("ClusterRole")},
	{GVR: GVR("scheduling.k8s.io", "priorityclasses"), Kind: "PriorityClass", Cluster: true, Body: map[string]any{"value": int64(1000)}},
	{GVR: GVR("storage.k8s.io", "storageclasses"), Kind: "StorageClass", Cluster: true, Body: map[string]any{"provisioner": "example.com/csi"}},
	{GVR: GVR("storage.k8s.io", "csidrivers"), Kind: "CSIDriver", Cluster: true},
	{GVR: GVR("storage.k8s.io", "csinodes"), Kind: "CSINode", Cluster: true, Body: map[string]any{"spec": map[string]any{"drivers": []any{}}}},
	{GVR: GVR("storage.k8s.io", "csistoragecapacities"), Kind: "CSIStorageCapacity", Body: map[string]any{"storageClassName": "standard"}},
	{GVR: GVR("storage.k8s.io", "volumeattachments"), Kind: "VolumeAttachment", Cluster: true, Body: map[string]any{"spec": map[string]any{
		"attacher": "csi.example.com", "nodeName": "node-1", "source": map[string]any{"persistentVolumeName": "pv-1"}}}},
	{GVR: GVR("storage.k8s.io", "volumeattributesclasses"), Kind: "VolumeAttributesClass", Cluster: true, Body: map[string]any{"driverName": "csi.example.com", "parameters": map[string]any{"iops": "3000"}}},
	{GVR: GVR("resource.k8s.io", "deviceclasses"), Kind: "DeviceClass", Cluster: true},
	{GVR: GVR("resource.k8s.io", "devicetaintrules"), Kind: "DeviceTaintRule", Cluster: true, Body: map[string]any{"spec": map[string]any{
		"taint": map[string]any{"key": "example.com/broken", "effect": "NoSchedule"}}}},
	{GVR: GVR("resource.k8s.io", "resourceclaims"), Kind: "ResourceClaim", Body: map[string]any{"spec": claimSpec}},
	{GVR: GVR("resource.k8s.io", "resourceclaimtemplates"), Kind: "ResourceClaimTemplate", Body: map[string]any{"spec": map[string]any{"spec": claimSpec}}},
	{GVR: GVR("resource.k8s.io", "resourceslices"), Kind: "ResourceSlice", Cluster: true, Body: map[string]any{"spec": map[string]any{
		"driver": "gpu.example.com", "pool": map[string]any{"name": "pool", "resourceSliceCount": int64(1)}, "allNodes": true}}},
	{GVR: GVR("storagemigration.k8s.io", "storageversionmigrations"), Kind: "StorageVersionMigration", Cluster: true, Body: map[string]any{"spec": map[string]any{
		"resource": map[string]any{"group": "apps", "resource": "deployments"}}}},
	{GVR: GVR("certificates.k8s.io", "podcertificaterequests"), Kind: "PodCertificateRequest", Body: map[string]any{"spec": map[string]any{
		"signerName": "example.com/signer", "podName": "pod", "podUID": "pod-uid", "serviceAccountName": "sa", "serviceAccountUID": "sa-uid",
		"nodeName": "node", "nodeUID": "node-uid", "stubPKCS10Request": stubPKCS10Request}}},
	{GVR: GVR("flowcontrol.apiserver.k8s.io", "flowschemas"), Kind: "FlowSchema", Cluster: true, Body: map[string]any{"spec": map[string]any{
		"priorityLevelConfiguration": map[string]any{"name": "global-default"}}}},
	{GVR: GVR("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"), Kind: "PriorityLevelConfiguration", Cluster: true, Body: map[string]any{
		"spec": map[string]any{"type": "Limited", "limited": map[string]any{"limitResponse": map[string]any{"type": "Reject"}}}}},
}

// stubPKCS10Request is an empty certificate request signed by an Ed25519
// key, base64-encoded: the stub a kubelet sends in a PodCertificateRequest.
const stubPKCS10Request = "MH8wMwIBADAAMCowBQYDK2VwAyEA+urGaRcUK1oFJE6ST0h4W0zwb32cd8HTziv7pE7Rd3igADAFBgMrZXADQQD8rUgYqisa6tEAvdXCjczDi42J8H81oLUKjr7uIIsuewac7bx/FOUDElMPEjENm26C2L7AHcedxM2391UmM2kM"

// claimSpec asks for one device of a class.
var claimSpec = map[string]any{"devices": map[string]any{"requests": []any{
	map[string]any{"name": "gpu", "exactly": map[string]any{"deviceClassName": "gpu.example.com"}}}}}

// Client is the dynamic client of r: in namespace default unless r is cluster-scoped.
func (r ServedResource) Client(dyn dynamic.Interface) dynamic.ResourceInterface {
	if r.Cluster {
		return dyn.Resource(r.GVR)
	}
	return dyn.Resource(r.GVR).Namespace("default")
}

// CollectionPath is the URL path of r's collection (in namespace default).
func (r ServedResource) CollectionPath() string {
	prefix := "/api/v1"
	if r.GVR.Group != "" {
		prefix = "/apis/" + r.GVR.GroupVersion().String()
	}
	if r.Cluster {
		return prefix + "/" + r.GVR.Resource
	}
	return prefix + "/namespaces/default/" + r.GVR.Resource
}

// NewObject is an object of apiVersion and kind named name, with body's fields.
func NewObject(apiVersion, kind, name string, body map[string]any) *unstructured.Unstructured {
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}
	for k, v := range body {
		obj[k] = v
	}
	return &unstructured.Unstructured{Object: obj}
}

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

package integration

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/miniapiserver/miniapiserver/pkg/server"
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

// servedResource is a served resource with a minimal valid body.
type servedResource struct {
	gvr     schema.GroupVersionResource
	kind    string
	cluster bool // cluster-scoped
	body    map[string]any
}

func gvr(group, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}
}

// servedResources are every served resource (but namespaces) with a minimal valid body.
var servedResources = []servedResource{
	{gvr: gvr("", "configmaps"), kind: "ConfigMap", body: map[string]any{"data": map[string]any{"k": "v"}}},
	{gvr: gvr("", "secrets"), kind: "Secret", body: map[string]any{"stringData": map[string]any{"k": "v"}}},
	{gvr: gvr("", "pods"), kind: "Pod", body: map[string]any{"spec": podSpec}},
	{gvr: gvr("", "podtemplates"), kind: "PodTemplate", body: map[string]any{"template": map[string]any{"spec": podSpec}}},
	{gvr: gvr("", "serviceaccounts"), kind: "ServiceAccount"},
	{gvr: gvr("", "events"), kind: "Event", body: map[string]any{"reason": "Test", "type": "Normal"}},
	{gvr: gvr("", "services"), kind: "Service", body: map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": 80}}}}},
	{gvr: gvr("", "endpoints"), kind: "Endpoints", body: map[string]any{"subsets": []any{map[string]any{
		"addresses": []any{map[string]any{"ip": "10.1.2.3"}}, "ports": []any{map[string]any{"port": 80}}}}}},
	{gvr: gvr("", "persistentvolumeclaims"), kind: "PersistentVolumeClaim", body: map[string]any{"spec": map[string]any{
		"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}}},
	{gvr: gvr("", "persistentvolumes"), kind: "PersistentVolume", cluster: true, body: map[string]any{"spec": map[string]any{
		"capacity": map[string]any{"storage": "1Gi"}, "accessModes": []any{"ReadWriteOnce"}, "hostPath": map[string]any{"path": "/tmp/pv"}}}},
	{gvr: gvr("", "nodes"), kind: "Node", cluster: true},
	{gvr: gvr("", "resourcequotas"), kind: "ResourceQuota", body: map[string]any{"spec": map[string]any{"hard": map[string]any{"pods": "10"}}}},
	{gvr: gvr("", "limitranges"), kind: "LimitRange", body: map[string]any{"spec": map[string]any{
		"limits": []any{map[string]any{"type": "Container", "max": map[string]any{"cpu": "1"}}}}}},
	{gvr: gvr("", "replicationcontrollers"), kind: "ReplicationController", body: map[string]any{"spec": map[string]any{
		"template": map[string]any{"metadata": map[string]any{"labels": labelsX}, "spec": podSpec}}}},
	{gvr: gvr("apps", "deployments"), kind: "Deployment", body: map[string]any{"spec": workloadSpec}},
	{gvr: gvr("apps", "statefulsets"), kind: "StatefulSet", body: map[string]any{"spec": workloadSpec}},
	{gvr: gvr("apps", "daemonsets"), kind: "DaemonSet", body: map[string]any{"spec": workloadSpec}},
	{gvr: gvr("apps", "replicasets"), kind: "ReplicaSet", body: map[string]any{"spec": workloadSpec}},
	{gvr: gvr("apps", "controllerrevisions"), kind: "ControllerRevision", body: map[string]any{"revision": int64(1), "data": map[string]any{"spec": map[string]any{}}}},
	{gvr: schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}, kind: "HorizontalPodAutoscaler", body: map[string]any{"spec": map[string]any{
		"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}, "maxReplicas": int64(3)}}},
	{gvr: gvr("batch", "jobs"), kind: "Job", body: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": jobPodSpec}}}},
	{gvr: gvr("batch", "cronjobs"), kind: "CronJob", body: map[string]any{"spec": map[string]any{"schedule": "*/5 * * * *",
		"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": jobPodSpec}}}}}},
	{gvr: gvr("coordination.k8s.io", "leases"), kind: "Lease", body: map[string]any{"spec": map[string]any{"holderIdentity": "me"}}},
	{gvr: gvr("discovery.k8s.io", "endpointslices"), kind: "EndpointSlice", body: map[string]any{"addressType": "IPv4",
		"endpoints": []any{map[string]any{"addresses": []any{"10.1.2.3"}}}, "ports": []any{map[string]any{"port": 80}}}},
	{gvr: gvr("events.k8s.io", "events"), kind: "Event", body: map[string]any{"eventTime": "2026-01-01T00:00:00.000000Z",
		"reportingController": "example.com/test", "reportingInstance": "test-1", "action": "Test", "reason": "Test", "type": "Normal",
		"regarding": map[string]any{"kind": "Pod", "name": "p", "namespace": "default"}}},
	{gvr: gvr("networking.k8s.io", "ingresses"), kind: "Ingress", body: map[string]any{"spec": map[string]any{
		"defaultBackend": map[string]any{"service": map[string]any{"name": "svc", "port": map[string]any{"number": 80}}}}}},
	{gvr: gvr("networking.k8s.io", "networkpolicies"), kind: "NetworkPolicy", body: map[string]any{"spec": map[string]any{"podSelector": map[string]any{}}}},
	{gvr: gvr("networking.k8s.io", "ingressclasses"), kind: "IngressClass", cluster: true, body: map[string]any{"spec": map[string]any{"controller": "example.com/ingress"}}},
	{gvr: gvr("networking.k8s.io", "servicecidrs"), kind: "ServiceCIDR", cluster: true, body: map[string]any{"spec": map[string]any{"cidrs": []any{"10.96.0.0/28"}}}},
	{gvr: gvr("node.k8s.io", "runtimeclasses"), kind: "RuntimeClass", cluster: true, body: map[string]any{"handler": "runc"}},
	{gvr: gvr("policy", "poddisruptionbudgets"), kind: "PodDisruptionBudget", body: map[string]any{"spec": map[string]any{
		"minAvailable": int64(1), "selector": map[string]any{"matchLabels": labelsX}}}},
	{gvr: gvr("rbac.authorization.k8s.io", "roles"), kind: "Role", body: map[string]any{"rules": policyRules}},
	{gvr: gvr("rbac.authorization.k8s.io", "clusterroles"), kind: "ClusterRole", cluster: true, body: map[string]any{"rules": policyRules}},
	{gvr: gvr("rbac.authorization.k8s.io", "rolebindings"), kind: "RoleBinding", body: bindingToRole("Role")},
	{gvr: gvr("rbac.authorization.k8s.io", "clusterrolebindings"), kind: "ClusterRoleBinding", cluster: true, body: bindingToRole("ClusterRole")},
	{gvr: gvr("scheduling.k8s.io", "priorityclasses"), kind: "PriorityClass", cluster: true, body: map[string]any{"value": int64(1000)}},
	{gvr: gvr("storage.k8s.io", "storageclasses"), kind: "StorageClass", cluster: true, body: map[string]any{"provisioner": "example.com/csi"}},
	{gvr: gvr("storage.k8s.io", "csidrivers"), kind: "CSIDriver", cluster: true},
}

// client is the dynamic client of r: in namespace default unless r is cluster-scoped.
func (r servedResource) client(dyn dynamic.Interface) dynamic.ResourceInterface {
	if r.cluster {
		return dyn.Resource(r.gvr)
	}
	return dyn.Resource(r.gvr).Namespace("default")
}

// collectionPath is the URL path of r's collection (in namespace default).
func (r servedResource) collectionPath() string {
	prefix := "/api/v1"
	if r.gvr.Group != "" {
		prefix = "/apis/" + r.gvr.GroupVersion().String()
	}
	if r.cluster {
		return prefix + "/" + r.gvr.Resource
	}
	return prefix + "/namespaces/default/" + r.gvr.Resource
}

func newObject(apiVersion, kind, name string, body map[string]any) *unstructured.Unstructured {
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}
	for k, v := range body {
		obj[k] = v
	}
	return &unstructured.Unstructured{Object: obj}
}

func TestEveryResourceSupportsCRUD(t *testing.T) {
	forEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		s, _ := start(t, path)
		dyn := dynamic.NewForConfigOrDie(s.Config)
		for _, r := range servedResources {
			t.Run(r.gvr.GroupResource().String(), func(t *testing.T) {
				ctx := t.Context()
				c := r.client(dyn)
				apiVersion := r.gvr.GroupVersion().String()
				for _, name := range []string{"a", "b", "c"} {
					if _, err := c.Create(ctx, newObject(apiVersion, r.kind, name, r.body), metav1.CreateOptions{}); err != nil {
						t.Fatalf("create %s: %v", name, err)
					}
				}
				if _, err := c.Create(ctx, newObject(apiVersion, r.kind, "a", r.body), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
					t.Errorf("second create: got %v, want AlreadyExists", err)
				}
				if _, err := c.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"merge"}}}`), metav1.PatchOptions{}); err != nil {
					t.Fatalf("merge patch: %v", err)
				}
				if _, err := c.Patch(ctx, "b", types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels","value":{"patched":"json"}}]`), metav1.PatchOptions{}); err != nil {
					t.Fatalf("json patch: %v", err)
				}
				obj, err := c.Get(ctx, "a", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				obj.SetAnnotations(map[string]string{"updated": "yes"})
				if _, err := c.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
					t.Fatalf("update: %v", err)
				}
				obj.SetAnnotations(map[string]string{"updated": "stale"})
				if _, err := c.Update(ctx, obj, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
					t.Errorf("update with a stale resourceVersion: got %v, want Conflict", err)
				}
				apply := newObject(apiVersion, r.kind, "d", r.body)
				if _, err := c.Apply(ctx, "d", apply, metav1.ApplyOptions{FieldManager: "test"}); err != nil {
					t.Fatalf("server-side apply: %v", err)
				}
				list, err := c.List(ctx, metav1.ListOptions{LabelSelector: "patched"})
				if err != nil || len(list.Items) != 2 {
					t.Fatalf("list by label: got %v, %v; want a and b", list, err)
				}
				if err := c.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
					t.Fatalf("delete: %v", err)
				}
				if _, err := c.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("get after delete: got %v, want NotFound", err)
				}
				if err := c.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
					t.Fatalf("deletecollection: %v", err)
				}
				if list, err := c.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
					t.Errorf("list after deletecollection: got %d items, %v; want none", len(list.Items), err)
				}
			})
		}
	})
}

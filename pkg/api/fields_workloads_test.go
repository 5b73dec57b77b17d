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

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

var (
	serviceFieldsKind    = corev1.SchemeGroupVersion.WithKind("Service")
	nodeFieldsKind       = corev1.SchemeGroupVersion.WithKind("Node")
	replicaSetFieldsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	rcFieldsKind         = corev1.SchemeGroupVersion.WithKind("ReplicationController")
	jobFieldsKind        = batchv1.SchemeGroupVersion.WithKind("Job")
)

func TestWorkloadFieldSets(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "web", Namespace: "prod", Labels: map[string]string{"app": "web"}}
	tests := []struct {
		name string
		got  fields.Set
		want fields.Set
	}{
		{
			name: "empty service",
			got:  ServiceFields(&corev1.Service{ObjectMeta: meta}),
			want: fields.Set{"metadata.name": "web", "metadata.namespace": "prod", "spec.clusterIP": "", "spec.type": ""},
		},
		{
			name: "service",
			got: ServiceFields(&corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, ClusterIP: "10.0.0.10", ClusterIPs: []string{"10.0.0.10"}, ExternalName: "ignored",
			}}),
			want: fields.Set{"metadata.name": "web", "metadata.namespace": "prod", "spec.clusterIP": "10.0.0.10", "spec.type": "NodePort"},
		},
		{
			name: "headless service",
			got:  ServiceFields(&corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None"}}),
			want: fields.Set{"metadata.name": "web", "metadata.namespace": "prod", "spec.clusterIP": "None", "spec.type": "ClusterIP"},
		},
		{
			name: "schedulable node: no metadata.namespace",
			got:  NodeFields(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "ignored"}}),
			want: fields.Set{"metadata.name": "node-1", "spec.unschedulable": "false"},
		},
		{
			name: "cordoned node",
			got:  NodeFields(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Spec: corev1.NodeSpec{Unschedulable: true}}),
			want: fields.Set{"metadata.name": "node-1", "spec.unschedulable": "true"},
		},
		{
			name: "replica set",
			got: ReplicaSetFields(&appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](5)},
				Status: appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 2}}),
			want: fields.Set{"metadata.name": "web", "metadata.namespace": "prod", "status.replicas": "3"},
		},
		{
			name: "empty replica set",
			got:  ReplicaSetFields(&appsv1.ReplicaSet{ObjectMeta: meta}),
			want: fields.Set{"metadata.name": "web", "metadata.namespace": "prod", "status.replicas": "0"},
		},
		{
			name: "replication controller",
			got: ReplicationControllerFields(&corev1.ReplicationController{ObjectMeta: meta, Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](5)},
				Status: corev1.ReplicationControllerStatus{Replicas: 4, ReadyReplicas: 2}}),
			want: fields.Set{"metadata.name": "web", "metadata.namespace": "prod", "status.replicas": "4"},
		},
		{
			name: "job",
			got:  JobFields(&batchv1.Job{ObjectMeta: meta, Status: batchv1.JobStatus{Succeeded: 2, Failed: 1, Active: 4}}),
			want: fields.Set{"metadata.name": "web", "metadata.namespace": "prod", "status.successful": "2"},
		},
		{
			name: "empty job",
			got:  JobFields(&batchv1.Job{ObjectMeta: meta}),
			want: fields.Set{"metadata.name": "web", "metadata.namespace": "prod", "status.successful": "0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("field set (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertWorkloadFieldLabels(t *testing.T) {
	tests := []struct {
		kind    schema.GroupVersionKind
		label   string
		wantErr bool
	}{
		{kind: serviceFieldsKind, label: "metadata.name"},
		{kind: serviceFieldsKind, label: "metadata.namespace"},
		{kind: serviceFieldsKind, label: "spec.clusterIP"},
		{kind: serviceFieldsKind, label: "spec.type"},
		{kind: serviceFieldsKind, label: "spec.clusterIPs", wantErr: true},
		{kind: serviceFieldsKind, label: "spec.externalName", wantErr: true},
		{kind: serviceFieldsKind, label: "spec.selector", wantErr: true},
		{kind: serviceFieldsKind, label: "status.loadBalancer", wantErr: true},

		{kind: nodeFieldsKind, label: "metadata.name"},
		{kind: nodeFieldsKind, label: "spec.unschedulable"},
		{kind: nodeFieldsKind, label: "metadata.namespace", wantErr: true},
		{kind: nodeFieldsKind, label: "spec.podCIDR", wantErr: true},
		{kind: nodeFieldsKind, label: "status.phase", wantErr: true},

		{kind: replicaSetFieldsKind, label: "metadata.name"},
		{kind: replicaSetFieldsKind, label: "metadata.namespace"},
		{kind: replicaSetFieldsKind, label: "status.replicas"},
		{kind: replicaSetFieldsKind, label: "spec.replicas", wantErr: true},
		{kind: replicaSetFieldsKind, label: "status.readyReplicas", wantErr: true},

		{kind: rcFieldsKind, label: "metadata.name"},
		{kind: rcFieldsKind, label: "metadata.namespace"},
		{kind: rcFieldsKind, label: "status.replicas"},
		{kind: rcFieldsKind, label: "spec.replicas", wantErr: true},
		{kind: rcFieldsKind, label: "status.readyReplicas", wantErr: true},

		{kind: jobFieldsKind, label: "metadata.name"},
		{kind: jobFieldsKind, label: "metadata.namespace"},
		{kind: jobFieldsKind, label: "status.successful"},
		{kind: jobFieldsKind, label: "status.succeeded", wantErr: true},
		{kind: jobFieldsKind, label: "status.failed", wantErr: true},
		{kind: jobFieldsKind, label: "spec.completions", wantErr: true},

		// The other workloads take the scheme's default: metadata only.
		{kind: appsv1.SchemeGroupVersion.WithKind("Deployment"), label: "metadata.name"},
		{kind: appsv1.SchemeGroupVersion.WithKind("Deployment"), label: "metadata.namespace"},
		{kind: appsv1.SchemeGroupVersion.WithKind("Deployment"), label: "status.replicas", wantErr: true},
		{kind: appsv1.SchemeGroupVersion.WithKind("StatefulSet"), label: "spec.serviceName", wantErr: true},
		{kind: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), label: "metadata.name"},
		{kind: batchv1.SchemeGroupVersion.WithKind("CronJob"), label: "metadata.namespace"},
		{kind: batchv1.SchemeGroupVersion.WithKind("CronJob"), label: "status.successful", wantErr: true},
		{kind: corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), label: "status.phase", wantErr: true},
		{kind: policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), label: "metadata.namespace"},
		{kind: policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), label: "spec.minAvailable", wantErr: true},
		{kind: corev1.SchemeGroupVersion.WithKind("ResourceQuota"), label: "metadata.name"},
		{kind: corev1.SchemeGroupVersion.WithKind("ResourceQuota"), label: "spec.hard", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.kind.Kind+" "+tt.label, func(t *testing.T) {
			const value = "some-value"
			label, gotValue, err := Scheme.ConvertFieldLabel(tt.kind, tt.label, value)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ConvertFieldLabel(%s, %q): got (%q, %q, nil), want an error", tt.kind.Kind, tt.label, label, gotValue)
				}
				return
			}
			if err != nil {
				t.Fatalf("ConvertFieldLabel(%s, %q): got error %v, want none", tt.kind.Kind, tt.label, err)
			}
			if label != tt.label || gotValue != value {
				t.Errorf("ConvertFieldLabel(%s, %q): got (%q, %q), want (%q, %q)", tt.kind.Kind, tt.label, label, gotValue, tt.label, value)
			}
		})
	}
}

// TestWorkloadFieldSetsAgreeWithLabelConversions: the labels each kind's
// conversion accepts are exactly the keys of its field set.
func TestWorkloadFieldSetsAgreeWithLabelConversions(t *testing.T) {
	tests := []struct {
		kind     schema.GroupVersionKind
		set      fields.Set
		wantKeys []string
	}{
		{kind: serviceFieldsKind, set: ServiceFields(&corev1.Service{}), wantKeys: []string{"metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"}},
		{kind: nodeFieldsKind, set: NodeFields(&corev1.Node{}), wantKeys: []string{"metadata.name", "spec.unschedulable"}},
		{kind: replicaSetFieldsKind, set: ReplicaSetFields(&appsv1.ReplicaSet{}), wantKeys: []string{"metadata.name", "metadata.namespace", "status.replicas"}},
		{kind: rcFieldsKind, set: ReplicationControllerFields(&corev1.ReplicationController{}), wantKeys: []string{"metadata.name", "metadata.namespace", "status.replicas"}},
		{kind: jobFieldsKind, set: JobFields(&batchv1.Job{}), wantKeys: []string{"metadata.name", "metadata.namespace", "status.successful"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind.Kind, func(t *testing.T) {
			var keys []string
			for k := range tt.set {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if diff := cmp.Diff(tt.wantKeys, keys); diff != "" {
				t.Errorf("field set keys (-want +got):\n%s", diff)
			}
			for _, k := range keys {
				if _, _, err := Scheme.ConvertFieldLabel(tt.kind, k, "v"); err != nil {
					t.Errorf("ConvertFieldLabel(%s, %q): got error %v, want none (the field set has it)", tt.kind.Kind, k, err)
				}
			}
			// The conversion is registered for this group's version only.
			other := schema.GroupVersionKind{Group: tt.kind.Group, Version: "v1beta1", Kind: tt.kind.Kind}
			for _, k := range keys {
				if k == "metadata.name" || k == "metadata.namespace" {
					continue
				}
				if _, _, err := Scheme.ConvertFieldLabel(other, k, "v"); err == nil {
					t.Errorf("ConvertFieldLabel(%v, %q): got no error, want one (no conversion for that version)", other, k)
				}
			}
		})
	}
}

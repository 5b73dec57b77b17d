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

package apps

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestStatusChecks: upstream's status checks of the four workloads, each
// rule once.
func TestStatusChecks(t *testing.T) {
	tests := []struct {
		name     string
		validate func(obj, old runtime.Object) field.ErrorList
		obj, old runtime.Object
		want     []string
	}{
		{
			name: "deployment: consistent", validate: validateDeploymentStatus,
			obj:  &appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, CollisionCount: ptr.To[int32](2)}},
			old:  &appsv1.Deployment{Status: appsv1.DeploymentStatus{CollisionCount: ptr.To[int32](1)}},
			want: []string{},
		},
		{
			name: "deployment: above replicas, available above ready, negative, collisions down", validate: validateDeploymentStatus,
			obj:  &appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 3, AvailableReplicas: 1, UnavailableReplicas: -1, CollisionCount: ptr.To[int32](0)}},
			old:  &appsv1.Deployment{Status: appsv1.DeploymentStatus{CollisionCount: ptr.To[int32](1)}},
			want: []string{"status.collisionCount: Invalid value", "status.readyReplicas: Invalid value", "status.unavailableReplicas: Invalid value"},
		},
		{
			name: "deployment: available above ready", validate: validateDeploymentStatus,
			obj:  &appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 1, AvailableReplicas: 2}},
			old:  &appsv1.Deployment{},
			want: []string{"status.availableReplicas: Invalid value"},
		},
		{
			name: "replicaset", validate: validateReplicaSetStatus,
			obj:  &appsv1.ReplicaSet{Status: appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 2, ObservedGeneration: -1}},
			old:  &appsv1.ReplicaSet{},
			want: []string{"status.fullyLabeledReplicas: Invalid value", "status.observedGeneration: Invalid value"},
		},
		{
			name: "statefulset", validate: validateStatefulSetStatus,
			obj:  &appsv1.StatefulSet{Status: appsv1.StatefulSetStatus{Replicas: 1, CurrentReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}},
			old:  &appsv1.StatefulSet{},
			want: []string{"status.currentReplicas: Invalid value"},
		},
		{
			name: "daemonset", validate: validateDaemonSetStatus,
			obj:  &appsv1.DaemonSet{Status: appsv1.DaemonSetStatus{NumberReady: -1}},
			old:  &appsv1.DaemonSet{Status: appsv1.DaemonSetStatus{CollisionCount: ptr.To[int32](1)}},
			want: []string{"status.collisionCount: Invalid value", "status.numberReady: Invalid value"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, registrytest.ErrorPaths(tt.validate(tt.obj, tt.old))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStatusUpdateIsChecked: the deployments/status endpoint refuses a
// status upstream's refuses, with its message.
func TestStatusUpdateIsChecked(t *testing.T) {
	ctx, storages, d := registrytest.Seeded(t, NewStorage, "deployments", validDeployment())
	d.Status = appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 3}
	_, _, err := storages["deployments/status"].(*registry.StatusREST).Update(ctx, d.Name, rest.DefaultUpdatedObjectInfo(d), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	want := `Deployment.apps "` + d.Name + `" is invalid: status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

const fractionalMemory = `spec.template.spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, must be an integer`

func withFractionalMemory(t *corev1.PodTemplateSpec) {
	t.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1500m")}
}

// TestWarnings: the warnings wanted are kube-apiserver 1.37's for the
// same writes: on create, of the template (and a Deployment's or
// ReplicaSet's name); on an update, of the template only if the
// generation (a DaemonSet's template generation) changed.
func TestWarnings(t *testing.T) {
	nameWarning := "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]"
	deployment := registrytest.Modified(validDeployment(), func(d *appsv1.Deployment) { withFractionalMemory(&d.Spec.Template) })
	daemonSet := registrytest.Modified(validDaemonSet(), func(ds *appsv1.DaemonSet) {
		withFractionalMemory(&ds.Spec.Template)
		setTemplateGeneration(ds, 1)
	})
	statefulSet := registrytest.Modified(validStatefulSet(), func(ss *appsv1.StatefulSet) {
		ss.Spec.RevisionHistoryLimit = ptr.To[int32](-1)
		ss.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{Spec: corev1.PersistentVolumeClaimSpec{
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100m")}}}}}
	})
	revisionHistoryLimit := "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended"
	tests := map[string][]registrytest.WarningCase{
		"deployments": {
			{Name: "create", Obj: registrytest.Modified(deployment, func(d *appsv1.Deployment) { d.Name = "web.v1" }), Want: []string{nameWarning, fractionalMemory}},
			{Name: "scaled", Obj: registrytest.Modified(deployment, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) }), Old: deployment, Want: []string{fractionalMemory}},
			{Name: "labelled", Obj: registrytest.Modified(deployment, func(d *appsv1.Deployment) { d.Labels = map[string]string{"a": "b"} }), Old: deployment},
		},
		"replicasets": {
			{Name: "create", Obj: registrytest.Modified(validReplicaSet(), func(rs *appsv1.ReplicaSet) { rs.Name = "web.v1" }), Want: []string{nameWarning}},
		},
		"daemonsets": {
			{Name: "create", Obj: daemonSet, Want: []string{fractionalMemory}},
			{Name: "spec but not template", Obj: registrytest.Modified(daemonSet, func(ds *appsv1.DaemonSet) { ds.Spec.MinReadySeconds = 3 }), Old: daemonSet},
			{Name: "template", Obj: registrytest.Modified(daemonSet, func(ds *appsv1.DaemonSet) { ds.Spec.Template.Labels["z"] = "1" }), Old: daemonSet, Want: []string{fractionalMemory}},
		},
		"statefulsets": {
			{Name: "create", Obj: statefulSet, Want: []string{
				`spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value "100m" is invalid, must be an integer`, revisionHistoryLimit}},
			// Upstream's path on update, as it writes it.
			{Name: "labelled", Obj: registrytest.Modified(statefulSet, func(ss *appsv1.StatefulSet) { ss.Labels = map[string]string{"a": "b"} }), Old: statefulSet, Want: []string{
				`spec.volumeClaimTemplates[0].Spec.resources.requests[storage]: fractional byte value "100m" is invalid, must be an integer`, revisionHistoryLimit}},
		},
	}
	for resource, cases := range tests {
		t.Run(resource, func(t *testing.T) { registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, resource), cases) })
	}
}

// TestStatusWarnsOfNothing: a status update, as upstream's, gives no
// warnings of the template; an update through the main store, its
// template's (a negative control).
func TestStatusWarnsOfNothing(t *testing.T) {
	s := newStores(t, "deployments")
	stored := s.seed(t, registrytest.Modified(validDeployment(), func(d *appsv1.Deployment) { withFractionalMemory(&d.Spec.Template) })).(*appsv1.Deployment)
	for _, tt := range []struct {
		name    string
		updater rest.Updater
		obj     *appsv1.Deployment
		want    []string
	}{
		{"status", s.status, registrytest.Modified(stored, func(d *appsv1.Deployment) { d.Status.Replicas, d.ResourceVersion = 1, "" }), nil},
		{"main", s.store, registrytest.Modified(stored, func(d *appsv1.Deployment) { d.Spec.Replicas, d.ResourceVersion = ptr.To[int32](1), "" }), []string{fractionalMemory}},
	} {
		var w registrytest.Warnings
		if _, _, err := tt.updater.Update(w.Context("default"), stored.Name, rest.DefaultUpdatedObjectInfo(tt.obj),
			rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s Update: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, w.Got); diff != "" {
			t.Errorf("%s update's warnings (-want +got):\n%s", tt.name, diff)
		}
	}
}

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

package resources

import (
	"slices"
	"testing"
	"time"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestStorageVersionMigrations: storagemigration.k8s.io/v1 is served (and
// v1beta1 not, as upstream's default); a migration is created without a
// status, its status written by a migrator through /status, its spec
// fixed, a success final, as kube-apiserver 1.37 answers (its messages),
// and kubectl prints upstream's columns.
func TestStorageVersionMigrations(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	resources, err := client.Discovery().ServerResourcesForGroupVersion("storagemigration.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, r := range resources.APIResources {
		if !r.Namespaced {
			served = append(served, r.Name)
		}
	}
	if want := []string{"storageversionmigrations", "storageversionmigrations/status"}; !slices.Equal(served, want) {
		t.Errorf("storagemigration.k8s.io/v1 resources: got %v, want %v, cluster-scoped", served, want)
	}
	if _, err := client.Discovery().ServerResourcesForGroupVersion("storagemigration.k8s.io/v1beta1"); !apierrors.IsNotFound(err) {
		t.Errorf("storagemigration.k8s.io/v1beta1: got %v, want NotFound (off by default)", err)
	}

	migrations := client.StoragemigrationV1().StorageVersionMigrations()
	w, err := migrations.Watch(ctx, metav1.ListOptions{ResourceVersion: framework.ResourceVersionNow(t, client)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	svm, err := migrations.Create(ctx, &storagemigrationv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "secrets"},
		Spec:       storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "secrets"}},
		Status:     storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "1"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svm.Status.ResourceVersion != "" {
		t.Errorf("status.resourceVersion after create: got %q, want none (a create clears status)", svm.Status.ResourceVersion)
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	svm.Status = storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: svm.ResourceVersion, Conditions: []metav1.Condition{
		{Type: "Running", Status: metav1.ConditionTrue, Reason: "Started", LastTransitionTime: now}}}
	if svm, err = migrations.UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := framework.Kubectl(t, s, "", "get", "storageversionmigrations"); out != "NAME      RESOURCE   STATUS\nsecrets   secrets    Running\n" {
		t.Errorf("kubectl get storageversionmigrations: got\n%s", out)
	}
	svm.Status.Conditions = []metav1.Condition{
		{Type: "Running", Status: metav1.ConditionFalse, Reason: "Done", LastTransitionTime: now},
		{Type: "Succeeded", Status: metav1.ConditionTrue, Reason: "Done", LastTransitionTime: now}}
	if svm, err = migrations.UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.ExpectEvents(t, w, "ADDED secrets", "MODIFIED secrets", "MODIFIED secrets")

	got, err := migrations.Get(ctx, "secrets", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) != 2 || got.Status.Conditions[1].Type != "Succeeded" || got.Status.ResourceVersion == "" {
		t.Errorf("status: got %+v, want Running False, Succeeded True and the resourceVersion written", got.Status)
	}
	list, err := migrations.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=secrets"})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("list by name: got %v, %v; want secrets", list, err)
	}

	failed := got.DeepCopy()
	failed.Status.Conditions[1].Status = metav1.ConditionFalse
	_, err = migrations.UpdateStatus(ctx, failed, metav1.UpdateOptions{})
	if want := `StorageVersionMigration.storagemigration.k8s.io "secrets" is invalid: status.conditions: Invalid value: [` +
		`{"type":"Running","status":"False","lastTransitionTime":"` + now.UTC().Format(time.RFC3339) + `","reason":"Done","message":""},` +
		`{"type":"Succeeded","status":"False","lastTransitionTime":"` + now.UTC().Format(time.RFC3339) + `","reason":"Done","message":""}]: ` +
		`Success condition cannot be set to false once it is true`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("success undone: got %v, want %s", err, want)
	}
	moved := got.DeepCopy()
	moved.Spec.Resource = metav1.GroupResource{Group: "apps", Resource: "deployments"}
	_, err = migrations.Update(ctx, moved, metav1.UpdateOptions{})
	if want := `StorageVersionMigration.storagemigration.k8s.io "secrets" is invalid: spec: Invalid value: {"Resource":{"group":"apps","resource":"deployments"}}: field is immutable`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("another resource: got %v, want %s", err, want)
	}
	if err := migrations.Delete(ctx, "secrets", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := framework.NextChange(t, w); ev.Type != watch.Deleted {
		t.Errorf("after delete: got %s, want DELETED", framework.Describe(ev))
	}
}

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

package storageversionmigration

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

const (
	dns1035 = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, " +
		"and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
	dns1123 = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end " +
		"with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)

func newSVM(rv string, conditions ...metav1.Condition) *storagemigrationv1.StorageVersionMigration {
	return &storagemigrationv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "test-svm"},
		Spec:       storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "example.com", Resource: "myresources"}},
		Status:     storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: rv, Conditions: conditions},
	}
}

var transition = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

func condition(t storagemigrationv1.MigrationConditionType, status metav1.ConditionStatus) metav1.Condition {
	reason := string(t)
	if status != metav1.ConditionTrue {
		reason = "Not" + reason
	}
	return metav1.Condition{Type: string(t), Status: status, Reason: reason, LastTransitionTime: transition}
}

var (
	running        = condition(storagemigrationv1.MigrationRunning, metav1.ConditionTrue)
	runningFalse   = condition(storagemigrationv1.MigrationRunning, metav1.ConditionFalse)
	succeeded      = condition(storagemigrationv1.MigrationSucceeded, metav1.ConditionTrue)
	succeededFalse = condition(storagemigrationv1.MigrationSucceeded, metav1.ConditionFalse)
	failed         = condition(storagemigrationv1.MigrationFailed, metav1.ConditionTrue)
	failedFalse    = condition(storagemigrationv1.MigrationFailed, metav1.ConditionFalse)
)

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "storageversionmigrations", "storageversionmigrations", "storageversionmigrations/status")
	status, ok := storages["storageversionmigrations/status"].(*registry.StatusREST)
	if !ok {
		t.Fatalf("status storage: got %T, want *registry.StatusREST", storages["storageversionmigrations/status"])
	}
	store := registrytest.REST(t, NewStorage, "storageversionmigrations")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: storagemigrationv1.Resource("storageversionmigrations"), Singular: "storageversionmigration"})
	if store.UpdateStrategy.AllowUnconditionalUpdate(t.Context()) {
		t.Errorf("AllowUnconditionalUpdate: got true, want false (upstream's)")
	}
	// Upstream's reset fields: status on the resource; metadata and spec on /status.
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	if diff := cmp.Diff(registry.Fieldpaths(groupVersion, "status"), store.GetResetFields(), equal); diff != "" {
		t.Errorf("reset fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(registry.Fieldpaths(groupVersion, "metadata", "spec"), status.GetResetFields(), equal); diff != "" {
		t.Errorf("status reset fields (-want +got):\n%s", diff)
	}
}

// TestValidate: upstream's TestValidateStorageVersionMigration cases, with
// its messages.
func TestValidate(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "storageversionmigrations")
	base := func() *storagemigrationv1.StorageVersionMigration { return newSVM("") }
	registrytest.ValidateMutations(t, store.CreateStrategy, registrytest.Messages, base, []registrytest.Mutation[*storagemigrationv1.StorageVersionMigration]{
		{Name: "valid", Mutate: func(*storagemigrationv1.StorageVersionMigration) {}, Want: []string{}},
		{Name: "core group", Mutate: func(s *storagemigrationv1.StorageVersionMigration) {
			s.Spec.Resource = metav1.GroupResource{Resource: "secrets"}
		}, Want: []string{}},
		{Name: "all empty", Mutate: func(s *storagemigrationv1.StorageVersionMigration) { s.Spec.Resource = metav1.GroupResource{} },
			Want: []string{"spec.resource.resource: Required value: resource is required to be set"}},
		{Name: "no resource", Mutate: func(s *storagemigrationv1.StorageVersionMigration) { s.Spec.Resource.Resource = "" },
			Want: []string{"spec.resource.resource: Required value: resource is required to be set"}},
		{Name: "invalid resource", Mutate: func(s *storagemigrationv1.StorageVersionMigration) { s.Spec.Resource.Resource = "." },
			Want: []string{`spec.resource.resource: Invalid value: ".": ` + dns1035}},
		{Name: "invalid group", Mutate: func(s *storagemigrationv1.StorageVersionMigration) { s.Spec.Resource.Group = "-" },
			Want: []string{`spec.resource.group: Invalid value: "-": ` + dns1123}},
		{Name: "invalid name", Mutate: func(s *storagemigrationv1.StorageVersionMigration) { s.Name = "Test" },
			Want: []string{`metadata.name: Invalid value: "Test": ` + dns1123}},
	})
}

// create creates svm through the store and returns what it stored, or the
// error's message.
func create(t *testing.T, svm *storagemigrationv1.StorageVersionMigration) (*storagemigrationv1.StorageVersionMigration, string) {
	t.Helper()
	storages := registrytest.Storages(t, NewStorage, "storageversionmigrations", "storageversionmigrations", "storageversionmigrations/status")
	ctx := genericapirequest.WithNamespace(context.Background(), metav1.NamespaceNone)
	out, err := storages["storageversionmigrations"].(rest.Creater).Create(ctx, svm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		return nil, err.Error()
	}
	return out.(*storagemigrationv1.StorageVersionMigration), ""
}

func TestCreate(t *testing.T) {
	got, msg := create(t, newSVM("5", succeeded))
	if msg != "" {
		t.Fatalf("create: got error %s, want none", msg)
	}
	if got.Status.ResourceVersion != "" || got.Status.Conditions != nil {
		t.Errorf("status after create: got %+v, want none (a create clears it)", got.Status)
	}
	// The messages are kube-apiserver 1.37.2's for the same requests.
	_, msg = create(t, &storagemigrationv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "test-svm"}})
	if want := `StorageVersionMigration.storagemigration.k8s.io "test-svm" is invalid: spec.resource.resource: Required value: resource is required to be set`; msg != want {
		t.Errorf("create without a resource: got\n%s\nwant\n%s", msg, want)
	}
}

// update updates old, seeded, changed by change, through the store or
// its status subresource; it returns what the update returned, or the
// error's message.
func update(t *testing.T, status bool, old *storagemigrationv1.StorageVersionMigration, change func(*storagemigrationv1.StorageVersionMigration)) (*storagemigrationv1.StorageVersionMigration, string) {
	t.Helper()
	got, err := registrytest.UpdateSeeded(t, NewStorage, "storageversionmigrations", status, old, change)
	if err != nil {
		return nil, err.Error()
	}
	return got, ""
}

func TestUpdate(t *testing.T) {
	got, msg := update(t, false, newSVM("5", running), func(s *storagemigrationv1.StorageVersionMigration) {
		s.Labels = map[string]string{"a": "b"}
		s.Status = storagemigrationv1.StorageVersionMigrationStatus{}
	})
	if msg != "" {
		t.Fatalf("update of the labels: got error %s, want none", msg)
	}
	if diff := cmp.Diff(newSVM("5", running).Status, got.Status); diff != "" {
		t.Errorf("status after an update (-want +got):\n%s", diff)
	}
	tests := []struct {
		name   string
		change func(*storagemigrationv1.StorageVersionMigration)
		want   string
	}{
		{name: "another resource", change: func(s *storagemigrationv1.StorageVersionMigration) { s.Spec.Resource.Resource = "others" },
			want: `StorageVersionMigration.storagemigration.k8s.io "test-svm" is invalid: spec: Invalid value: {"Resource":{"group":"example.com","resource":"others"}}: field is immutable`},
		{name: "an invalid group", change: func(s *storagemigrationv1.StorageVersionMigration) { s.Spec.Resource.Group = "-" },
			want: `StorageVersionMigration.storagemigration.k8s.io "test-svm" is invalid: [spec.resource.group: Invalid value: "-": ` + dns1123 +
				`, spec: Invalid value: {"Resource":{"group":"-","resource":"myresources"}}: field is immutable]`},
		{name: "no resourceVersion", change: func(s *storagemigrationv1.StorageVersionMigration) { s.ResourceVersion = "" },
			want: `storageversionmigrations.storagemigration.k8s.io "test-svm" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, msg := update(t, false, newSVM(""), tt.change); msg != tt.want {
				t.Errorf("update: got\n%s\nwant\n%s", msg, tt.want)
			}
		})
	}
}

// TestStatusUpdate: upstream's TestValidateStorageVersionMigrationStatusUpdate
// cases through the status subresource, with kube-apiserver's messages.
func TestStatusUpdate(t *testing.T) {
	const invalid = `StorageVersionMigration.storagemigration.k8s.io "test-svm" is invalid: `
	tests := []struct {
		name     string
		old, obj *storagemigrationv1.StorageVersionMigration
		want     string
	}{
		{name: "initial status set with RV", old: newSVM(""), obj: newSVM("123", running)},
		{name: "running to succeeded", old: newSVM("123", running), obj: newSVM("123", runningFalse, succeeded)},
		{name: "running to failed", old: newSVM("123", running), obj: newSVM("123", runningFalse, failed)},
		{name: "succeeded stays succeeded", old: newSVM("123", succeeded), obj: newSVM("123", succeeded)},
		{name: "failed stays failed", old: newSVM("123", failed), obj: newSVM("123", failed)},
		{name: "resource version change", old: newSVM("123", running), obj: newSVM("456", running),
			want: invalid + `status.resourceVersion: Invalid value: "456": field is immutable`},
		{name: "bad resource version format", old: newSVM(""), obj: newSVM("abc", running),
			want: invalid + `status.resourceVersion: Invalid value: "abc": resource version is not well formed: abc`},
		{name: "leading zero", old: newSVM(""), obj: newSVM("0123"),
			want: invalid + `status.resourceVersion: Invalid value: "0123": resource version is not well formed: 0123`},
		{name: "both succeeded and failed", old: newSVM("123", running), obj: newSVM("123", succeeded, failed),
			want: invalid + `status.conditions: Invalid value: [` +
				`{"type":"Succeeded","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"Succeeded","message":""},` +
				`{"type":"Failed","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"Failed","message":""}]: ` +
				`Both success and failed conditions cannot be true at the same time`},
		{name: "succeeded to false", old: newSVM("123", succeeded), obj: newSVM("123", succeededFalse),
			want: invalid + `status.conditions: Invalid value: [{"type":"Succeeded","status":"False","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"NotSucceeded","message":""}]: ` +
				`Success condition cannot be set to false once it is true`},
		{name: "failed to false", old: newSVM("123", failed), obj: newSVM("123", failedFalse),
			want: invalid + `status.conditions: Invalid value: [{"type":"Failed","status":"False","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"NotFailed","message":""}]: ` +
				`Failed condition cannot be set to false once it is true`},
		{name: "a condition without a reason", old: newSVM(""), obj: newSVM("", metav1.Condition{Type: "Running", Status: "True", LastTransitionTime: transition}),
			want: invalid + `status.conditions[0].reason: Required value`},
		{name: "a condition twice", old: newSVM(""), obj: newSVM("", running, running),
			want: invalid + `status.conditions[1]: Duplicate value: "Running"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := update(t, true, tt.old, func(s *storagemigrationv1.StorageVersionMigration) { s.Status = tt.obj.Status })
			if msg != tt.want {
				t.Fatalf("status update: got\n%s\nwant\n%s", msg, tt.want)
			}
			if msg == "" {
				if diff := cmp.Diff(tt.obj.Status, got.Status); diff != "" {
					t.Errorf("status (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestStatusUpdateKeepsSpecAndLabels: a status update changes status only.
func TestStatusUpdateKeepsSpecAndLabels(t *testing.T) {
	got, msg := update(t, true, newSVM(""), func(s *storagemigrationv1.StorageVersionMigration) {
		s.Spec.Resource.Resource = "others"
		s.Labels = map[string]string{"a": "b"}
		s.Status = newSVM("7", running).Status
	})
	if msg != "" {
		t.Fatalf("status update: got error %s, want none", msg)
	}
	if got.Spec != newSVM("").Spec || got.Labels != nil || got.Status.ResourceVersion != "7" {
		t.Errorf("after a status update: got spec %+v, labels %v, status.resourceVersion %q; want the old spec, no labels, 7", got.Spec, got.Labels, got.Status.ResourceVersion)
	}
}

// TestTable: upstream's columns, NAME, RESOURCE and STATUS (the type of the
// last True condition among Running, Succeeded and Failed).
func TestTable(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "storageversionmigrations")
	core := newSVM("")
	core.Spec.Resource = metav1.GroupResource{Resource: "secrets"}
	registrytest.CheckTable(t, store, []string{"Name", "Resource", "Status"},
		registrytest.Row{Name: "no conditions", Obj: newSVM(""), Want: []any{"test-svm", "myresources.example.com", "Unknown"}},
		registrytest.Row{Name: "core group", Obj: core, Want: []any{"test-svm", "secrets", "Unknown"}},
		registrytest.Row{Name: "running", Obj: newSVM("1", running), Want: []any{"test-svm", "myresources.example.com", "Running"}},
		registrytest.Row{Name: "running, then succeeded", Obj: newSVM("1", runningFalse, succeeded), Want: []any{"test-svm", "myresources.example.com", "Succeeded"}},
		registrytest.Row{Name: "the last True one", Obj: newSVM("1", failed, running), Want: []any{"test-svm", "myresources.example.com", "Running"}},
		registrytest.Row{Name: "another type", Obj: newSVM("1", metav1.Condition{Type: "Paused", Status: "True"}), Want: []any{"test-svm", "myresources.example.com", "Unknown"}},
	)
	if format := registrytest.TableOf(t, store, newSVM("")).ColumnDefinitions[0].Format; format != "" {
		t.Errorf("the Name column's format: got %q, want none (upstream's)", format)
	}
}

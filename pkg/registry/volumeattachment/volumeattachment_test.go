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

package volumeattachment

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// validAttachment is an attachment of a persistent volume, as the
// attach/detach controller creates it.
func validAttachment() *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-0123abcd", UID: "uid-1", ResourceVersion: "1"},
		Spec: storagev1.VolumeAttachmentSpec{
			Attacher: "ebs.csi.aws.com",
			Source:   storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")},
			NodeName: "node-1",
		},
	}
}

// attachedStatus is the status external-attacher reports.
func attachedStatus() storagev1.VolumeAttachmentStatus {
	return storagev1.VolumeAttachmentStatus{
		Attached:           true,
		AttachmentMetadata: map[string]string{"devicePath": "/dev/xvdba"},
		DetachError:        &storagev1.VolumeError{Message: "busy", ErrorCode: ptr.To[int32](14)},
	}
}

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "volumeattachments", "volumeattachments", "volumeattachments/status")
	status, ok := storages["volumeattachments/status"].(*registry.StatusREST)
	if !ok {
		t.Fatalf("storage %q: got %T, want *registry.StatusREST", "volumeattachments/status", storages["volumeattachments/status"])
	}
	store := storages["volumeattachments"].(*registry.REST)
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: storagev1.Resource("volumeattachments"), Singular: "volumeattachment"})
	// Upstream's reset fields: status on the resource; metadata and spec on /status.
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	if diff := cmp.Diff(registry.Fieldpaths(groupVersion, "status"), store.GetResetFields(), equal); diff != "" {
		t.Errorf("reset fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(registry.Fieldpaths(groupVersion, "metadata", "spec"), status.GetResetFields(), equal); diff != "" {
		t.Errorf("status reset fields (-want +got):\n%s", diff)
	}
	if !store.DeleteReturnsDeletedObject() {
		t.Errorf("DeleteReturnsDeletedObject: got false, want true (as upstream's store)")
	}
}

// TestValidateUpdate: upstream's ValidateVolumeAttachmentUpdate as 1.37
// shows it: the spec is immutable (the declarative error, with no value),
// and the rest is checked as on create, but for the attacher, checked by
// the handwritten rules alone.
func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name        string
		old, mutate func(*storagev1.VolumeAttachment)
		want        []string
	}{
		{name: "labels change", mutate: func(va *storagev1.VolumeAttachment) { va.Labels = map[string]string{"a": "b"} }, want: []string{}},
		{
			name:   "node name is immutable",
			mutate: func(va *storagev1.VolumeAttachment) { va.Spec.NodeName = "node-2" },
			want:   []string{"spec: Invalid value: null: field is immutable"},
		},
		{
			name:   "source is immutable",
			mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Source.PersistentVolumeName = ptr.To("pv-2") },
			want:   []string{"spec: Invalid value: null: field is immutable"},
		},
		{
			name:   "a changed spec is also validated, the attacher as handwritten",
			mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = strings.Repeat("a", 64) },
			want:   []string{"spec.attacher: Too long: may not be more than 63 bytes", "spec: Invalid value: null: field is immutable"},
		},
		{
			name:   "an unchanged bad attacher",
			old:    func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = "EBS_CSI" },
			mutate: func(va *storagev1.VolumeAttachment) { va.Labels = map[string]string{"a": "b"} },
			want:   []string{`spec.attacher: Invalid value: "EBS_CSI": ` + dnsSubdomain},
		},
	}
	store := registrytest.REST(t, NewStorage, "volumeattachments")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validAttachment()
			if tt.old != nil {
				tt.old(old)
			}
			got := store.UpdateStrategy.ValidateUpdate(context.Background(), registrytest.Modified(old, tt.mutate), old)
			if diff := cmp.Diff(tt.want, registrytest.Messages(got)); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateStatusUpdate: upstream's status strategy validates the whole
// attachment; the status's own rules are upstream's validateVolumeAttachmentStatus.
func TestValidateStatusUpdate(t *testing.T) {
	tests := []registrytest.Mutation[*storagev1.VolumeAttachment]{
		{Name: "attached", Mutate: func(*storagev1.VolumeAttachment) {}, Want: []string{}},
		{
			Name: "metadata too large",
			Mutate: func(va *storagev1.VolumeAttachment) {
				va.Status.AttachmentMetadata["blob"] = strings.Repeat("x", maxAttachmentMetadataSize)
			},
			Want: []string{"status.attachmentMetadata: Too long: may not be more than 262144 bytes"},
		},
		{
			Name: "error message too long",
			Mutate: func(va *storagev1.VolumeAttachment) {
				va.Status.AttachError = &storagev1.VolumeError{Message: strings.Repeat("m", 1025)}
			},
			Want: []string{"status.attachError.message: Too long: may not be more than 1024 bytes"},
		},
		{
			Name:   "negative error code",
			Mutate: func(va *storagev1.VolumeAttachment) { va.Status.DetachError.ErrorCode = ptr.To[int32](-1) },
			Want:   []string{"status.detachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive"},
		},
	}
	_, status := strategies()
	old := validAttachment()
	old.Status = attachedStatus()
	registrytest.RunMutations(t, "status ValidateUpdate errors", func() *storagev1.VolumeAttachment { return old }, tests, func(obj *storagev1.VolumeAttachment) []string {
		return registrytest.Messages(status.ValidateUpdate(context.Background(), obj, old))
	})
}

func TestPrepareForCreate(t *testing.T) {
	va := validAttachment()
	va.Status = attachedStatus()
	registrytest.REST(t, NewStorage, "volumeattachments").CreateStrategy.PrepareForCreate(context.Background(), va)
	if diff := cmp.Diff(storagev1.VolumeAttachmentStatus{}, va.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(validAttachment().Spec, va.Spec); diff != "" {
		t.Errorf("spec after PrepareForCreate (-want +got):\n%s", diff)
	}
	if va.Generation != 0 {
		t.Errorf("generation after PrepareForCreate: got %d, want 0 (upstream sets none)", va.Generation)
	}
}

// TestUpdateThroughStores runs updates through the generic stores of
// volumeattachments and of volumeattachments/status: each keeps what the
// other writes, and a status update keeps the errors' codes.
func TestUpdateThroughStores(t *testing.T) {
	tests := []struct {
		name       string
		status     bool
		wantStatus storagev1.VolumeAttachmentStatus
		wantLabels map[string]string
		wantFinal  []string
	}{
		{name: "main: metadata changes, status kept", wantLabels: map[string]string{"new": "label"}, wantFinal: []string{"example.com/new"}},
		{
			name: "status: status changes; labels and finalizers kept", status: true, wantStatus: attachedStatus(),
			wantLabels: map[string]string{"old": "label"}, wantFinal: []string{"external-attacher/ebs-csi-aws-com"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validAttachment()
			old.Labels, old.Finalizers = map[string]string{"old": "label"}, []string{"external-attacher/ebs-csi-aws-com"}
			ctx, storages, update := registrytest.Seeded(t, NewStorage, "volumeattachments", old)
			update.Status = attachedStatus()
			update.Labels, update.Finalizers = map[string]string{"new": "label"}, []string{"example.com/new"}
			out, err := registrytest.Update(ctx, storages, "volumeattachments", tt.status, "csi-0123abcd", update)
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			got := out.(*storagev1.VolumeAttachment)
			if diff := cmp.Diff(validAttachment().Spec, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFinal, got.Finalizers); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStatusUpdateKeepsSpec: a spec change sent to /status is dropped, not refused.
func TestStatusUpdateKeepsSpec(t *testing.T) {
	ctx, storages, update := registrytest.Seeded(t, NewStorage, "volumeattachments", validAttachment())
	update.Spec.NodeName = "node-2"
	update.Status.Attached = true
	out, err := registrytest.Update(ctx, storages, "volumeattachments", true, "csi-0123abcd", update)
	if err != nil {
		t.Fatalf("Update: got error %v, want none", err)
	}
	if got := out.(*storagev1.VolumeAttachment); got.Spec.NodeName != "node-1" || !got.Status.Attached {
		t.Errorf("after status update: got node %q, attached %v; want node-1, true", got.Spec.NodeName, got.Status.Attached)
	}
}

func TestFieldSelectors(t *testing.T) {
	registrytest.CheckFields(t, registrytest.REST(t, NewStorage, "volumeattachments"), validAttachment(), fields.Set{"metadata.name": "csi-0123abcd"})
}

func TestTable(t *testing.T) {
	tests := []registrytest.Row{
		{Name: "persistent volume, not attached", Obj: validAttachment(), Want: []any{"csi-0123abcd", "ebs.csi.aws.com", "pv-1", "node-1", false, "<unknown>"}},
		{
			Name: "inline volume, attached",
			Obj: registrytest.Modified(validAttachment(), func(va *storagev1.VolumeAttachment) {
				va.Spec.Source = storagev1.VolumeAttachmentSource{InlineVolumeSpec: inlineSpec()}
				va.Status.Attached = true
			}),
			Want: []any{"csi-0123abcd", "ebs.csi.aws.com", "", "node-1", true, "<unknown>"},
		},
	}
	store := registrytest.REST(t, NewStorage, "volumeattachments")
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			table, err := store.ConvertToTable(context.Background(), tt.Obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			want := []metav1.TableColumnDefinition{
				registry.NameColumn,
				{Name: "Attacher", Type: "string", Format: "name", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"]},
				{Name: "PV", Type: "string", Description: storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]},
				{Name: "Node", Type: "string", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]},
				{Name: "Attached", Type: "boolean", Description: storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]},
				registry.AgeColumn,
			}
			if diff := cmp.Diff(want, table.ColumnDefinitions); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.Want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

// inlineSpec is a migrated in-tree volume, as the attach/detach controller
// translates it.
func inlineSpec() *corev1.PersistentVolumeSpec {
	return &corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
	}
}

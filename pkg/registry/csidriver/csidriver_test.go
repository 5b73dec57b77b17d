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

package csidriver

import (
	"context"
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// validDriver is a driver as the scheme's defaults leave it.
func validDriver() *storagev1.CSIDriver {
	return &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: "ebs.csi.aws.com", UID: "uid-1", ResourceVersion: "1"},
		Spec: storagev1.CSIDriverSpec{
			AttachRequired: ptr.To(true), PodInfoOnMount: ptr.To(false), StorageCapacity: ptr.To(false), RequiresRepublish: ptr.To(false),
			SELinuxMount: ptr.To(false), PreventPodSchedulingIfMissing: ptr.To(false),
			FSGroupPolicy:        ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
		},
	}
}

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "csidrivers")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: storagev1.Resource("csidrivers"), Singular: "csidriver"})
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Mutation[*storagev1.CSIDriver]{
		{Name: "valid", Mutate: func(*storagev1.CSIDriver) {}, Want: []string{}},
		{Name: "name not a DNS subdomain", Mutate: func(d *storagev1.CSIDriver) { d.Name = "Bad_Driver" }, Want: []string{"metadata.name: Invalid value"}},
		{Name: "name too long", Mutate: func(d *storagev1.CSIDriver) { d.Name = strings.Repeat("a", 254) }, Want: []string{"metadata.name: Invalid value"}},
		{
			Name: "unset booleans",
			Mutate: func(d *storagev1.CSIDriver) {
				d.Spec.AttachRequired, d.Spec.PodInfoOnMount, d.Spec.StorageCapacity, d.Spec.SELinuxMount, d.Spec.PreventPodSchedulingIfMissing = nil, nil, nil, nil, nil
			},
			Want: []string{
				"spec.attachedRequired: Required value", "spec.podInfoOnMount: Required value", "spec.preventPodSchedulingIfMissing: Required value",
				"spec.seLinuxMount: Required value", "spec.storageCapacity: Required value",
			},
		},
		{
			Name: "unknown fsGroupPolicy and mode",
			Mutate: func(d *storagev1.CSIDriver) {
				d.Spec.FSGroupPolicy, d.Spec.VolumeLifecycleModes = ptr.To(storagev1.FSGroupPolicy("Maybe")), []storagev1.VolumeLifecycleMode{"Forever"}
			},
			Want: []string{"spec.fsGroupPolicy: Unsupported value", "spec.volumeLifecycleModes: Unsupported value"},
		},
		{
			Name: "token requests: duplicate audience, short and long expirations",
			Mutate: func(d *storagev1.CSIDriver) {
				d.Spec.TokenRequests = []storagev1.TokenRequest{
					{Audience: "a", ExpirationSeconds: ptr.To[int64](60)}, {Audience: "a"}, {Audience: "b", ExpirationSeconds: ptr.To[int64](1 << 33)}, {Audience: "c", ExpirationSeconds: ptr.To[int64](600)},
				}
			},
			Want: []string{"spec.tokenRequests[0].expirationSeconds: Invalid value", "spec.tokenRequests[1].audience: Duplicate value", "spec.tokenRequests[2].expirationSeconds: Invalid value"},
		},
		{
			Name:   "serviceAccountTokenInSecrets without token requests",
			Mutate: func(d *storagev1.CSIDriver) { d.Spec.ServiceAccountTokenInSecrets = ptr.To(true) },
			Want:   []string{"spec.serviceAccountTokenInSecrets: Invalid value"},
		},
		{
			Name:   "short nodeAllocatableUpdatePeriodSeconds",
			Mutate: func(d *storagev1.CSIDriver) { d.Spec.NodeAllocatableUpdatePeriodSeconds = ptr.To[int64](5) },
			Want:   []string{"spec.nodeAllocatableUpdatePeriodSeconds: Invalid value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "csidrivers")
	registrytest.ValidateMutations(t, store.CreateStrategy, registrytest.ErrorPaths, validDriver, tests)
}

func TestValidateUpdate(t *testing.T) {
	tests := []registrytest.Mutation[*storagev1.CSIDriver]{
		{Name: "podInfoOnMount may change", Mutate: func(d *storagev1.CSIDriver) { d.Spec.PodInfoOnMount = ptr.To(true) }, Want: []string{}},
		{Name: "attachRequired is immutable", Mutate: func(d *storagev1.CSIDriver) { d.Spec.AttachRequired = ptr.To(false) }, Want: []string{"spec.attachedRequired: Invalid value"}},
		{
			Name: "volumeLifecycleModes are immutable",
			Mutate: func(d *storagev1.CSIDriver) {
				d.Spec.VolumeLifecycleModes = append(d.Spec.VolumeLifecycleModes, storagev1.VolumeLifecycleEphemeral)
			},
			Want: []string{"spec.volumeLifecycleModes: Invalid value"},
		},
		{Name: "update also validates", Mutate: func(d *storagev1.CSIDriver) { d.Spec.StorageCapacity = nil }, Want: []string{"spec.storageCapacity: Required value"}},
	}
	store := registrytest.REST(t, NewStorage, "csidrivers")
	registrytest.ValidateUpdateMutations(t, store.UpdateStrategy, registrytest.ErrorPaths, validDriver, tests)
}

func TestPrepareForCreateAndUpdate(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "csidrivers")
	d := validDriver()
	store.CreateStrategy.PrepareForCreate(context.Background(), d)
	if d.Generation != 0 {
		t.Errorf("generation after PrepareForCreate: got %d, want 0 (upstream sets none)", d.Generation)
	}
	tests := []registrytest.Generation[*storagev1.CSIDriver]{
		{Name: "labels", Mutate: func(d *storagev1.CSIDriver) { d.Labels = map[string]string{"a": "b"} }, Want: 0},
		{Name: "spec", Mutate: func(d *storagev1.CSIDriver) { d.Spec.PodInfoOnMount = ptr.To(true) }, Want: 1},
	}
	registrytest.CheckGenerations(t, store.UpdateStrategy, d, tests, nil)
}

func TestFieldSelectors(t *testing.T) {
	registrytest.CheckFields(t, registrytest.REST(t, NewStorage, "csidrivers"), validDriver(), fields.Set{"metadata.name": "ebs.csi.aws.com"})
}

func TestTable(t *testing.T) {
	tests := []registrytest.Row{
		{Name: "defaulted", Obj: validDriver(), Want: []any{"ebs.csi.aws.com", true, false, false, "<unset>", false, "Persistent", "<unknown>"}},
		{
			Name: "token requests, both modes",
			Obj: registrytest.Modified(validDriver(), func(d *storagev1.CSIDriver) {
				d.Spec.TokenRequests = []storagev1.TokenRequest{{Audience: "vault"}, {Audience: "gcp"}}
				d.Spec.VolumeLifecycleModes = append(d.Spec.VolumeLifecycleModes, storagev1.VolumeLifecycleEphemeral)
				d.Spec.PodInfoOnMount, d.Spec.RequiresRepublish = ptr.To(true), ptr.To(true)
			}),
			Want: []any{"ebs.csi.aws.com", true, true, false, "vault,gcp", true, "Persistent,Ephemeral", "<unknown>"},
		},
		{
			Name: "unset fields",
			Obj:  &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "x"}},
			Want: []any{"x", true, false, false, "<unset>", false, "<none>", "<unknown>"},
		},
	}
	store := registrytest.REST(t, NewStorage, "csidrivers")
	registrytest.CheckTable(t, store, []string{"Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests", "RequiresRepublish", "Modes", "Age"}, tests...)
}

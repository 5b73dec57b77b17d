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
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

const (
	dnsSubdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
		`(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	// caselessSubdomain is the declarative format's message.
	caselessSubdomain = "an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
		`(e.g. 'Example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	dnsLabel = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character " +
		"(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
	exactlyOne = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
)

// TestValidate: upstream's ValidateVolumeAttachment as 1.37 shows it on a
// create: the attacher's errors are the declarative ones, last.
func TestValidate(t *testing.T) {
	accented := strings.Repeat("é", 32) // 64 bytes, 32 characters
	tests := []registrytest.Mutation[*storagev1.VolumeAttachment]{
		{Name: "valid", Mutate: func(*storagev1.VolumeAttachment) {}, Want: []string{}},
		{Name: "upper-case attacher", Mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = "EBS.csi.aws.com" }, Want: []string{}},
		{
			Name:   "name not a DNS subdomain",
			Mutate: func(va *storagev1.VolumeAttachment) { va.Name = "CSI_1" },
			Want:   []string{`metadata.name: Invalid value: "CSI_1": ` + dnsSubdomain},
		},
		{Name: "no attacher", Mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = "" }, Want: []string{"spec.attacher: Required value"}},
		{
			Name:   "attacher too long",
			Mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = strings.Repeat("a", 64) },
			Want:   []string{"spec.attacher: Too long: may not be more than 63 characters"},
		},
		{
			Name:   "attacher not a DNS subdomain",
			Mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = "EBS_CSI" },
			Want:   []string{`spec.attacher: Invalid value: "EBS_CSI": ` + caselessSubdomain},
		},
		{
			// The declared limit counts characters: the handwritten byte limit stays.
			Name:   "attacher of 64 bytes, 32 characters",
			Mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = accented },
			Want:   []string{"spec.attacher: Too long: may not be more than 63 bytes", `spec.attacher: Invalid value: "` + accented + `": ` + caselessSubdomain},
		},
		{
			Name:   "attacher errors come last",
			Mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher, va.Spec.NodeName = "", "Node_1" },
			Want:   []string{`spec.nodeName: Invalid value: "Node_1": ` + dnsSubdomain, "spec.attacher: Required value"},
		},
		{Name: "no node name", Mutate: func(va *storagev1.VolumeAttachment) { va.Spec.NodeName = "" }, Want: []string{`spec.nodeName: Invalid value: "": ` + dnsSubdomain}},
		{
			Name:   "no source",
			Mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Source = storagev1.VolumeAttachmentSource{} },
			Want:   []string{"spec.source: Required value: " + exactlyOne},
		},
		{
			Name:   "both sources",
			Mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Source.InlineVolumeSpec = inlineSpec() },
			Want:   []string{"spec.source: Forbidden: " + exactlyOne},
		},
		{
			Name:   "empty persistent volume name",
			Mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Source.PersistentVolumeName = ptr.To("") },
			Want: []string{
				"spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName",
				`spec.source.persistentVolumeName: Invalid value: "": ` + dnsSubdomain,
			},
		},
		{
			Name:   "persistent volume name not a DNS subdomain",
			Mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Source.PersistentVolumeName = ptr.To("PV_1") },
			Want:   []string{`spec.source.persistentVolumeName: Invalid value: "PV_1": ` + dnsSubdomain},
		},
		{
			Name: "status is checked too",
			Mutate: func(va *storagev1.VolumeAttachment) {
				va.Status.AttachError = &storagev1.VolumeError{ErrorCode: ptr.To[int32](-2)}
			},
			Want: []string{"status.attachError.errorCode: Invalid value: -2: must be between 0 and 2147483647, inclusive"},
		},
	}
	store := registrytest.REST(t, NewStorage, "volumeattachments")
	registrytest.ValidateMutations(t, store.CreateStrategy, registrytest.Messages, validAttachment, tests)
}

// TestValidateInline: upstream's ValidatePersistentVolumeSpec for an
// inline volume, at spec.source.inlineVolumeSpec.
func TestValidateInline(t *testing.T) {
	const p = "spec.source.inlineVolumeSpec"
	const csiRequired = p + ".csi: Required value: has to be specified in the context of inline volumes"
	nfs := func(s *corev1.PersistentVolumeSpec) {
		s.CSI, s.NFS = nil, &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports"}
	}
	secret := func(name, namespace string) *corev1.SecretReference {
		return &corev1.SecretReference{Name: name, Namespace: namespace}
	}
	tests := []registrytest.Mutation[*corev1.PersistentVolumeSpec]{
		{Name: "valid", Mutate: func(*corev1.PersistentVolumeSpec) {}, Want: []string{}},
		{
			Name: "Retain, Filesystem and secrets allowed",
			Mutate: func(s *corev1.PersistentVolumeSpec) {
				s.PersistentVolumeReclaimPolicy, s.VolumeMode = corev1.PersistentVolumeReclaimRetain, ptr.To(corev1.PersistentVolumeFilesystem)
				s.CSI.NodePublishSecretRef = secret("creds", "kube-system")
			},
			Want: []string{},
		},
		{
			Name: "what only a PersistentVolume has",
			Mutate: func(s *corev1.PersistentVolumeSpec) {
				s.ClaimRef = &corev1.ObjectReference{Name: "claim"}
				s.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
				s.NodeAffinity = &corev1.VolumeNodeAffinity{}
				s.StorageClassName = "fast"
			},
			Want: []string{
				p + ".claimRef: Forbidden: may not be specified in the context of inline volumes",
				p + ".capacity: Forbidden: may not be specified in the context of inline volumes",
				p + ".nodeAffinity: Forbidden: may not be specified in the context of inline volumes",
				p + ".storageClassName: Forbidden: may not be specified in the context of inline volumes",
			},
		},
		{Name: "not CSI", Mutate: nfs, Want: []string{csiRequired}},
		{Name: "no access modes", Mutate: func(s *corev1.PersistentVolumeSpec) { s.AccessModes = nil }, Want: []string{p + ".accessModes: Required value"}},
		{
			Name:   "ReadWriteOncePod with another",
			Mutate: func(s *corev1.PersistentVolumeSpec) { s.AccessModes = append(s.AccessModes, corev1.ReadWriteOncePod) },
			Want:   []string{p + ".accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"},
		},
		{
			Name: "unknown access mode",
			Mutate: func(s *corev1.PersistentVolumeSpec) {
				s.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadSometimes"}
			},
			Want: []string{p + `.accessModes: Unsupported value: "ReadSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`},
		},
		{
			Name: "Delete",
			Mutate: func(s *corev1.PersistentVolumeSpec) {
				s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
			},
			Want: []string{p + ".persistentVolumeReclaimPolicy: Forbidden: may only be Retain in the context of inline volumes"},
		},
		{
			Name: "Recycle of a hostPath of /",
			Mutate: func(s *corev1.PersistentVolumeSpec) {
				s.CSI, s.HostPath, s.PersistentVolumeReclaimPolicy = nil, &corev1.HostPathVolumeSource{Path: "/"}, corev1.PersistentVolumeReclaimRecycle
			},
			Want: []string{
				csiRequired,
				p + ".persistentVolumeReclaimPolicy: Forbidden: may only be Retain in the context of inline volumes",
				p + ".persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
			},
		},
		{
			Name:   "Block",
			Mutate: func(s *corev1.PersistentVolumeSpec) { s.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) },
			Want:   []string{p + ".volumeMode: Forbidden: may not specify volumeMode other than Filesystem in the context of inline volumes"},
		},
		{
			Name:   "no volume source",
			Mutate: func(s *corev1.PersistentVolumeSpec) { s.CSI = nil },
			Want:   []string{csiRequired, p + ": Required value: must specify a volume type"},
		},
		{
			Name:   "CSI after another source",
			Mutate: func(s *corev1.PersistentVolumeSpec) { s.HostPath = &corev1.HostPathVolumeSource{Path: "/data"} },
			Want:   []string{p + ".csi: Forbidden: may not specify more than 1 volume type"},
		},
		{
			Name: "cephfs after nfs, at upstream's path",
			Mutate: func(s *corev1.PersistentVolumeSpec) {
				nfs(s)
				s.CephFS = &corev1.CephFSPersistentVolumeSource{Monitors: []string{"m"}}
			},
			Want: []string{csiRequired, p + ".cephFS: Forbidden: may not specify more than 1 volume type"},
		},
		{
			Name: "flexVolume is counted, never refused",
			Mutate: func(s *corev1.PersistentVolumeSpec) {
				nfs(s)
				s.FlexVolume = &corev1.FlexPersistentVolumeSource{Driver: "example/flex"}
			},
			Want: []string{csiRequired},
		},
		{
			Name: "local requires node affinity",
			Mutate: func(s *corev1.PersistentVolumeSpec) {
				s.CSI, s.Local = nil, &corev1.LocalVolumeSource{Path: "/mnt/disk"}
			},
			Want: []string{csiRequired, p + ".nodeAffinity: Required value: Local volume requires node affinity"},
		},
		{
			Name:   "no CSI driver or handle",
			Mutate: func(s *corev1.PersistentVolumeSpec) { s.CSI.Driver, s.CSI.VolumeHandle = "", "" },
			Want:   []string{p + ".csi.driver: Required value", p + ".csi.volumeHandle: Required value"},
		},
		{
			Name:   "CSI driver as handwritten: too long, lower-cased format",
			Mutate: func(s *corev1.PersistentVolumeSpec) { s.CSI.Driver = strings.Repeat("A", 63) + "_" },
			Want: []string{
				p + ".csi.driver: Too long: may not be more than 63 bytes",
				p + `.csi.driver: Invalid value: "` + strings.Repeat("A", 63) + `_": ` + dnsSubdomain,
			},
		},
		{
			Name: "secret references",
			Mutate: func(s *corev1.PersistentVolumeSpec) {
				s.CSI.ControllerPublishSecretRef, s.CSI.ControllerExpandSecretRef = secret("", ""), secret("Creds", "Kube_System")
				s.CSI.NodePublishSecretRef, s.CSI.NodeExpandSecretRef = secret("creds", "kube-system"), secret("", "kube-system")
			},
			Want: []string{
				p + ".csi.controllerPublishSecretRef.name: Required value",
				p + ".csi.controllerPublishSecretRef.namespace: Required value",
				p + `.csi.controllerExpandSecretRef.name: Invalid value: "Creds": ` + dnsSubdomain,
				p + `.csi.controllerExpandSecretRef.namespace: Invalid value: "Kube_System": ` + dnsLabel,
				p + ".csi.nodeExpandSecretRef.name: Required value",
			},
		},
	}
	store := registrytest.REST(t, NewStorage, "volumeattachments")
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			va := validAttachment()
			va.Spec.Source = storagev1.VolumeAttachmentSource{InlineVolumeSpec: inlineSpec()}
			tt.Mutate(va.Spec.Source.InlineVolumeSpec)
			got := registrytest.Messages(store.CreateStrategy.Validate(context.Background(), va))
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

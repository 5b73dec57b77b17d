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
	tests := []struct {
		name   string
		mutate func(*storagev1.VolumeAttachment)
		want   []string
	}{
		{name: "valid", mutate: func(*storagev1.VolumeAttachment) {}, want: []string{}},
		{name: "upper-case attacher", mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = "EBS.csi.aws.com" }, want: []string{}},
		{
			name:   "name not a DNS subdomain",
			mutate: func(va *storagev1.VolumeAttachment) { va.Name = "CSI_1" },
			want:   []string{`metadata.name: Invalid value: "CSI_1": ` + dnsSubdomain},
		},
		{name: "no attacher", mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = "" }, want: []string{"spec.attacher: Required value"}},
		{
			name:   "attacher too long",
			mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = strings.Repeat("a", 64) },
			want:   []string{"spec.attacher: Too long: may not be more than 63 characters"},
		},
		{
			name:   "attacher not a DNS subdomain",
			mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = "EBS_CSI" },
			want:   []string{`spec.attacher: Invalid value: "EBS_CSI": ` + caselessSubdomain},
		},
		{
			// The declared limit counts characters: the handwritten byte limit stays.
			name:   "attacher of 64 bytes, 32 characters",
			mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = accented },
			want:   []string{"spec.attacher: Too long: may not be more than 63 bytes", `spec.attacher: Invalid value: "` + accented + `": ` + caselessSubdomain},
		},
		{
			name:   "attacher errors come last",
			mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Attacher, va.Spec.NodeName = "", "Node_1" },
			want:   []string{`spec.nodeName: Invalid value: "Node_1": ` + dnsSubdomain, "spec.attacher: Required value"},
		},
		{name: "no node name", mutate: func(va *storagev1.VolumeAttachment) { va.Spec.NodeName = "" }, want: []string{`spec.nodeName: Invalid value: "": ` + dnsSubdomain}},
		{
			name:   "no source",
			mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Source = storagev1.VolumeAttachmentSource{} },
			want:   []string{"spec.source: Required value: " + exactlyOne},
		},
		{
			name:   "both sources",
			mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Source.InlineVolumeSpec = inlineSpec() },
			want:   []string{"spec.source: Forbidden: " + exactlyOne},
		},
		{
			name:   "empty persistent volume name",
			mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Source.PersistentVolumeName = ptr.To("") },
			want: []string{
				"spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName",
				`spec.source.persistentVolumeName: Invalid value: "": ` + dnsSubdomain,
			},
		},
		{
			name:   "persistent volume name not a DNS subdomain",
			mutate: func(va *storagev1.VolumeAttachment) { va.Spec.Source.PersistentVolumeName = ptr.To("PV_1") },
			want:   []string{`spec.source.persistentVolumeName: Invalid value: "PV_1": ` + dnsSubdomain},
		},
		{
			name: "status is checked too",
			mutate: func(va *storagev1.VolumeAttachment) {
				va.Status.AttachError = &storagev1.VolumeError{ErrorCode: ptr.To[int32](-2)}
			},
			want: []string{"status.attachError.errorCode: Invalid value: -2: must be between 0 and 2147483647, inclusive"},
		},
	}
	store := registrytest.REST(t, NewStorage, "volumeattachments")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.Messages(store.CreateStrategy.Validate(context.Background(), modified(validAttachment(), tt.mutate)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
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
	tests := []struct {
		name   string
		mutate func(*corev1.PersistentVolumeSpec)
		want   []string
	}{
		{name: "valid", mutate: func(*corev1.PersistentVolumeSpec) {}, want: []string{}},
		{
			name: "Retain, Filesystem and secrets allowed",
			mutate: func(s *corev1.PersistentVolumeSpec) {
				s.PersistentVolumeReclaimPolicy, s.VolumeMode = corev1.PersistentVolumeReclaimRetain, ptr.To(corev1.PersistentVolumeFilesystem)
				s.CSI.NodePublishSecretRef = secret("creds", "kube-system")
			},
			want: []string{},
		},
		{
			name: "what only a PersistentVolume has",
			mutate: func(s *corev1.PersistentVolumeSpec) {
				s.ClaimRef = &corev1.ObjectReference{Name: "claim"}
				s.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
				s.NodeAffinity = &corev1.VolumeNodeAffinity{}
				s.StorageClassName = "fast"
			},
			want: []string{
				p + ".claimRef: Forbidden: may not be specified in the context of inline volumes",
				p + ".capacity: Forbidden: may not be specified in the context of inline volumes",
				p + ".nodeAffinity: Forbidden: may not be specified in the context of inline volumes",
				p + ".storageClassName: Forbidden: may not be specified in the context of inline volumes",
			},
		},
		{name: "not CSI", mutate: nfs, want: []string{csiRequired}},
		{name: "no access modes", mutate: func(s *corev1.PersistentVolumeSpec) { s.AccessModes = nil }, want: []string{p + ".accessModes: Required value"}},
		{
			name:   "ReadWriteOncePod with another",
			mutate: func(s *corev1.PersistentVolumeSpec) { s.AccessModes = append(s.AccessModes, corev1.ReadWriteOncePod) },
			want:   []string{p + ".accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"},
		},
		{
			name: "unknown access mode",
			mutate: func(s *corev1.PersistentVolumeSpec) {
				s.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadSometimes"}
			},
			want: []string{p + `.accessModes: Unsupported value: "ReadSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`},
		},
		{
			name: "Delete",
			mutate: func(s *corev1.PersistentVolumeSpec) {
				s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
			},
			want: []string{p + ".persistentVolumeReclaimPolicy: Forbidden: may only be Retain in the context of inline volumes"},
		},
		{
			name: "Recycle of a hostPath of /",
			mutate: func(s *corev1.PersistentVolumeSpec) {
				s.CSI, s.HostPath, s.PersistentVolumeReclaimPolicy = nil, &corev1.HostPathVolumeSource{Path: "/"}, corev1.PersistentVolumeReclaimRecycle
			},
			want: []string{
				csiRequired,
				p + ".persistentVolumeReclaimPolicy: Forbidden: may only be Retain in the context of inline volumes",
				p + ".persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
			},
		},
		{
			name:   "Block",
			mutate: func(s *corev1.PersistentVolumeSpec) { s.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) },
			want:   []string{p + ".volumeMode: Forbidden: may not specify volumeMode other than Filesystem in the context of inline volumes"},
		},
		{
			name:   "no volume source",
			mutate: func(s *corev1.PersistentVolumeSpec) { s.CSI = nil },
			want:   []string{csiRequired, p + ": Required value: must specify a volume type"},
		},
		{
			name:   "CSI after another source",
			mutate: func(s *corev1.PersistentVolumeSpec) { s.HostPath = &corev1.HostPathVolumeSource{Path: "/data"} },
			want:   []string{p + ".csi: Forbidden: may not specify more than 1 volume type"},
		},
		{
			name: "cephfs after nfs, at upstream's path",
			mutate: func(s *corev1.PersistentVolumeSpec) {
				nfs(s)
				s.CephFS = &corev1.CephFSPersistentVolumeSource{Monitors: []string{"m"}}
			},
			want: []string{csiRequired, p + ".cephFS: Forbidden: may not specify more than 1 volume type"},
		},
		{
			name: "flexVolume is counted, never refused",
			mutate: func(s *corev1.PersistentVolumeSpec) {
				nfs(s)
				s.FlexVolume = &corev1.FlexPersistentVolumeSource{Driver: "example/flex"}
			},
			want: []string{csiRequired},
		},
		{
			name: "local requires node affinity",
			mutate: func(s *corev1.PersistentVolumeSpec) {
				s.CSI, s.Local = nil, &corev1.LocalVolumeSource{Path: "/mnt/disk"}
			},
			want: []string{csiRequired, p + ".nodeAffinity: Required value: Local volume requires node affinity"},
		},
		{
			name:   "no CSI driver or handle",
			mutate: func(s *corev1.PersistentVolumeSpec) { s.CSI.Driver, s.CSI.VolumeHandle = "", "" },
			want:   []string{p + ".csi.driver: Required value", p + ".csi.volumeHandle: Required value"},
		},
		{
			name:   "CSI driver as handwritten: too long, lower-cased format",
			mutate: func(s *corev1.PersistentVolumeSpec) { s.CSI.Driver = strings.Repeat("A", 63) + "_" },
			want: []string{
				p + ".csi.driver: Too long: may not be more than 63 bytes",
				p + `.csi.driver: Invalid value: "` + strings.Repeat("A", 63) + `_": ` + dnsSubdomain,
			},
		},
		{
			name: "secret references",
			mutate: func(s *corev1.PersistentVolumeSpec) {
				s.CSI.ControllerPublishSecretRef, s.CSI.ControllerExpandSecretRef = secret("", ""), secret("Creds", "Kube_System")
				s.CSI.NodePublishSecretRef, s.CSI.NodeExpandSecretRef = secret("creds", "kube-system"), secret("", "kube-system")
			},
			want: []string{
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
		t.Run(tt.name, func(t *testing.T) {
			va := validAttachment()
			va.Spec.Source = storagev1.VolumeAttachmentSource{InlineVolumeSpec: inlineSpec()}
			tt.mutate(va.Spec.Source.InlineVolumeSpec)
			got := registrytest.Messages(store.CreateStrategy.Validate(context.Background(), va))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

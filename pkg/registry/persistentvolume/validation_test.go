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

package persistentvolume

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*corev1.PersistentVolume]{
		{Name: "valid hostPath", Obj: validPV(), Want: []string{}},
		{ // upstream's volume plugins' check
			Name: "the mount options annotation on hostPath, not nfs",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Annotations = map[string]string{corev1.MountOptionAnnotation: "ro"}
			}),
			Want: []string{"metadata.annotations.volume.beta.kubernetes.io/mount-options: Forbidden"},
		},
		{
			Name: "the mount options annotation on nfs",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Annotations = map[string]string{corev1.MountOptionAnnotation: "ro"}
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports/a"}}
			}),
			Want: []string{},
		},
		{
			Name: "valid nfs, every access mode but RWOP",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports/a"}}
				pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany}
			}),
			Want: []string{},
		},
		{
			Name: "valid local with node affinity",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disks/ssd1"}}
				pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"}}},
				}}}}
			}),
			Want: []string{},
		},
		{
			Name: "valid csi",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}}
			}),
			Want: []string{},
		},
		{
			Name: "no volume source",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{} }),
			Want: []string{"spec: Required value"},
		},
		{
			Name: "two volume sources: the second one is reported",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.NFS = &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports/a"}
			}),
			Want: []string{"spec.nfs: Forbidden"},
		},
		{
			Name: "a source checked in upstream's order: gcePersistentDisk after hostPath",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.GCEPersistentDisk = &corev1.GCEPersistentDiskVolumeSource{PDName: "disk-1"}
			}),
			Want: []string{"spec.gcePersistentDisk: Forbidden"},
		},
		{
			Name: "a source with no checks of its own",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{ISCSI: &corev1.ISCSIPersistentVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.2001-04.com.example:storage", Lun: 0}}
			}),
			Want: []string{},
		},
		{
			Name: "no capacity",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.Capacity = nil }),
			Want: []string{"spec.capacity: Required value", "spec.capacity: Unsupported value"},
		},
		{
			Name: "capacity without storage",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
			}),
			Want: []string{"spec.capacity: Unsupported value"},
		},
		{
			Name: "capacity with storage and more",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.Capacity[corev1.ResourceMemory] = resource.MustParse("1Gi")
			}),
			Want: []string{"spec.capacity: Unsupported value"},
		},
		{
			Name: "zero storage",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("0") }),
			Want: []string{"spec.capacity[storage]: Invalid value"},
		},
		{
			Name: "no access modes",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = nil }),
			Want: []string{"spec.accessModes: Required value"},
		},
		{
			Name: "unknown access mode",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadWriteSometimes"}
			}),
			Want: []string{"spec.accessModes: Unsupported value"},
		},
		{
			Name: "ReadWriteOncePod alone",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}
			}),
			Want: []string{},
		},
		{
			Name: "ReadWriteOncePod with another mode",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadOnlyMany}
			}),
			Want: []string{"spec.accessModes: Forbidden"},
		},
		{
			Name: "hostPath without a path",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Path = "" }),
			Want: []string{"spec.hostPath.path: Required value"},
		},
		{
			Name: "hostPath with ..",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Path = "/data/../etc" }),
			Want: []string{"spec.hostPath.path: Invalid value"},
		},
		{
			Name: "hostPath of an unknown type",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Type = ptr.To(corev1.HostPathType("Pipe")) }),
			Want: []string{"spec.hostPath.type: Unsupported value"},
		},
		{
			Name: "recycling a hostPath of /",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.HostPath.Path = "/"
				pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRecycle
			}),
			Want: []string{"spec.persistentVolumeReclaimPolicy: Forbidden"},
		},
		{
			Name: "nfs without server and path",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{}}
			}),
			// An empty path is also not absolute, as upstream reports it.
			Want: []string{"spec.nfs.path: Invalid value", "spec.nfs.path: Required value", "spec.nfs.server: Required value"},
		},
		{
			Name: "nfs with a relative path",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "exports"}}
			}),
			Want: []string{"spec.nfs.path: Invalid value"},
		},
		{
			Name: "local without node affinity or path",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{}}
			}),
			Want: []string{"spec.local.path: Required value", "spec.nodeAffinity: Required value"},
		},
		{
			Name: "node affinity without required terms",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{} }),
			Want: []string{"spec.nodeAffinity.required: Required value"},
		},
		{
			Name: "csi without driver and handle",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{}}
			}),
			Want: []string{"spec.csi.driver: Required value", "spec.csi.volumeHandle: Required value"},
		},
		{
			Name: "csi driver too long",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: strings.Repeat("d", 64), VolumeHandle: "v"}}
			}),
			Want: []string{"spec.csi.driver: Too long"},
		},
		{
			Name: "bad storageClassName, volumeMode and reclaim policy",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.StorageClassName = "Fast_SSD"
				pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeMode("Object"))
				pv.Spec.PersistentVolumeReclaimPolicy = "Keep"
			}),
			Want: []string{"spec.persistentVolumeReclaimPolicy: Unsupported value", "spec.storageClassName: Invalid value", "spec.volumeMode: Unsupported value"},
		},
		{
			Name: "namespaced name is refused",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Namespace = "default" }),
			Want: []string{"metadata.namespace: Forbidden"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "persistentvolumes").CreateStrategy
	registrytest.ValidateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

func TestValidateUpdate(t *testing.T) {
	csiPV := registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
		pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}}
	})
	affinity := &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
	}}}}
	tests := []registrytest.Change[*corev1.PersistentVolume]{
		{
			Name: "capacity, reclaim policy, claimRef and class may change",
			Old:  validPV(),
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("20Gi")
				pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
				pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: "data"}
				pv.Spec.StorageClassName = "fast"
			}),
			Want: []string{},
		},
		{
			Name: "the volume source is immutable",
			Old:  validPV(),
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Path = "/data/other" }),
			Want: []string{"spec.persistentvolumesource: Forbidden"},
		},
		{
			Name: "a csi volume may gain a controllerExpandSecretRef",
			Old:  csiPV,
			Obj: registrytest.Modified(csiPV, func(pv *corev1.PersistentVolume) {
				pv.Spec.CSI.ControllerExpandSecretRef = &corev1.SecretReference{Name: "expand", Namespace: "kube-system"}
			}),
			Want: []string{},
		},
		{
			Name: "volumeMode is immutable",
			Old:  validPV(),
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) }),
			Want: []string{"volumeMode: Invalid value"},
		},
		{
			Name: "node affinity may be set",
			Old:  validPV(),
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.NodeAffinity = affinity }),
			Want: []string{},
		},
		{
			Name: "node affinity, once set, is immutable",
			Old:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.NodeAffinity = affinity }),
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.NodeAffinity = affinity.DeepCopy()
				pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{"b"}
			}),
			Want: []string{"nodeAffinity: Invalid value"},
		},
		{
			Name: "the create rules apply too",
			Old:  validPV(),
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = nil }),
			Want: []string{"spec.accessModes: Required value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "persistentvolumes").UpdateStrategy
	registrytest.ValidateUpdateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

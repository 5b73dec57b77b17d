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
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	volumehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// now is the clock of status.lastPhaseTransitionTime (tests pin it).
var now = metav1.Now

// NewStorage returns the storage of persistentvolumes and persistentvolumes/status.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	base := registry.NewStrategy(false)
	// Runs after the status is cleared: a new volume is Pending, as
	// upstream's strategy makes it (PersistentVolumeLastPhaseTransitionTime is GA).
	base.OnCreate = func(obj runtime.Object) {
		pv := obj.(*corev1.PersistentVolume)
		t := now()
		pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &t}
	}
	base.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*corev1.PersistentVolume)) }
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		pv := obj.(*corev1.PersistentVolume)
		return append(validate(pv), validateUpdate(pv, old.(*corev1.PersistentVolume))...)
	}
	base.Warnings = warnings
	main, status := registry.SpecAndStatus{GroupVersion: "v1"}.Strategies(base)
	keepSpec := status.OnUpdate
	status.OnUpdate = func(obj, old runtime.Object) {
		keepSpec(obj, old)
		stampPhaseTransition(obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume))
	}

	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("persistentvolumes"),
		Singular:   "persistentvolume",
		ShortNames: []string{"pv"},
		New:        func() runtime.Object { return &corev1.PersistentVolume{} },
		NewList:    func() runtime.Object { return &corev1.PersistentVolumeList{} },
		Strategy:   main,
		Table:      table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"persistentvolumes":        store,
		"persistentvolumes/status": registry.NewStatusREST(store, status),
	}, nil
}

// stampPhaseTransition sets status.lastPhaseTransitionTime on a status
// update as upstream's status strategy does: kept while the phase stays,
// set to now when the phase changes and the client did not set a new time.
func stampPhaseTransition(pv, old *corev1.PersistentVolume) {
	switch {
	case pv.Status.Phase == old.Status.Phase && pv.Status.LastPhaseTransitionTime == nil:
		pv.Status.LastPhaseTransitionTime = old.Status.LastPhaseTransitionTime
	case pv.Status.Phase != old.Status.Phase && (pv.Status.LastPhaseTransitionTime == nil || pv.Status.LastPhaseTransitionTime.Equal(old.Status.LastPhaseTransitionTime)):
		t := now()
		pv.Status.LastPhaseTransitionTime = &t
	}
}

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]},
		{Name: "Reclaim Policy", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]},
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]},
		{Name: "Claim", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
		{Name: "Reason", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]},
		registry.AgeColumn,
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]},
	},
	Cells: func(obj runtime.Object) []any {
		pv := obj.(*corev1.PersistentVolume)
		claim := ""
		if ref := pv.Spec.ClaimRef; ref != nil {
			claim = ref.Namespace + "/" + ref.Name
		}
		capacity := pv.Spec.Capacity[corev1.ResourceStorage]
		phase := string(pv.Status.Phase)
		if pv.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		return []any{pv.Name, capacity.String(), AccessModesString(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
			phase, claim, volumehelpers.GetPersistentVolumeClass(pv), unset(pv.Spec.VolumeAttributesClassName), pv.Status.Reason, registry.Age(pv.CreationTimestamp),
			unset((*string)(pv.Spec.VolumeMode))}
	},
}

// unset prints an optional string as kubectl does: "<unset>" for nil.
func unset(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}

// AccessModesString prints access modes in kubectl's short forms, in
// upstream's fixed order (RWO, ROX, RWX, RWOP), each once.
func AccessModesString(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

// supportedAccessModes is sorted, as upstream lists it in errors.
var supportedAccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOncePod}

// ValidateAccessModes checks the access modes of a volume or claim as
// upstream does; requiredMsg is the detail of the error for none.
func ValidateAccessModes(modes []corev1.PersistentVolumeAccessMode, p *field.Path, requiredMsg string) field.ErrorList {
	var errs field.ErrorList
	if len(modes) == 0 {
		errs = append(errs, field.Required(p, requiredMsg))
	}
	rwop, other := false, false
	for _, mode := range modes {
		switch {
		case !slices.Contains(supportedAccessModes, mode):
			errs = append(errs, field.NotSupported(p, mode, supportedAccessModes))
		case mode == corev1.ReadWriteOncePod:
			rwop = true
		default:
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

// ValidatePositiveQuantity checks that a size is greater than zero.
func ValidatePositiveQuantity(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(p, q.String(), "must be greater than zero")}
	}
	return nil
}

var (
	supportedReclaimPolicies = []corev1.PersistentVolumeReclaimPolicy{corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle, corev1.PersistentVolumeReclaimRetain}
	// SupportedVolumeModes are the volume modes of volumes and claims.
	SupportedVolumeModes = []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}
)

// validate checks upstream's ValidatePersistentVolumeSpec, in its order
// (ValidateSource checks the volume's source).
func validate(pv *corev1.PersistentVolume) field.ErrorList {
	spec := &pv.Spec
	p := field.NewPath("spec")
	errs := ValidateAccessModes(spec.AccessModes, p.Child("accessModes"), "")

	if len(spec.Capacity) == 0 {
		errs = append(errs, field.Required(p.Child("capacity"), ""))
	}
	if _, ok := spec.Capacity[corev1.ResourceStorage]; !ok || len(spec.Capacity) > 1 {
		errs = append(errs, field.NotSupported(p.Child("capacity"), spec.Capacity, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	for _, name := range slices.Sorted(maps.Keys(spec.Capacity)) {
		errs = append(errs, ValidatePositiveQuantity(spec.Capacity[name], p.Child("capacity").Key(string(name)))...)
	}

	if r := spec.PersistentVolumeReclaimPolicy; r != "" && !slices.Contains(supportedReclaimPolicies, r) {
		errs = append(errs, field.NotSupported(p.Child("persistentVolumeReclaimPolicy"), r, supportedReclaimPolicies))
	}
	if a := spec.NodeAffinity; a != nil {
		if a.Required == nil {
			errs = append(errs, field.Required(p.Child("nodeAffinity", "required"), "must specify required node constraints"))
		} else {
			errs = append(errs, node.ValidateSelector(a.Required, p.Child("nodeAffinity", "required"))...)
		}
	}

	errs = append(errs, ValidateSource(spec, pv.Name, false, p)...)
	if spec.HostPath != nil && path.Clean(spec.HostPath.Path) == "/" && spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		errs = append(errs, field.Forbidden(p.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	if spec.StorageClassName != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.StorageClassName, false) {
			errs = append(errs, field.Invalid(p.Child("storageClassName"), spec.StorageClassName, msg))
		}
	}
	if m := spec.VolumeMode; m != nil && !slices.Contains(SupportedVolumeModes, *m) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *m, SupportedVolumeModes))
	}
	if c := spec.VolumeAttributesClassName; c != nil { // VolumeAttributesClass is GA
		if *c == "" {
			errs = append(errs, field.Required(p.Child("volumeAttributesClassName"), "an empty string is disallowed"))
		} else {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*c, false) {
				errs = append(errs, field.Invalid(p.Child("volumeAttributesClassName"), *c, msg))
			}
		}
		if spec.CSI == nil {
			errs = append(errs, field.Required(p.Child("csi"), "has to be specified when using volumeAttributesClassName"))
		}
	}
	return append(errs, validateMountOptionAnnotation(pv)...)
}

// validateMountOptionAnnotation is upstream's checkMountOption (its volume
// plugins' check): the deprecated mount options annotation only on the
// volume types that take mount options.
func validateMountOptionAnnotation(pv *corev1.PersistentVolume) field.ErrorList {
	s := &pv.Spec
	if s.GCEPersistentDisk != nil || s.AWSElasticBlockStore != nil || s.Glusterfs != nil || s.NFS != nil || s.RBD != nil ||
		s.Quobyte != nil || s.ISCSI != nil || s.Cinder != nil || s.CephFS != nil || s.AzureFile != nil ||
		s.VsphereVolume != nil || s.AzureDisk != nil || s.PhotonPersistentDisk != nil {
		return nil
	}
	if _, ok := pv.Annotations[corev1.MountOptionAnnotation]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath("metadata").Child("annotations", corev1.MountOptionAnnotation), "may not specify mount options for this volume type")}
	}
	return nil
}

// validateUpdate is upstream's ValidatePersistentVolumeUpdate beyond the
// create rules: the volume source, volume mode and (once set) node
// affinity are immutable. The odd paths ("spec.persistentvolumesource",
// "volumeMode", "nodeAffinity") are upstream's.
func validateUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	var errs field.ErrorList
	source := pv.Spec.PersistentVolumeSource
	// A CSI volume may gain a controllerExpandSecretRef.
	if old.Spec.CSI != nil && old.Spec.CSI.ControllerExpandSecretRef == nil && source.CSI != nil && source.CSI.ControllerExpandSecretRef != nil {
		csi := *source.CSI
		csi.ControllerExpandSecretRef = nil
		source.CSI = &csi
	}
	if !apiequality.Semantic.DeepEqual(source, old.Spec.PersistentVolumeSource) {
		diff := registry.Diff(old.Spec.PersistentVolumeSource, source)
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"), fmt.Sprintf("spec.persistentvolumesource is immutable after creation\n%v", diff)))
	}
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil {
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(pv.Spec.NodeAffinity, old.Spec.NodeAffinity, field.NewPath("nodeAffinity"))...)
	}
	return errs
}

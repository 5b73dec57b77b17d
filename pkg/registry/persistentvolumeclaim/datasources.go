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

package persistentvolumeclaim

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// keepDataSourceCompatible is upstream's EnforceDataSourceBackwardsCompatibility
// (k8s.io/kubernetes' pkg/api/persistentvolumeclaim): a new claim whose
// client sets only dataSource, to something other than a claim or a
// volume snapshot, has it dropped, as before data source references.
func keepDataSourceCompatible(spec, old *corev1.PersistentVolumeClaimSpec) {
	if old != nil && (old.DataSource != nil || old.DataSourceRef != nil) || spec.DataSourceRef != nil || spec.DataSource == nil {
		return
	}
	group, kind := ptr.Deref(spec.DataSource.APIGroup, ""), spec.DataSource.Kind
	if !(group == "" && kind == "PersistentVolumeClaim" || group == "snapshot.storage.k8s.io" && kind == "VolumeSnapshot") {
		spec.DataSource = nil
	}
}

// normalizeDataSources is upstream's NormalizeDataSources: dataSource and
// dataSourceRef, where one is set (and the reference names no other
// namespace), copied to the other.
func normalizeDataSources(spec *corev1.PersistentVolumeClaimSpec) {
	switch ds, ref := spec.DataSource, spec.DataSourceRef; {
	case ds != nil && ref == nil:
		spec.DataSourceRef = &corev1.TypedObjectReference{APIGroup: copyOf(ds.APIGroup), Kind: ds.Kind, Name: ds.Name}
	case ref != nil && ds == nil && ptr.Deref(ref.Namespace, "") == "":
		spec.DataSource = &corev1.TypedLocalObjectReference{APIGroup: copyOf(ref.APIGroup), Kind: ref.Kind, Name: ref.Name}
	}
}

func copyOf(s *string) *string {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

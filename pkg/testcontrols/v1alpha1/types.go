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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the group of the test controls.
const GroupName = "testcontrol.miniapiserver.io"

// SchemeGroupVersion is the group and version served.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// AddToScheme registers the kinds of the group in a scheme.
func AddToScheme(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Checkpoint{}, &CheckpointList{}, &Restore{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// Checkpoint is the stored state at one moment (an etcd revision, held
// back from compaction while the checkpoint exists), which its restore
// subresource puts back.
type Checkpoint struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Status is set by the server.
	// +optional
	Status CheckpointStatus `json:"status,omitempty"`
}

// CheckpointStatus says what a checkpoint holds.
type CheckpointStatus struct {
	// ResourceVersion is the resourceVersion of the stored state the
	// checkpoint holds.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// CheckpointList is a list of Checkpoints.
type CheckpointList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Checkpoint `json:"items"`
}

// Restore is what a POST to a checkpoint's restore subresource sends
// (empty but for its kind) and answers with (its status).
type Restore struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Status is what the restore wrote.
	// +optional
	Status RestoreStatus `json:"status,omitempty"`
}

// RestoreStatus counts what a restore wrote.
type RestoreStatus struct {
	// Deleted counts the objects made since the checkpoint, deleted.
	Deleted int64 `json:"deleted"`
	// Recreated counts the objects deleted since the checkpoint, put back.
	Recreated int64 `json:"recreated"`
	// Reverted counts the objects changed since the checkpoint, put back
	// as they were.
	Reverted int64 `json:"reverted"`
	// ResourceVersion is the resourceVersion once the restore is written.
	ResourceVersion string `json:"resourceVersion"`
}

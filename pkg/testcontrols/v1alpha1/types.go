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
	scheme.AddKnownTypes(SchemeGroupVersion, &Checkpoint{}, &CheckpointList{}, &Restore{}, &FaultRule{}, &FaultRuleList{})
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

// FaultRule makes the server fail the requests it matches, as its action
// says, from when it is made until it is deleted (or has hit Count
// requests). It never matches requests for the test controls themselves.
type FaultRule struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              FaultRuleSpec `json:"spec"`
	// Status is set by the server.
	// +optional
	Status FaultRuleStatus `json:"status,omitempty"`
}

// FaultRuleSpec is which requests a rule hits, how often, and what it does
// to them: exactly one of Error, Delay, EndWatch, DropConnection and
// WatchCacheLag.
type FaultRuleSpec struct {
	// Match says which requests the rule hits.
	Match FaultMatch `json:"match"`
	// Count is how many requests the rule hits at most; unset or 0: as
	// many as match until it is deleted.
	// +optional
	Count int64 `json:"count,omitempty"`
	// Probability is the chance, from 0 to 1, that a matching request is
	// hit; unset: 1.
	// +optional
	Probability *float64 `json:"probability,omitempty"`

	// Error answers the request with an error status instead of serving it.
	// +optional
	Error *FaultError `json:"error,omitempty"`
	// Delay holds the request before and after its storage call (for a
	// write: before and after the write is stored).
	// +optional
	Delay *FaultDelay `json:"delay,omitempty"`
	// EndWatch ends the matching watches open when the rule is made.
	// +optional
	EndWatch *FaultEndWatch `json:"endWatch,omitempty"`
	// DropConnection aborts the request: the client sees its connection
	// (HTTP/1.1) or stream (HTTP/2) reset, with no response.
	// +optional
	DropConnection bool `json:"dropConnection,omitempty"`
	// WatchCacheLag delays every event the matching resources' watch
	// caches get from etcd by this much: their reads and watches fall
	// behind etcd. Only match.resources may be set with it.
	// +optional
	WatchCacheLag *metav1.Duration `json:"watchCacheLag,omitempty"`
}

// FaultMatch selects requests: a request matches when each list that is
// set has an entry that matches it.
type FaultMatch struct {
	// Verbs are request verbs: get, list, watch, create, update, patch,
	// delete, deletecollection, or "*".
	// +optional
	Verbs []string `json:"verbs,omitempty"`
	// Resources are resources as kubectl names them, with their group and
	// subresource if any: "pods", "pods/status", "deployments.apps",
	// "deployments.apps/scale", "pods/*" (any subresource), "*" (any
	// resource, any subresource). Required.
	Resources []string `json:"resources"`
	// Namespaces and Names are the namespaces and names of the objects.
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// +optional
	Names []string `json:"names,omitempty"`
	// Users and Groups are the requesting user's name and groups (after
	// impersonation): a request matches if its user is in Users or in one
	// of Groups, when either is set.
	// +optional
	Users []string `json:"users,omitempty"`
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// FaultError is the status a request is answered with.
type FaultError struct {
	// Code is the HTTP status code, 400 to 599. A watch hit with 410 gets
	// upstream's answer to a too old resourceVersion: a 200 stream with
	// one ERROR event.
	Code int32 `json:"code"`
	// Message is the status's message; unset: upstream's for the code.
	// +optional
	Message string `json:"message,omitempty"`
	// RetryAfterSeconds sets the Retry-After header and the status's
	// details (429 and 5xx).
	// +optional
	RetryAfterSeconds int32 `json:"retryAfterSeconds,omitempty"`
}

// FaultDelay is how long a request is held.
type FaultDelay struct {
	// Before is held before the request's storage call.
	// +optional
	Before metav1.Duration `json:"before,omitempty"`
	// After is held after the storage call returns (for a write: once it
	// is stored), before the answer.
	// +optional
	After metav1.Duration `json:"after,omitempty"`
}

// FaultEndWatch says how a watch ends.
type FaultEndWatch struct {
	// Bookmark sends a last BOOKMARK event at the watch cache's
	// resourceVersion first, to watches that allow bookmarks, as a server
	// does when it shuts down.
	// +optional
	Bookmark bool `json:"bookmark,omitempty"`
}

// FaultRuleStatus says what a rule did.
type FaultRuleStatus struct {
	// Hits counts the requests (for WatchCacheLag: the events) the rule
	// hit.
	Hits int64 `json:"hits"`
}

// FaultRuleList is a list of FaultRules.
type FaultRuleList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FaultRule `json:"items"`
}

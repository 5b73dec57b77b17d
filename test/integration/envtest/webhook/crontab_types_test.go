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

package webhook

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// The api/v1 package of a kubebuilder project, with the deepcopy functions
// controller-gen would generate written out.

var (
	GroupVersion  = schema.GroupVersion{Group: "stable.example.com", Version: "v1"}
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	AddToScheme   = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&CronTab{}, &CronTabList{})
}

// CronTabSpec is the desired state of a CronTab.
type CronTabSpec struct {
	CronSpec    string `json:"cronSpec,omitempty"`
	Image       string `json:"image"`
	Replicas    *int32 `json:"replicas,omitempty"`
	MinReplicas *int32 `json:"minReplicas,omitempty"`
}

// CronTabStatus is the observed state of a CronTab.
type CronTabStatus struct {
	Replicas int32 `json:"replicas,omitempty"`
}

// CronTab runs an image on a schedule.
type CronTab struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CronTabSpec   `json:"spec,omitempty"`
	Status            CronTabStatus `json:"status,omitempty"`
}

// CronTabList is a list of CronTabs.
type CronTabList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronTab `json:"items"`
}

func (in *CronTab) DeepCopyInto(out *CronTab) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Spec.Replicas != nil {
		out.Spec.Replicas = new(*in.Spec.Replicas)
	}
	if in.Spec.MinReplicas != nil {
		out.Spec.MinReplicas = new(*in.Spec.MinReplicas)
	}
}

func (in *CronTab) DeepCopy() *CronTab {
	if in == nil {
		return nil
	}
	out := new(CronTab)
	in.DeepCopyInto(out)
	return out
}

func (in *CronTab) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *CronTabList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := &CronTabList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]CronTab, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

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

// Package nodedeclaredfeatures is kube-apiserver's NodeDeclaredFeatureValidator
// admission plugin (NodeDeclaredFeatures, GA in 1.37), ported from
// k8s.io/kubernetes (plugin/pkg/admission/nodedeclaredfeatures) on
// k8s.io/component-helpers' framework: an update of a pod on a node that
// needs features the node does not declare in status.declaredFeatures
// (resizing a non-sidecar init container, pod-level resources or
// memory-backed volumes) is refused. Its ResourceSlice check, behind
// DRANodeAllocatableResources (alpha, off), is not ported.
package nodedeclaredfeatures

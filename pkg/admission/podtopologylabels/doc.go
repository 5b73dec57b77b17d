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

// Package podtopologylabels is kube-apiserver's PodTopologyLabels admission
// plugin (PodTopologyLabelsAdmission, beta and on in 1.37), ported from
// k8s.io/kubernetes (plugin/pkg/admission/podtopologylabels): a pod created
// on a node, or bound to one, gets the node's topology.kubernetes.io/zone
// and region labels.
package podtopologylabels

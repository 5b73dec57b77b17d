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

// Package resourcequota is what kube-apiserver gives k8s.io/apiserver's
// ResourceQuota admission plugin: the quota configuration of its
// evaluators, ported from k8s.io/kubernetes pkg/quota/v1/evaluator/core
// and pkg/quota/v1/install onto the v1 types (pods, services,
// persistentvolumeclaims and resource.k8s.io's resourceclaims, and the
// object counts of configmaps, secrets,
// replicationcontrollers and resourcequotas under their legacy names).
// The in-server quota controller computes usage with the same evaluators.
package resourcequota

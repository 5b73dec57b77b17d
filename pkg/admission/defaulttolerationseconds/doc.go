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

// Package defaulttolerationseconds is kube-apiserver's
// DefaultTolerationSeconds admission plugin (k8s.io/kubernetes
// plugin/pkg/admission/defaulttolerationseconds) over the v1 Pod this
// server stores: a Pod created or updated without a toleration of the
// not-ready or unreachable NoExecute taints gets one for 300 seconds (or
// kube-apiserver's --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds), so that a node going away
// evicts its pods after that long, not at once.
package defaulttolerationseconds

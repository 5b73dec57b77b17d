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

// Package runtimeclass is kube-apiserver's RuntimeClass admission plugin,
// ported from k8s.io/kubernetes (plugin/pkg/admission/runtimeclass): a
// created Pod naming a RuntimeClass gets the class's overhead and its
// scheduling's node selector and tolerations; a pod whose overhead is not
// its class's, or that names no class but sets an overhead, is refused.
// Upstream's messages, byte for byte.
package runtimeclass

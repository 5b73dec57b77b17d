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

// Package defaultclass is kube-apiserver's DefaultStorageClass and
// DefaultIngressClass admission plugins, ported from k8s.io/kubernetes
// (plugin/pkg/admission/storage/storageclass/setdefault and
// network/defaultingressclass): a claim or an ingress created without a
// class gets the default one, the newest of those annotated as default
// (by name when they are as new).
package defaultclass

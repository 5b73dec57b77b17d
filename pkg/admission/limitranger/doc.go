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

// Package limitranger holds kube-apiserver's LimitRanger admission plugin,
// ported from k8s.io/kubernetes plugin/pkg/admission/limitranger onto the
// v1 types: a namespace's LimitRanges default the requests and limits of
// a created Pod's containers, and bound (min, max, maxLimitRequestRatio)
// those of its containers, of the Pod as a whole, and the storage a
// PersistentVolumeClaim requests.
package limitranger

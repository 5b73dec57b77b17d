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

// Package pod serves core/v1 pods and their subresources: status, binding
// and eviction from storage; log, exec, attach and portforward from the
// kubelet of the pod's node, reached as kube-apiserver's kubelet client
// reaches it (Kubelets). There is no kubelet here: pods stay Pending unless
// a client (a kubelet, kwok) writes their status, and are deleted at once
// (as upstream deletes pods no node has been assigned).
package pod

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

// Package podsecurity is kube-apiserver's PodSecurity admission plugin
// (Pod Security Admission): the pod-security.kubernetes.io/* labels of a
// namespace enforce, audit and warn about the Pod Security Standards of
// the pods in it. It wraps k8s.io/pod-security-admission, which does the
// work, as k8s.io/kubernetes's plugin does; the objects here are already
// of the v1 API it reads.
package podsecurity

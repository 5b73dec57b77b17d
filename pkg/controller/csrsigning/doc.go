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

// Package csrsigning signs the approved CertificateSigningRequests of the
// kubernetes.io signers kube-controller-manager's csrsigning controller
// signs (kube-apiserver-client, kube-apiserver-client-kubelet,
// kubelet-serving) with one CA, as that controller does with
// --cluster-signing-cert-file: the same checks, subject, usages and
// durations, the certificate written through the status subresource.
package csrsigning

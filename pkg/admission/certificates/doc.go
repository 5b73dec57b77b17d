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

// Package certificates holds kube-apiserver's admission plugins of
// certificates.k8s.io, ported from k8s.io/kubernetes
// plugin/pkg/admission/certificates: CertificateApproval and
// CertificateSigning (approving or signing a CertificateSigningRequest
// takes the approve or sign verb on its signer), ClusterTrustBundleAttest
// (a ClusterTrustBundle of a signer takes the attest verb on it) and
// CertificateSubjectRestriction (no kube-apiserver client certificate
// for system:masters).
package certificates

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

// Package serviceaccount is kube-apiserver's ServiceAccount admission
// plugin (k8s.io/kubernetes plugin/pkg/admission/serviceaccount) over the
// v1 Pod this server stores: a Pod created without a service account gets
// "default", the account must exist, its token, the cluster's CA and the
// namespace are mounted as a projected volume unless automounting is off,
// and its image pull secrets are copied to a Pod that has none.
package serviceaccount

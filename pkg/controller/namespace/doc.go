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

// Package namespace empties each namespace being deleted, deleting the
// objects of every namespaced resource the server serves (custom resources
// included) through the metadata client, then removes the "kubernetes"
// finalizer, which deletes the namespace: kube-controller-manager's
// namespace controller, in small. pkg/server runs it on its loopback
// client, and tells it which resources are served now.
package namespace

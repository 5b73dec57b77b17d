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

// Package dra serves resource.k8s.io/v1, dynamic resource allocation:
// device classes, device taint rules (with status), resource claims (with
// status), resource claim templates and resource slices, with upstream's
// strategies (k8s.io/kubernetes pkg/registry/resource), field selectors
// and tables. Validation is upstream's, handwritten and declarative, in its
// order and words; device selectors' CEL expressions are compiled as
// upstream compiles them, without its cost estimate, and a claim's admin
// access is not checked against its namespace's label.
package dra

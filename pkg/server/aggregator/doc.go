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

// Package aggregator builds kube-aggregator's server in front of the core
// server, as kube-apiserver does (New): the apiregistration.k8s.io API,
// the proxy to the extension API servers that APIServices name, their
// availability conditions and discovery, and the local APIServices of the
// built-in and CRD groups, registered as kube-apiserver registers them.
// pkg/server calls it; it imports neither pkg/server nor pkg/testserver.
package aggregator

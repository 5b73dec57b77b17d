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

// Package admissionchain assembles the server's admission chain: the
// plugins it has and their order (NewOptions), the settings they get
// besides k8s.io/apiserver's initializer, and the chain itself, set in the
// generic config at once and built once the informers its plugins read
// have synced (Add, Deferred). It also maps the Services that webhooks
// refer to onto local addresses (ServiceAddresses), there being no
// Service network. pkg/server calls it; it imports neither pkg/server nor
// pkg/testserver.
package admissionchain

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

// Package apis installs the built-in APIs in the server's generic API
// server: core/v1 under /api and the other groups under /apis
// (install.go, groups.go), each resource's storage made by its
// pkg/registry package and wired to the others it needs through their
// typed constructors (resources.go), the reviews and token requests
// answering with the server's Identity (identity.go). pkg/server calls
// Install; this package imports neither pkg/server nor pkg/testserver.
package apis

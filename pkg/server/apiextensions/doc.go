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

// Package apiextensions builds the apiextensions-apiserver, which serves
// CustomResourceDefinitions and custom resources as the core server's
// delegate (New), and has the core server serve its OpenAPI (Server.Serve,
// Server.OpenAPI); its groups reach discovery through the aggregator. CustomResources lists the
// namespaced custom resources for the namespace controller. pkg/server
// calls it; it imports neither pkg/server nor pkg/testserver.
package apiextensions

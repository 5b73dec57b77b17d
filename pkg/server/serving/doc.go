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

// Package serving is the server's HTTP plumbing around k8s.io/apiserver's
// handlers: a listener that closes idle connections once requests have
// drained, the watch handlers' drain, gzip of responses, each request's
// logger, and an in-process transport to the handler chain.
package serving

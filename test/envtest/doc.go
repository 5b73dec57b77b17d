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

// Package envtest is a kubebuilder-style Ginkgo suite, in a module of its
// own, that runs stock controller-runtime envtest on the API server and etcd
// in $KUBEBUILDER_ASSETS: kube-apiserver's own, or miniapiserver's
// (miniapiserver envtest-assets DIR). The suite passes unchanged on both, at
// controller-runtime v0.25 (go.mod) and v0.23 (go.v0.23.mod); run.sh runs
// it all four ways.
//
// The suite installs config/crd (a CronJob kind, v1 the hub, v2 a spoke
// converted by a conversion webhook) and config/webhook (a defaulting and a
// validating webhook), serves the webhooks from a manager that also runs a
// reconciler owning Deployments, and drives the API server with
// controller-runtime's client, client-go, envtest's users and kubectl.
//
// Set ENVTEST_LOG_DIR to keep the API server's and etcd's output there.
package envtest

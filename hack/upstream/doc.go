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

// Package upstream pins the upstream binaries: the servers hack/bench compares
// miniapiserver with, kube-apiserver from k8s.io/kubernetes (a tool of this
// module) and etcd (./etcd), and the controllers hack/cluster.sh runs on it,
// kube-controller-manager and kube-scheduler (tools too), at the k8s.io and
// etcd versions the root module uses. It is a module of its own so that the
// root module's build, vet and go.mod never see k8s.io/kubernetes;
// hack/upstream/build.sh builds the binaries; ./kubegates writes the
// feature gates kube-apiserver takes, for the binary to take them too;
// ./validation prints upstream's messages for the validation cases of
// the registry packages (pods, services, workloads).
package upstream

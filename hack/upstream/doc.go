// Package upstream pins the upstream servers hack/bench compares miniapiserver
// with: kube-apiserver from k8s.io/kubernetes (a tool of this module) and etcd
// (./etcd), at the k8s.io and etcd versions the root module uses. It is a
// module of its own so that the root module's build, vet and go.mod never see
// k8s.io/kubernetes; hack/upstream/build.sh builds both binaries.
package upstream

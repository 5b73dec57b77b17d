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

// Package driver runs the servers that hack/bench's benchmarks measure:
// miniapiserver, and kube-apiserver with its own etcd as
// hack/upstream/build.sh builds them from source, each a process (or two)
// on free loopback ports and a data dir of its own (Env, Server). It reads
// what the benchmarks report from the servers themselves: bytes allocated,
// heap in use after forced GCs, CPU time, and the LISTs each one's watch
// cache served (metrics.go); and it holds the objects and listings that
// several benchmarks share (objects.go, crds.go, list.go).
package driver

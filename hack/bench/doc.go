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

// Package bench holds miniapiserver's benchmarks, Go benchmarks that each
// run on miniapiserver and, with -upstream, on kube-apiserver with its own
// etcd, built from source by hack/upstream/build.sh: the sub-benchmark
// server=mini or server=upstream ends every name, so benchstat -col
// /server compares the two. Each benchmark's doc comment says what it
// measures; package driver starts the servers and reads their metrics;
// cmd/benchreport turns the samples into the README's headline table and
// docs/benchmarks.md.
//
// It is a module of its own, which the server's module does not build.
// make bench-upstream runs every benchmark in rounds (hack/bench/rounds.sh)
// and compares; to run some by hand, from hack/bench:
//
//	go test -run '^$' -bench 'List|StartToReady' -args \
//		-server $PWD/../../bin/miniapiserver -upstream "$(dirname "$(../upstream/build.sh | head -n1)")"
//	go test -run '^$' -bench 'WatchFanout' -benchtime 1x -args -watchers 50 -events 50
//
// Sizes are flags (-objects, -crs, -watchers, ...; go test -args -h lists
// them). Every server a benchmark starts is stopped, and every data dir
// removed, when it ends.
package bench

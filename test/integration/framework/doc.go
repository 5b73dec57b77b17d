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

// Package framework is what the integration test packages under
// test/integration share: starting in-process servers on either storage
// path (Start, ForEachStoragePath), an etcd of their own and its
// compaction (ExternalEtcd, CompactEtcd), the real kubectl and miniapiserver
// binaries, built once per test binary (Kubectl, ServerBinaryPath), the
// process's metrics (ScrapeMetrics, SumSamples, RoutesOf), watch events
// (NextEvent, ExpectEvents), configmaps and objects of every served
// resource (CreateConfigMaps, ServedResources) and polling (WaitUntil,
// Poll). Each package's TestMain calls Main.
//
// The servers of a test binary share its process: feature gates,
// environment variables, package variables, klog and the metrics registry.
// A test that changes or reads them as a whole is serial (no t.Parallel),
// as one that measures time or reuses a port; the others are parallel.
package framework

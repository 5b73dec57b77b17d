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

// Package testserver starts a miniapiserver inside a Go test: embedded etcd in
// t.TempDir(), HTTPS on a free loopback port, stopped by t.Cleanup.
//
//	func TestMyController(t *testing.T) {
//		s := testserver.Start(t)
//		client := kubernetes.NewForConfigOrDie(s.Config)
//		// ... client.CoreV1().ConfigMaps("default").Create(...)
//	}
//
// Options adjust the server before it starts:
//
//	s := testserver.Start(t, func(o *server.Options) { o.EtcdCompactionInterval = 0 })
//
// WithCRDs installs CustomResourceDefinitions from manifests and returns
// once they are served; WithGarbageCollector runs a garbage collector:
//
//	s := testserver.Start(t, testserver.WithCRDs("../config/crd/bases"), testserver.WithGarbageCollector())
//
// Checkpoint and Restore reset one server shared by many tests:
//
//	s.Checkpoint(ctx, "clean") // once
//	s.Restore(ctx, "clean")    // after each test
package testserver

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

// Package envtest starts a miniapiserver behind the shape of
// controller-runtime's envtest.Environment (v0.25), so that a test suite
// written for envtest runs on it with one import changed:
//
//	import "github.com/miniapiserver/miniapiserver/pkg/envtest" // was "sigs.k8s.io/controller-runtime/pkg/envtest"
//
// A kubebuilder scaffold's suite_test.go then runs as it is:
//
//	testEnv = &envtest.Environment{
//		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
//		ErrorIfCRDPathMissing: true,
//	}
//	cfg, err = testEnv.Start() // in process: no binaries, no download
//	...
//	err = testEnv.Stop()
//
// The fields that locate or download envtest's binaries, and its control
// plane timeouts and output, are accepted and have nothing to do: there is
// no binary. See Environment for what differs.
package envtest

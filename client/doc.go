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

// Package testcontrol is a client of miniapiserver's test controls
// (testcontrol.miniapiserver.io/v1alpha1: checkpoints of the stored state
// and their restore, and fault rules), with nothing but the standard library, so that a
// suite at any controller-runtime or client-go version, on stock envtest
// with miniapiserver's assets, can use it.
//
// With client-go, the HTTP client of a rest.Config carries its
// credentials:
//
//	hc, _ := rest.HTTPClientFor(cfg)
//	tc := testcontrol.New(cfg.Host, hc)
//	tc.Checkpoint(ctx, "clean")          // once
//	status, err := tc.Restore(ctx, "clean") // after each test
//
//	// The controller's updates get a 409 twice.
//	remove, err := tc.InjectFault(ctx, "conflicts", testcontrol.FaultRule{
//		Match: testcontrol.FaultMatch{Verbs: []string{"update"}, Resources: []string{"deployments.apps"},
//			Users: []string{"system:serviceaccount:system:my-controller"}},
//		Count: 2, Error: &testcontrol.FaultError{Code: 409}})
//	defer remove(ctx)
//
// The server serves the group with --runtime-config=testcontrol.miniapiserver.io/v1alpha1=true
// (as kube-apiserver) or --test-controls (as miniapiserver); in-process
// servers always do.
package testcontrol

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

// Package controls serves the server's test controls
// (Options.TestControls): checkpoints of its etcd keys, restored as
// ordinary writes, and fault rules, both of pkg/testcontrols, as
// testcontrol.miniapiserver.io/v1alpha1 (Start, Controls.Install). It
// registers that group's kinds in api.Scheme whether or not they are
// served. pkg/server calls it; it imports neither pkg/server nor
// pkg/testserver.
package controls

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

package kubegates

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/component-base/featuregate"
)

// TestRegister: a gate gets every gate kube-apiserver knows but those it
// has (kept as they are); client-go's features follow it from then on;
// the gates nothing here reads are k8s.io/kubernetes' own, and only those
// set away from their defaults are reported.
func TestRegister(t *testing.T) {
	previous := clientfeatures.FeatureGates()
	t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(previous) })
	gate := featuregate.NewVersionedFeatureGate(version.MustParse("1.37"))
	// As k8s.io/apiserver's gates are the binary's before it registers.
	own := featuregate.VersionedSpecs{{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha}}
	if err := gate.AddVersioned(map[featuregate.Feature]featuregate.VersionedSpecs{"APIResponseCompression": own}); err != nil {
		t.Fatal(err)
	}
	inert, err := register(gate)
	if err != nil {
		t.Fatal(err)
	}
	all := gate.GetAllVersioned()
	for name := range gates() {
		if _, ok := all[name]; !ok {
			t.Errorf("kube-apiserver's gate %s is not registered", name)
		}
	}
	if got := all["APIResponseCompression"]; len(got) != 1 || got[0].Default {
		t.Errorf("the gate's own APIResponseCompression: got %v, want it kept", got)
	}
	for name, want := range map[featuregate.Feature]bool{"PodCertificateRequest": true, "APIResponseCompression": false, "WatchListClient": false} {
		if got := slices.Contains(inert, name); got != want {
			t.Errorf("%s inert: got %t, want %t", name, got, want)
		}
	}

	for _, on := range []bool{false, true} {
		if err := gate.SetFromMap(map[string]bool{"WatchListClient": on}); err != nil {
			t.Fatal(err)
		}
		if got := clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient); got != on {
			t.Errorf("client-go's WatchListClient with the gate's %t: got %t", on, got)
		}
	}

	// CPUManagerPolicyAlphaOptions=false is its default.
	if err := gate.SetFromMap(map[string]bool{"PodCertificateRequest": false, "CPUManagerPolicyAlphaOptions": false}); err != nil {
		t.Fatal(err)
	}
	if got, want := Changed(gate, inert), []string{"PodCertificateRequest=false"}; !slices.Equal(got, want) {
		t.Errorf("changed: got %q, want %q", got, want)
	}
}

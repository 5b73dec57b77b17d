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

package features

import (
	"fmt"
	"strings"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
)

func TestDefaultsAndParsing(t *testing.T) {
	for f := range specs {
		if !Enabled(f) {
			t.Errorf("%s: got disabled by default, want enabled", f)
		}
	}
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, PaginationFromCache, false)
	if Enabled(PaginationFromCache) {
		t.Errorf("PaginationFromCache: got enabled after disabling it")
	}
}

func TestUnknownGateIsAnError(t *testing.T) {
	gate := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	if err := gate.Set("NoSuchGate=true"); err == nil {
		t.Fatal("got nil error for an unknown gate, want an error")
	}
	gate = utilfeature.DefaultMutableFeatureGate.DeepCopy()
	if err := gate.Set("APIListChunking=false,ConsistentWatchList=false"); err != nil {
		t.Fatalf("got %v, want our gates to parse", err)
	}
	if gate.Enabled(APIListChunking) {
		t.Error("APIListChunking: got enabled after APIListChunking=false")
	}
}

func TestHoldSetsUpstreamsGatesFromOurs(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("ours=%t", on), func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, ConsistentWatchList, on)
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, PaginationFromCache, on)
			// Restore upstream's gates too once the test ends.
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, upstreamWatchList, utilfeature.DefaultFeatureGate.Enabled(upstreamWatchList))
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, upstreamListFromCacheSnapshot, utilfeature.DefaultFeatureGate.Enabled(upstreamListFromCacheSnapshot))
			release, err := Hold()
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			for _, f := range []featuregate.Feature{upstreamWatchList, upstreamListFromCacheSnapshot} {
				if got := utilfeature.DefaultFeatureGate.Enabled(f); got != on {
					t.Errorf("%s: got %t, want %t", f, got, on)
				}
			}
		})
	}
}

func TestHoldRefusesOtherGatesWhileHeld(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, PaginationFromCache, true)
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, upstreamListFromCacheSnapshot, utilfeature.DefaultFeatureGate.Enabled(upstreamListFromCacheSnapshot))
	first, err := Hold()
	if err != nil {
		t.Fatal(err)
	}
	// The same gates: a second server may run beside the first.
	second, err := Hold()
	if err != nil {
		t.Fatalf("the same gates: %v, want no error", err)
	}
	second()

	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, PaginationFromCache, false)
	_, err = Hold()
	want := "feature gates PaginationFromCache=false (a running server has true): another server in this process runs with other gates"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("other gates while the first server runs: got %v, want %q", err, want)
	}
	if !utilfeature.DefaultFeatureGate.Enabled(upstreamListFromCacheSnapshot) {
		t.Error("the refused server changed upstream's ListFromCacheSnapshot under the running one")
	}

	first()
	first() // release is idempotent: it must not release another server's hold
	third, err := Hold()
	if err != nil {
		t.Fatalf("other gates once the first server stopped: %v, want no error", err)
	}
	third()
	if utilfeature.DefaultFeatureGate.Enabled(upstreamListFromCacheSnapshot) {
		t.Error("upstream's ListFromCacheSnapshot still on after a server was built with PaginationFromCache off")
	}
}

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

func TestSyncUpstreamFollowsOurGates(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("ours=%t", on), func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, ConsistentWatchList, on)
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, PaginationFromCache, on)
			// Restore upstream's gates too once the test ends.
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, upstreamWatchList, utilfeature.DefaultFeatureGate.Enabled(upstreamWatchList))
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, upstreamListFromCacheSnapshot, utilfeature.DefaultFeatureGate.Enabled(upstreamListFromCacheSnapshot))
			if err := SyncUpstream(); err != nil {
				t.Fatal(err)
			}
			for _, f := range []featuregate.Feature{upstreamWatchList, upstreamListFromCacheSnapshot} {
				if got := utilfeature.DefaultFeatureGate.Enabled(f); got != on {
					t.Errorf("%s: got %t, want %t", f, got, on)
				}
			}
		})
	}
}

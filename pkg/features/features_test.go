package features

import (
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
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

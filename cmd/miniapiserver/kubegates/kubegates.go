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

// Package kubegates makes the binary's --feature-gates take every gate
// kube-apiserver takes, as a drop-in kube-apiserver must: harnesses pass
// k8s.io/kubernetes' gates (kwokctl's --kube-feature-gates, an envtest
// suite's flags), and a gate kube-apiserver knows must not stop the
// server. The gates and their specs are kube-apiserver's, generated from
// k8s.io/kubernetes (the zz_generated files, by hack/upstream/kubegates).
package kubegates

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/component-base/featuregate"
)

// Register registers kube-apiserver's gates on the process-wide gate (see
// register), once: later calls return the first's result.
var Register = sync.OnceValues(func() ([]featuregate.Feature, error) {
	return register(utilfeature.DefaultMutableFeatureGate)
})

// Warning is the warning for the inert gates set away from their
// defaults on the process-wide gate ("" if none is).
func Warning(inert []featuregate.Feature) string {
	changed := Changed(utilfeature.DefaultMutableFeatureGate, inert)
	if len(changed) == 0 {
		return ""
	}
	return fmt.Sprintf("Feature gates %s are kube-apiserver's, not miniapiserver's: it serves as with their defaults", strings.Join(changed, ","))
}

// register adds to gate the gates kube-apiserver knows that gate does not
// (k8s.io/apiserver's, apiextensions-apiserver's and miniapiserver's own it
// has), and makes client-go's features follow gate instead of KUBE_FEATURE_*
// variables, as kube-apiserver does: the server's own clients honour
// --feature-gates=WatchListClient=false. It returns the gates it added that
// nothing in this server reads: k8s.io/kubernetes' own, whose code
// miniapiserver does not run (its registries behave as with their defaults).
func register(gate featuregate.MutableVersionedFeatureGate) (inert []featuregate.Feature, err error) {
	known := gate.GetAllVersioned()
	var client clientNames
	if err := clientfeatures.AddVersionedFeaturesToExistingFeatureGates(&client); err != nil {
		return nil, err
	}
	added := map[featuregate.Feature]featuregate.VersionedSpecs{}
	for name, specs := range gates() {
		if _, ok := known[name]; ok {
			continue
		}
		added[name] = specs
		if !client[name] {
			inert = append(inert, name)
		}
	}
	for name := range client {
		if _, ok := known[name]; !ok && added[name] == nil {
			return nil, fmt.Errorf("client-go's feature gate %s is not kube-apiserver %s's: regenerate the zz_generated files", name, kubeAPIServerVersion)
		}
	}
	if err := gate.AddVersioned(added); err != nil {
		return nil, err
	}
	clientfeatures.ReplaceFeatureGates(clientGates{gate})
	slices.Sort(inert)
	return inert, nil
}

// gates are kube-apiserver's gates with their specs: the generated maps,
// one per maturity of a gate's latest spec.
func gates() map[featuregate.Feature]featuregate.VersionedSpecs {
	all := map[featuregate.Feature]featuregate.VersionedSpecs{}
	for _, m := range []map[featuregate.Feature]featuregate.VersionedSpecs{alphaGates, betaGates, gaGates, deprecatedGates} {
		maps.Copy(all, m)
	}
	return all
}

// Changed returns NAME=VALUE for each of names set away from its default.
func Changed(gate featuregate.MutableFeatureGate, names []featuregate.Feature) []string {
	specs := gate.GetAll()
	var changed []string
	for _, name := range names {
		if on := gate.Enabled(name); on != specs[name].Default {
			changed = append(changed, fmt.Sprintf("%s=%t", name, on))
		}
	}
	return changed
}

// clientNames records the names of client-go's features.
type clientNames map[featuregate.Feature]bool

func (c *clientNames) AddVersioned(in map[clientfeatures.Feature]clientfeatures.VersionedSpecs) error {
	if *c == nil {
		*c = clientNames{}
	}
	for name := range maps.Keys(in) {
		(*c)[featuregate.Feature(name)] = true
	}
	return nil
}

// clientGates answers client-go's features from a feature gate.
type clientGates struct{ gate featuregate.FeatureGate }

func (c clientGates) Enabled(name clientfeatures.Feature) bool {
	return c.gate.Enabled(featuregate.Feature(name))
}

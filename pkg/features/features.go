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
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/version"
	apiserverfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// Gates, alphabetised. Each switches one list/watch enhancement so the etcd
// path and the cache path can be compared side by side.
const (
	// APIListChunking (KEP-365): LIST honours limit and continue. Off: limit is
	// ignored and no continue token is ever returned.
	APIListChunking featuregate.Feature = "APIListChunking"

	// ConsistentWatchList (KEP-3157): watches with sendInitialEvents=true stream
	// the current state and an initial-events-end bookmark. Off: such watches
	// are rejected, so clients fall back to LIST+WATCH.
	ConsistentWatchList featuregate.Feature = "ConsistentWatchList"

	// EfficientWatchResumption (KEP-1904): the watch cache asks etcd for progress
	// notifications so its resourceVersion advances without events of its type.
	EfficientWatchResumption featuregate.Feature = "EfficientWatchResumption"

	// PaginationFromCache (KEP-4988): LISTs with limit are served from B-tree
	// snapshots in the watch cache instead of from etcd.
	PaginationFromCache featuregate.Feature = "PaginationFromCache"
)

// binaryVersion is the Kubernetes minor these specs are written against.
var binaryVersion = version.MustParse("1.37")

var specs = map[featuregate.Feature]featuregate.VersionedSpecs{
	APIListChunking:          {{Version: binaryVersion, Default: true, PreRelease: featuregate.Beta}},
	ConsistentWatchList:      {{Version: binaryVersion, Default: true, PreRelease: featuregate.Beta}},
	EfficientWatchResumption: {{Version: binaryVersion, Default: true, PreRelease: featuregate.Beta}},
	PaginationFromCache:      {{Version: binaryVersion, Default: true, PreRelease: featuregate.Beta}},
}

func init() {
	runtime.Must(utilfeature.DefaultMutableFeatureGate.AddVersioned(specs))
}

// Enabled reports whether f is on in the process-wide gate.
func Enabled(f featuregate.Feature) bool {
	return utilfeature.DefaultFeatureGate.Enabled(f)
}

// The k8s.io/apiserver gates ours stand for. Upstream's WatchList lets a
// request carry sendInitialEvents (and turns plain watches at RV ""/"0" into
// watch-lists): it follows ConsistentWatchList, so that with ours off a
// watch-list is refused with 422, as by a server without the feature.
// Upstream's ListFromCacheSnapshot makes each etcd3 store watch etcd's
// compaction key, so compactions by other instances are seen (the cache
// drops its snapshots below them): it follows PaginationFromCache.
const (
	upstreamWatchList             = apiserverfeatures.WatchList
	upstreamListFromCacheSnapshot = apiserverfeatures.ListFromCacheSnapshot
)

// held is what the servers running in this process were built with.
var held struct {
	sync.Mutex
	servers int
	gates   map[featuregate.Feature]bool
}

// Hold is called by a server about to be built: it sets the k8s.io/apiserver
// gates that ours stand for to match ours (only those that differ), and holds
// our gates as they are until release is called, once the server has
// stopped. Gates are process-wide, so a server whose gates differ from those
// of servers still running in the process gets an error: building it would
// change theirs under them.
func Hold() (release func(), err error) {
	held.Lock()
	defer held.Unlock()
	gates := map[featuregate.Feature]bool{}
	for f := range specs {
		gates[f] = Enabled(f)
	}
	if held.servers > 0 {
		var differ []string
		for _, f := range slices.Sorted(maps.Keys(gates)) {
			if gates[f] != held.gates[f] {
				differ = append(differ, fmt.Sprintf("%s=%t (a running server has %t)", f, gates[f], held.gates[f]))
			}
		}
		if len(differ) > 0 {
			return nil, fmt.Errorf("feature gates %s: another server in this process runs with other gates, and gates are process-wide; stop it first",
				strings.Join(differ, ", "))
		}
	}
	if err := syncUpstream(); err != nil {
		return nil, err
	}
	held.servers++
	held.gates = gates
	return sync.OnceFunc(func() {
		held.Lock()
		defer held.Unlock()
		held.servers--
	}), nil
}

// syncUpstream sets the k8s.io/apiserver gates that ours stand for to
// match ours, writing only those that differ.
func syncUpstream() error {
	want := map[string]bool{}
	for upstream, ours := range map[featuregate.Feature]featuregate.Feature{
		upstreamWatchList:             ConsistentWatchList,
		upstreamListFromCacheSnapshot: PaginationFromCache,
	} {
		if on := Enabled(ours); utilfeature.DefaultFeatureGate.Enabled(upstream) != on {
			want[string(upstream)] = on
		}
	}
	if len(want) == 0 {
		return nil
	}
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(want)
}

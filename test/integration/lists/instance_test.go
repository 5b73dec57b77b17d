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

package lists

import (
	"fmt"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// instance is a server under test, and where its watch cache, if it has
// one, serves each kind of LIST.
type instance struct {
	name   string
	s      *testserver.Server
	client kubernetes.Interface
	// routes maps a LIST's kind (listKind) to the "source/reason" the cache
	// counts it under in miniapiserver_watch_cache_list_requests_total; nil
	// without a watch cache (no LIST reaches one).
	routes map[string]string
}

// Where a watch cache serves each kind of LIST, with PaginationFromCache on and off.
var (
	snapshotRoutes = map[string]string{
		"consistent": "cache/consistent", "not_older_than": "cache/not_older_than", "any": "cache/any",
		"exact": "snapshot/exact", "continue": "snapshot/continue", "continue_latest": "cache/continue_latest",
	}
	noSnapshotRoutes = map[string]string{
		"consistent": "cache/consistent", "not_older_than": "cache/not_older_than", "any": "cache/any",
		"exact": "etcd/snapshots_disabled", "continue": "etcd/snapshots_disabled", "continue_latest": "etcd/snapshots_disabled",
	}
)

// startInstance starts a server with options (as framework.Start does),
// routing as the options and the PaginationFromCache gate say.
func startInstance(t *testing.T, name string, options ...func(*server.Options)) instance {
	t.Helper()
	s, client := framework.Start(t, options...)
	inst := instance{name: name, s: s, client: client}
	if framework.WatchCacheOn(func(o *server.Options) {
		for _, f := range options {
			f(o)
		}
	}) {
		inst.routes = snapshotRoutes
		if !features.Enabled(features.PaginationFromCache) {
			inst.routes = noSnapshotRoutes
		}
	}
	return inst
}

// withRoute returns inst serving LISTs of kind from route; inst must have a watch cache.
func (inst instance) withRoute(kind, route string) instance {
	if inst.routes == nil {
		panic(inst.name + " has no watch cache")
	}
	inst.routes = maps.Clone(inst.routes)
	inst.routes[kind] = route
	return inst
}

// list LISTs resource (configmaps or secrets) in ns ("": all) on inst and,
// if it succeeds, checks where inst's watch cache, if any, served it from.
func (inst instance) list(t *testing.T, resource, ns string, opts metav1.ListOptions) (listPage, error) {
	t.Helper()
	var list runtime.Object
	switch resource {
	case "configmaps":
		list = &corev1.ConfigMapList{}
	case "secrets":
		list = &corev1.SecretList{}
	default:
		t.Fatalf("no list type for %s", resource)
	}
	var err error
	do := func() {
		// One request: client-go would retry a 504 with Retry-After.
		err = inst.client.CoreV1().RESTClient().Get().Namespace(ns).Resource(resource).
			VersionedParams(&opts, scheme.ParameterCodec).MaxRetries(0).Do(t.Context()).Into(list)
	}
	if inst.routes == nil { // no watch cache to count it
		do()
	} else if routes := framework.RoutesOf(t, inst.s, resource, do); err == nil {
		if want := map[string]float64{inst.routes[listKind(opts)]: 1}; !maps.Equal(routes, want) {
			t.Errorf("%s: LIST %s %s: counted in miniapiserver_watch_cache_list_requests_total as %v, want %v", inst.name, resource, describeListOptions(opts), routes, want)
		}
	}
	if err != nil {
		return listPage{}, fmt.Errorf("%s: LIST %s %s: %w", inst.name, resource, describeListOptions(opts), err)
	}
	return summarize(t, list, ns == ""), nil
}

// listKind is the kind of LIST opts make, as the cache's reasons name
// them (upstream's ShouldDelegateList).
func listKind(opts metav1.ListOptions) string {
	switch {
	case opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact:
		return "exact"
	case opts.ResourceVersionMatch == metav1.ResourceVersionMatchNotOlderThan:
	case opts.Continue != "":
		if rv, _, ok := decodeToken(opts.Continue); ok && rv > 0 {
			return "continue"
		}
		return "continue_latest"
	case opts.Limit > 0 && opts.ResourceVersion != "" && opts.ResourceVersion != "0":
		return "exact"
	case opts.ResourceVersion == "":
		return "consistent"
	}
	if opts.ResourceVersion == "0" {
		return "any"
	}
	return "not_older_than"
}

func sum(counts map[string]float64) float64 {
	var total float64
	for _, n := range counts {
		total += n
	}
	return total
}

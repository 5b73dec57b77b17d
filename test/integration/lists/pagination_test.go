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
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/component-base/metrics/testutil"

	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// Tests of paginated and exact-resourceVersion LISTs (KEP-4988,
// PaginationFromCache): the watch cache serves them from snapshots of its
// state, with the etcd path's results and continue tokens.

// TestPaginationAtExactResourceVersion: LISTs at an exact resourceVersion
// return the state at it, pages do not see writes made between them, and
// label-selected pages, on both storage paths (and where the cache serves
// each request: from its snapshots).
func TestPaginationAtExactResourceVersion(t *testing.T) {
	// Serial: its LISTs are checked against the process's counters (RoutesOf).
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		checkExactPagination(t, startInstance(t, "server", path))
	})
}

// TestPaginationFromCacheGateOff: with PaginationFromCache off the cache
// hands continuations and exact-resourceVersion LISTs to etcd (counted as
// source="etcd", reason="snapshots_disabled"), with the same results.
func TestPaginationFromCacheGateOff(t *testing.T) {
	// Serial: it sets a feature gate, which is the process's.
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.PaginationFromCache, false)
	checkExactPagination(t, startInstance(t, "server"))
}

// checkExactPagination runs the checks of TestPaginationAtExactResourceVersion on srv.
func checkExactPagination(t *testing.T, srv instance) {
	client := srv.client
	ns := framework.CreateNamespace(t, client)
	live := stateOf(framework.CreateConfigMaps(t, client, ns, 8)) // cm-000 ... cm-007
	live.set(framework.UpdateCMLabels(t, client, ns, "cm-003", map[string]string{"v": "1"}))
	// A revision at which no configmap changed: the state is the one of the
	// configmap write before it.
	secret, err := client.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	betweenRV, atBetween := secret.ResourceVersion, maps.Clone(live)
	updated := framework.UpdateCMLabels(t, client, ns, "cm-004", map[string]string{"v": "1"})
	live.set(updated)
	rv, atRV := updated.ResourceVersion, maps.Clone(live)
	// Later writes, which LISTs at rv must not show.
	live.set(framework.CreateCMIn(t, client, ns, "cm-late", nil))
	live.set(framework.UpdateCMLabels(t, client, ns, "cm-001", map[string]string{"v": "1"}))
	live.delete(t, client, ns, "cm-005")
	afterDelete, atAfterDelete := framework.ResourceVersionNow(t, client), maps.Clone(live)

	t.Run("exact", func(t *testing.T) {
		for _, at := range []struct {
			what, rv string
			want     state
		}{
			{"a configmap write", rv, atRV},
			{"a revision without configmap writes", betweenRV, atBetween},
			{"etcd's revision, after a delete", afterDelete, atAfterDelete},
		} {
			got, err := srv.list(t, "configmaps", ns, metav1.ListOptions{ResourceVersion: at.rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			if want := (listPage{items: at.want.items(), rv: at.rv}); err != nil || !got.equal(want) {
				t.Errorf("Exact LIST at %s (%s): got %v (%v), want %v", at.rv, at.what, got, err, want)
			}
		}
		// A LIST of one name reads one key, not a range: etcd serves it.
		one := srv
		if srv.routes["exact"] == "snapshot/exact" {
			one = srv.withRoute("exact", "etcd/not_recursive")
		}
		got, err := one.list(t, "configmaps", ns, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact, FieldSelector: "metadata.name=cm-003"})
		if want := (listPage{items: []string{"cm-003@" + atRV["cm-003"]}, rv: rv}); err != nil || !got.equal(want) {
			t.Errorf("Exact LIST of cm-003 at %s: got %v (%v), want %v", rv, got, err, want)
		}
	})

	t.Run("exact at a future revision", func(t *testing.T) {
		// 504 with a ResourceVersionTooLarge cause: from etcd at once, from
		// the cache after waiting 3 s for the revision.
		future := fmt.Sprint(live.newest(t) + 1000000)
		var err error
		routes := framework.RoutesOf(t, srv.s, "configmaps", func() {
			_, err = srv.list(t, "configmaps", ns, metav1.ListOptions{ResourceVersion: future, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		})
		if !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
			t.Errorf("Exact LIST at %s: got %v, want 504 Timeout with a %s cause", future, err, metav1.CauseTypeResourceVersionTooLarge)
		}
		// It reached the cache, if any: counted once (the gate-off cache
		// counts it as etcd/snapshots_disabled).
		want := 0.0
		if srv.routes != nil {
			want = 1
		}
		if got := sum(routes); got != want {
			t.Errorf("Exact LIST at %s (504): counted %v times in miniapiserver_watch_cache_list_requests_total (%v), want %v", future, got, routes, want)
		}
	})

	t.Run("limit with resourceVersion", func(t *testing.T) {
		// The first page and its token are at rv; writes between pages
		// (an update and a delete ahead, a create in the next page) do not show.
		writes := []func(){
			func() {
				live.set(framework.UpdateCMLabels(t, client, ns, "cm-006", map[string]string{"v": "2"}))
				live.set(framework.CreateCMIn(t, client, ns, "cm-003a", nil))
			},
			func() {
				live.delete(t, client, ns, "cm-007")
				live.set(framework.CreateCMIn(t, client, ns, "cm-006a", nil))
			},
		}
		got := pageThrough(t, "configmaps", ns, metav1.ListOptions{Limit: 3, ResourceVersion: rv}, func(page int) { writes[page]() }, srv)
		samePages(t, "paged LIST at resourceVersion "+rv, got, expectedPages(t, atRV.items(), 3, rv, true))
	})

	t.Run("resourceVersion unset", func(t *testing.T) {
		// The first page is at the current revision, the rest at the first's.
		at := maps.Clone(live) // cm-000 ... cm-004, cm-003a, cm-006, cm-006a, cm-late
		newest := live.newest(t)
		writes := []func(){
			func() { live.set(framework.UpdateCMLabels(t, client, ns, "cm-late", map[string]string{"v": "2"})) },
			func() {
				live.delete(t, client, ns, "cm-006a")
				live.set(framework.CreateCMIn(t, client, ns, "cm-zzz", nil))
			},
		}
		got := pageThrough(t, "configmaps", ns, metav1.ListOptions{Limit: 3}, func(page int) { writes[page]() }, srv)
		if framework.ParseRV(t, got[0].rv) < newest {
			t.Errorf("first page at resourceVersion %s, want at least %d, the last write's", got[0].rv, newest)
		}
		samePages(t, "paged LIST", got, expectedPages(t, at.items(), 3, got[0].rv, true))
	})

	t.Run("label selector", func(t *testing.T) {
		// cm-001 ... cm-004 of cm-000 ... cm-007 match: pages of 2 end with
		// an empty page, since after cm-004 more (unmatched) objects follow.
		// No remainingItemCount with a selector (it would count unmatched ones).
		ns := framework.CreateNamespace(t, client)
		pick := map[string]string{"pick": "yes"}
		created := state{}
		for i := range 8 {
			var labels map[string]string
			if i >= 1 && i <= 4 {
				labels = pick
			}
			created.set(framework.CreateCMIn(t, client, ns, fmt.Sprintf("cm-%03d", i), labels))
		}
		got := pageThrough(t, "configmaps", ns, metav1.ListOptions{Limit: 2, LabelSelector: "pick=yes"}, func(page int) {
			if page == 0 { // would show on the next pages if they were not at the first's revision
				framework.CreateCMIn(t, client, ns, "cm-003a", pick)
				framework.UpdateCMLabels(t, client, ns, "cm-006", pick)
			}
		}, srv)
		rv := got[0].rv
		items := func(names ...string) []string {
			var items []string
			for _, name := range names {
				items = append(items, name+"@"+created[name])
			}
			return items
		}
		want := []listPage{
			{items: items("cm-001", "cm-002"), rv: rv, token: continueToken(t, "cm-002", rv)},
			{items: items("cm-003", "cm-004"), rv: rv, token: continueToken(t, "cm-004", rv)},
			{rv: rv},
		}
		samePages(t, "paged LIST with label selector pick=yes", got, want)

		// Without the selector, the same first page counts what remains.
		first, err := srv.list(t, "configmaps", ns, metav1.ListOptions{Limit: 2, ResourceVersion: rv})
		if err != nil || first.remaining != "6" {
			t.Errorf("first page of 2 of 8 at %s without a selector: got %v (%v), want remainingItemCount 6", rv, first, err)
		}
	})
}

// TestPaginationFromCacheMetrics: a paged LIST of 3 pages counts one
// consistent read from the cache and two continuations from snapshots,
// all in apiserver_storage_list_total{storage="watchcache"}; the cache
// keeps a snapshot per event; resourceVersion "0" ignores the limit.
func TestPaginationFromCacheMetrics(t *testing.T) {
	// Serial: it sets an environment variable and counts LISTs in the
	// process's metrics.
	framework.WithoutConsistencyChecks(t)
	srv := startInstance(t, "server")
	ns := framework.CreateNamespace(t, srv.client)
	snapshots := func(m testutil.Metrics) float64 {
		return framework.SumSamples(m, "miniapiserver_watch_cache_snapshots", map[string]string{"group": "", "resource": "configmaps"})
	}
	storageLists := func(m testutil.Metrics, storage string) float64 {
		return framework.SumSamples(m, "apiserver_storage_list_total", map[string]string{"group": "", "resource": "configmaps", "storage": storage})
	}
	before := framework.ScrapeMetrics(t, srv.s)
	at := stateOf(framework.CreateConfigMaps(t, srv.client, ns, 7))

	var pages []listPage
	routes := framework.RoutesOf(t, srv.s, "configmaps", func() {
		pages = pageThrough(t, "configmaps", ns, metav1.ListOptions{Limit: 3}, nil, srv)
	})
	after := framework.ScrapeMetrics(t, srv.s)
	samePages(t, "paged LIST", pages, expectedPages(t, at.items(), 3, pages[0].rv, true))
	if want := map[string]float64{"cache/consistent": 1, "snapshot/continue": 2}; !maps.Equal(routes, want) {
		t.Errorf("3 pages counted in miniapiserver_watch_cache_list_requests_total as %v, want %v", routes, want)
	}
	// The first page waited for the 7 creates: the cache has applied them.
	if got, was := snapshots(after), snapshots(before); got <= 0 || got != was+7 {
		t.Errorf("miniapiserver_watch_cache_snapshots: %v after 7 creates, want %v (one per event)", got, was+7)
	}
	pagesOnly := framework.ScrapeMetrics(t, srv.s) // RoutesOf's own scrapes are not LISTs
	cacheLists := storageLists(pagesOnly, "watchcache") - storageLists(before, "watchcache")
	etcdLists := storageLists(pagesOnly, "etcd") - storageLists(before, "etcd")
	if cacheLists != 3 || etcdLists != 0 {
		t.Errorf("3 pages counted in apiserver_storage_list_total as storage=watchcache %v, storage=etcd %v; want 3, 0", cacheLists, etcdLists)
	}

	// resourceVersion "0": the whole list from the cache, no token.
	got, err := srv.list(t, "configmaps", ns, metav1.ListOptions{ResourceVersion: "0", Limit: 2})
	if err != nil || !slices.Equal(got.items, at.items()) || got.token != "" || got.remaining != "" {
		t.Errorf("LIST resourceVersion=0 limit=2: got %v (%v), want every item, no token", got, err)
	}
	if n := storageLists(framework.ScrapeMetrics(t, srv.s), "watchcache") - storageLists(pagesOnly, "watchcache"); n != 1 {
		t.Errorf("LIST resourceVersion=0: counted %v times in apiserver_storage_list_total{storage=watchcache}, want 1", n)
	}
}

// TestPaginationOutsideCacheHistory: the cache keeps snapshots as long as
// the events of its history (here the last 2): older exact reads and
// continuations go to etcd (reason no_snapshot), with the same pages. Once
// etcd has compacted the revision they get 410 Gone, and the fresh token
// continues at the cache's latest state (reason continue_latest).
func TestPaginationOutsideCacheHistory(t *testing.T) {
	// Serial: its LISTs are checked against the process's counters (RoutesOf).

	// A compactor that never fires (CompactEtcd compacts), as in
	// TestListChunkingCompactedContinueGets410WithFreshToken.
	srv := startInstance(t, "server", func(o *server.Options) {
		o.WatchCacheHistorySize = 2
		o.EtcdCompactionInterval = time.Hour
	})
	ns := framework.CreateNamespace(t, srv.client)
	live := stateOf(framework.CreateConfigMaps(t, srv.client, ns, 6))
	at := maps.Clone(live)
	first, err := srv.list(t, "configmaps", ns, metav1.ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	samePages(t, "first page", []listPage{first}, expectedPages(t, at.items(), 2, first.rv, true)[:1])
	var last *corev1.ConfigMap
	for _, name := range []string{"cm-004", "cm-005", "cm-000"} {
		last = framework.UpdateCMLabels(t, srv.client, ns, name, map[string]string{"v": "1"})
		live.set(last)
	}
	// Once the cache has seen the updates, the first page's revision has
	// left its history.
	if _, err := srv.list(t, "configmaps", ns, metav1.ListOptions{ResourceVersion: last.ResourceVersion}); err != nil {
		t.Fatal(err)
	}

	old := srv.withRoute("continue", "etcd/no_snapshot").withRoute("exact", "etcd/no_snapshot")
	rest := pageThrough(t, "configmaps", ns, metav1.ListOptions{Limit: 2, Continue: first.token}, nil, old)
	samePages(t, "continued after the first page's revision left the history", append([]listPage{first}, rest...), expectedPages(t, at.items(), 2, first.rv, true))
	exact, err := old.list(t, "configmaps", ns, metav1.ListOptions{ResourceVersion: first.rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if want := (listPage{items: at.items(), rv: first.rv}); err != nil || !exact.equal(want) {
		t.Errorf("Exact LIST at %s, out of the history: got %v (%v), want %v", first.rv, exact, err, want)
	}
	// The last update is in the history: from a snapshot.
	exact, err = srv.list(t, "configmaps", ns, metav1.ListOptions{ResourceVersion: last.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if want := (listPage{items: live.items(), rv: last.ResourceVersion}); err != nil || !exact.equal(want) {
		t.Errorf("Exact LIST at %s, in the history: got %v (%v), want %v", last.ResourceVersion, exact, err, want)
	}

	framework.CompactEtcd(t, srv.s)
	_, err = old.list(t, "configmaps", ns, metav1.ListOptions{ResourceVersion: first.rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("Exact LIST at %s, compacted: got %v, want 410 Gone", first.rv, err)
	}
	_, err = old.list(t, "configmaps", ns, metav1.ListOptions{Limit: 2, Continue: first.token})
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != http.StatusGone || status.Status().ListMeta.Continue == "" {
		t.Fatalf("continuing at %s, compacted: got %v, want 410 Gone with a fresh token", first.rv, err)
	}
	fresh := status.Status().ListMeta.Continue
	if rv, start, _ := decodeToken(fresh); rv != -1 || start != "cm-001\x00" {
		t.Errorf("fresh token %s, want resourceVersion -1 from cm-001", describeToken(fresh))
	}
	latest := pageThrough(t, "configmaps", ns, metav1.ListOptions{Limit: 2, Continue: fresh}, nil, srv)
	if framework.ParseRV(t, latest[0].rv) < framework.ParseRV(t, last.ResourceVersion) {
		t.Errorf("continued with the fresh token at resourceVersion %s, want at least the last update's %s", latest[0].rv, last.ResourceVersion)
	}
	samePages(t, "continued with the fresh token", latest, expectedPages(t, live.items()[2:], 2, latest[0].rv, true))
}

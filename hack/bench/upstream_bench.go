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

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Targets of miniapiserver against upstream kube-apiserver: how many times
// faster (upstream's median over ours) it should be, at least.
const (
	upstreamStartTarget = 10.0 // start-to-ready on an empty data dir
	upstreamListTarget  = 1.5  // LISTs served from the cache: RV unset (one request and paged) and RV=0
	upstreamExactTarget = 3.0  // exact-resourceVersion LISTs
)

// upstreamResult is what ran side by side with upstream kube-apiserver;
// nil in a report without -upstream.
type upstreamResult struct {
	bins     upstreamBinaries
	starts   startPair     // empty data dirs; no runs if the starts section did not run
	populate populateStats // of upstream's own populated data dir
	lists    []listPair    // in upstreamListVariants order; none if the lists section did not run
	// rv0 are the rv0 section's LISTs (rv0Variants order) side by side;
	// rv0FromLists: they are the lists section's, not measured again.
	rv0          []listPair
	rv0FromLists bool
	watch        []watchRun // kube-apiserver's fan-out runs, in -watchers order; none if the watch section did not run
	stops        stopStats  // kube-apiserver's stops with open watches; no runs if the stops section did not run
}

// startPair are the start-to-ready runs of both servers.
type startPair struct{ ours, upstream startStats }

// listPair is one LIST variant timed on both servers.
type listPair struct {
	ours, upstream listStats
	target         float64 // upstream/ours wall time to reach
	// Of the timed listings' requests (ours, upstream's), how many each
	// server's watch cache served itself.
	fromCache, requests [2]float64
}

// upstreamBench is what the side-by-side runs share.
type upstreamBench struct {
	bins upstreamBinaries
	pki  *upstreamPKI
	root string // where upstream's data dirs go
}

func newUpstreamBench(bins upstreamBinaries, root string) (*upstreamBench, error) {
	pki, err := newUpstreamPKI(filepath.Join(root, "upstream-pki"))
	if err != nil {
		return nil, err
	}
	return &upstreamBench{bins: bins, pki: pki, root: root}, nil
}

// benchEmptyStarts measures start-to-ready on fresh data dirs,
// cfg.starts rounds of miniapiserver then upstream.
func (ub *upstreamBench) benchEmptyStarts(ctx context.Context, cfg config) (startPair, error) {
	var st startPair
	for i := range cfg.starts {
		dir := filepath.Join(ub.root, fmt.Sprintf("empty-%d", i))
		run, version, err := startStop(ctx, cfg, dir)
		if err = errors.Join(err, os.RemoveAll(dir)); err != nil {
			return startPair{}, fmt.Errorf("start-to-ready (empty data dir), run %d/%d: %w", i+1, cfg.starts, err)
		}
		st.ours.runs, st.ours.version = append(st.ours.runs, run), version
		dir = filepath.Join(ub.root, fmt.Sprintf("upstream-empty-%d", i))
		urun, err := ub.startStop(ctx, dir)
		if err = errors.Join(err, os.RemoveAll(dir)); err != nil {
			return startPair{}, fmt.Errorf("kube-apiserver start-to-ready (empty data dir), run %d/%d: %w", i+1, cfg.starts, err)
		}
		st.upstream.runs, st.upstream.version = append(st.upstream.runs, urun), ub.bins.apiserverVersion
		progress("start-to-ready (empty data dir) %d/%d: miniapiserver ready in %s, stopped in %s; kube-apiserver ready in %s, stopped in %s",
			i+1, cfg.starts, fmtDuration(run.ready), fmtDuration(run.stop), fmtDuration(urun.ready), fmtDuration(urun.stop))
	}
	return st, nil
}

func (ub *upstreamBench) startStop(ctx context.Context, dir string) (startRun, error) {
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return startRun{}, err
	}
	if err := u.Stop(); err != nil {
		return startRun{}, err
	}
	return startRun{ready: u.ready, stop: u.stopped}, nil
}

// populate starts upstream on dir, creates objects ConfigMaps as populate
// does for miniapiserver, and stops it.
func (ub *upstreamBench) populate(ctx context.Context, cfg config, dir string, objects int) (populateStats, error) {
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return populateStats{}, fmt.Errorf("kube-apiserver populate: %w", err)
	}
	progress("kube-apiserver populate: creating %d ConfigMaps with %d clients", objects, cfg.workers)
	st, err := createOnUpstream(ctx, cfg, u, objects)
	if err = errors.Join(err, u.Stop()); err != nil {
		return populateStats{}, fmt.Errorf("kube-apiserver populate: %w", err)
	}
	progress("kube-apiserver populate: done in %s (%.0f creates/s)", fmtDuration(st.duration), float64(st.objects)/st.duration.Seconds())
	return st, nil
}

// createOnUpstream creates the namespace, which kube-apiserver's own
// controller may not have yet, then the ConfigMaps.
func createOnUpstream(ctx context.Context, cfg config, u *upstreamServer, objects int) (populateStats, error) {
	if err := ensureNamespace(ctx, u.api); err != nil {
		return populateStats{}, err
	}
	began := time.Now()
	err := createConfigMaps(ctx, u.api, objects, cfg.workers)
	return populateStats{objects: objects, duration: time.Since(began)}, err
}

// onUpstream runs measure on a kube-apiserver of its own, on a fresh data
// dir (removed after) with the bench's namespace, then stops it.
func onUpstream[T any](ctx context.Context, ub *upstreamBench, name string, measure func(*server) (T, error)) (res T, err error) {
	dir := filepath.Join(ub.root, "upstream-"+name)
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return res, fmt.Errorf("%s (kube-apiserver): %w", name, err)
	}
	if err := ensureNamespace(ctx, u.api); err != nil {
		return res, errors.Join(err, u.Stop())
	}
	res, err = measure(u.api)
	if err = errors.Join(err, u.Stop()); err != nil {
		return res, fmt.Errorf("%s (kube-apiserver): %w", name, err)
	}
	return res, nil
}

// ensureNamespace creates the bench's namespace on upstream unless it
// exists already.
func ensureNamespace(ctx context.Context, api *server) error {
	client, err := api.client()
	if err != nil {
		return err
	}
	return createNamespace(ctx, client)
}

func createNamespace(ctx context.Context, client kubernetes.Interface) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	return nil
}

// benchLists starts miniapiserver on its populated data dir and upstream
// on its own, both with cfg.objects ConfigMaps, updates exactRVWrites of
// them on each after taking a resourceVersion, then times every
// upstreamListVariants on both. It also returns miniapiserver's results for
// listVariants, which the lists section's own tables show.
func (ub *upstreamBench) benchLists(ctx context.Context, cfg config, oursDir, upstreamDir string) (ours []listStats, pairs []listPair, err error) {
	s, err := startServer(ctx, cfg, oursDir)
	if err != nil {
		return nil, nil, fmt.Errorf("LIST: %w", err)
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	u, err := startUpstream(ctx, ub.bins, ub.pki, upstreamDir)
	if err != nil {
		return nil, nil, fmt.Errorf("kube-apiserver LIST: %w", err)
	}
	defer func() { err = errors.Join(err, u.Stop()) }()
	sides, err := listSides(ctx, cfg, s, u)
	if err != nil {
		return nil, nil, err
	}
	for _, v := range upstreamListVariants(cfg.page) {
		p, err := benchListPair(ctx, "LIST", sides, v, cfg.objects, cfg.lists)
		if err != nil {
			return nil, nil, fmt.Errorf("LIST %s: %w", v, err)
		}
		pairs = append(pairs, p)
		if v.match == "" && v.rv == "" {
			ours = append(ours, p.ours)
		}
	}
	return ours, pairs, nil
}

// listSide is one server of a side-by-side LIST.
type listSide struct {
	name    string
	rc      rest.Interface
	exactRV string // taken before exactRVWrites updates
	// verify lists once, checking every object; nil: verifiedListing, for
	// ConfigMaps.
	verify func(ctx context.Context, rc rest.Interface, v listVariant, want int) (listing, error)
	// counters reads the bytes the server (and its etcd) has allocated so
	// far and how many ConfigMap LISTs its watch cache has served itself.
	counters func(context.Context) (alloc, fromCache float64, err error)
}

// upstreamListsTotal counts upstream's LISTs by resource and storage
// ("watchcache" or "etcd").
const upstreamListsTotal = "apiserver_storage_list_total"

// listSides are miniapiserver then upstream, each with the resourceVersion
// of its exact-RV LISTs.
func listSides(ctx context.Context, cfg config, s *server, u *upstreamServer) ([2]listSide, error) {
	return listSidesWith(ctx, cfg, s, u, func(ctx context.Context, client kubernetes.Interface) (string, error) {
		return rvBeforeWrites(ctx, client, cfg.objects)
	})
}

// listSidesWith are miniapiserver then upstream; exactRV, if not nil, gives
// each side's exact-RV LISTs their resourceVersion.
func listSidesWith(ctx context.Context, cfg config, s *server, u *upstreamServer,
	exactRV func(context.Context, kubernetes.Interface) (string, error)) ([2]listSide, error) {
	var sides [2]listSide
	for i, api := range []*server{s, u.api} {
		client, err := api.listClient(cfg.gzip)
		if err != nil {
			return sides, err
		}
		if i == 0 {
			sides[i] = ourListSide(client.CoreV1().RESTClient())
		} else {
			sides[i] = upstreamListSide(client.CoreV1().RESTClient(), u.etcdURL, "configmaps")
		}
		if exactRV == nil {
			continue
		}
		if sides[i].exactRV, err = exactRV(ctx, client); err != nil {
			return sides, fmt.Errorf("%s: %w", sides[i].name, err)
		}
	}
	return sides, nil
}

// benchRV0 starts miniapiserver with the watch cache on its populated data
// dir and upstream on its own, then times the rv0 section's LISTs on both,
// interleaved as the lists section's are.
func (ub *upstreamBench) benchRV0(ctx context.Context, cfg config, oursDir, upstreamDir string) (pairs []listPair, err error) {
	s, err := startServer(ctx, withArgs(cfg, cachePath.args...), oursDir)
	if err != nil {
		return nil, fmt.Errorf("LIST RV=0: %w", err)
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	u, err := startUpstream(ctx, ub.bins, ub.pki, upstreamDir)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver LIST RV=0: %w", err)
	}
	defer func() { err = errors.Join(err, u.Stop()) }()
	sides, err := listSidesWith(ctx, cfg, s, u, nil)
	if err != nil {
		return nil, err
	}
	for _, v := range rv0Variants() {
		p, err := benchListPair(ctx, "LIST RV=0", sides, v, cfg.objects, cfg.lists)
		if err != nil {
			return nil, fmt.Errorf("LIST %s: %w", v, err)
		}
		pairs = append(pairs, p)
	}
	return pairs, nil
}

// rv0Pairs are the RV=0 LISTs among the lists section's side-by-side ones.
func rv0Pairs(lists []listPair) []listPair {
	var pairs []listPair
	for _, p := range lists {
		if p.ours.variant.rv == "0" && p.ours.variant.match == "" && p.ours.variant.limit == 0 {
			pairs = append(pairs, p)
		}
	}
	return pairs
}

// ourListSide is miniapiserver's side of a side-by-side LIST: its
// allocated bytes, and the ConfigMap LISTs its watch cache served.
func ourListSide(rc rest.Interface) listSide {
	return listSide{name: "miniapiserver", rc: rc, counters: func(ctx context.Context) (float64, float64, error) {
		m, err := scrapeMetrics(ctx, rc, allocBytesTotal, cacheListRequests)
		if err != nil {
			return 0, 0, err
		}
		return ourCounters(m)
	}}
}

// upstreamListSide is kube-apiserver's side: its allocated bytes plus its
// etcd's, and the LISTs of resource its watch cache served.
func upstreamListSide(rc rest.Interface, etcdURL, resource string) listSide {
	return listSide{name: "kube-apiserver", rc: rc, counters: func(ctx context.Context) (float64, float64, error) {
		m, err := scrapeMetrics(ctx, rc, allocBytesTotal, upstreamListsTotal)
		if err != nil {
			return 0, 0, err
		}
		alloc, err := m.value(allocBytesTotal)
		if err != nil {
			return 0, 0, err
		}
		fromCache, err := m.sum(upstreamListsTotal, `resource="`+resource+`"`, `storage="watchcache"`)
		if err != nil {
			return 0, 0, err
		}
		etcd, err := etcdAllocBytes(ctx, etcdURL)
		return alloc + etcd, fromCache, err
	}}
}

// ourCounters are miniapiserver's allocated bytes and the ConfigMap LISTs
// its watch cache served, from its latest state or a snapshot.
func ourCounters(m metrics) (alloc, fromCache float64, err error) {
	if alloc, err = m.value(allocBytesTotal); err != nil {
		return 0, 0, err
	}
	for _, source := range []string{routeCache, routeSnapshot} {
		n, err := m.sum(cacheListRequests, `resource="configmaps"`, `source="`+source+`"`)
		if err != nil {
			return 0, 0, err
		}
		fromCache += n
	}
	return alloc, fromCache, nil
}

// upstreamListVariants are the lists section's variants, the rv0 section's,
// and exact-RV LISTs, whose resourceVersion ("exact" here) each server
// fills in with its own.
func upstreamListVariants(page int) []listVariant {
	vs := append(listVariants(page), rv0Variants()...)
	exact := string(metav1.ResourceVersionMatchExact)
	return append(vs,
		listVariant{encoding: "JSON", accept: acceptJSON, rv: "exact", match: exact},
		listVariant{encoding: "protobuf", accept: acceptProtobuf, rv: "exact", match: exact},
		listVariant{encoding: "protobuf", accept: acceptProtobuf, limit: page, rv: "exact", match: exact},
	)
}

// benchListPair verifies one untimed listing of v on each side, then times
// runs rounds of one listing on each, miniapiserver first; label starts its
// progress line.
func benchListPair(ctx context.Context, label string, sides [2]listSide, v listVariant, objects, runs int) (listPair, error) {
	var st [2]listStats
	var alloc, fromCache [2]float64
	for i, side := range sides {
		sv := v
		if v.match != "" {
			sv.rv = side.exactRV
		}
		st[i].variant = sv
		verify := verifiedListing
		if side.verify != nil {
			verify = side.verify
		}
		var err error
		if st[i].shape, err = verify(ctx, side.rc, sv, sv.items(objects)); err != nil {
			return listPair{}, fmt.Errorf("%s: %w", side.name, err)
		}
		if alloc[i], fromCache[i], err = side.counters(ctx); err != nil {
			return listPair{}, fmt.Errorf("%s: %w", side.name, err)
		}
	}
	for n := range runs {
		for i, side := range sides {
			began := time.Now()
			shape, err := listAll(ctx, side.rc, st[i].variant, nil)
			if err != nil {
				return listPair{}, fmt.Errorf("%s: %w", side.name, err)
			}
			st[i].times = append(st[i].times, time.Since(began))
			if shape != st[i].shape {
				return listPair{}, fmt.Errorf("%s: listing %d: got %+v, the verified warm-up got %+v", side.name, n+1, shape, st[i].shape)
			}
		}
	}
	p := listPair{target: upstreamListTarget}
	if v.match != "" {
		p.target = upstreamExactTarget
	}
	for i, side := range sides {
		allocAfter, fromCacheAfter, err := side.counters(ctx)
		if err != nil {
			return listPair{}, fmt.Errorf("%s: %w", side.name, err)
		}
		st[i].allocPerOp = (allocAfter - alloc[i]) / float64(runs)
		p.fromCache[i], p.requests[i] = fromCacheAfter-fromCache[i], float64(st[i].shape.pages*runs)
	}
	p.ours, p.upstream = st[0], st[1]
	progress("%s %s: miniapiserver median %s, kube-apiserver median %s (upstream/ours %s)", label, pairLabel(v),
		fmtDuration(median(p.ours.times)), fmtDuration(median(p.upstream.times)), fmtRatio(listTimeRatio(p.upstream, p.ours)))
	return p, nil
}

// pairLabel is v as the side-by-side table names it: an exact RV is each
// server's own.
func pairLabel(v listVariant) string {
	if v.match == string(metav1.ResourceVersionMatchExact) {
		v.rv, v.match = "", ""
		return v.String() + ", exact RV"
	}
	return v.String()
}

// etcdAllocBytes scrapes etcd's cumulative allocated bytes from its client
// URL, that metric only (see scrapeMetrics).
func etcdAllocBytes(ctx context.Context, etcdURL string) (float64, error) {
	m, err := scrapeEtcd(ctx, etcdURL, allocBytesTotal)
	if err != nil {
		return 0, err
	}
	return m.value(allocBytesTotal)
}

// heapWithEtcdAfterGC forces a GC in the server rc talks to and in the
// etcd at etcdURL ("": none, the embedded one is in the server's heap), then
// returns a scrape of the server's metrics names and the heap in use of
// both together.
func heapWithEtcdAfterGC(ctx context.Context, rc rest.Interface, etcdURL string, names ...string) (metrics, float64, error) {
	if etcdURL != "" {
		if err := forceEtcdGC(ctx, etcdURL); err != nil {
			return nil, 0, err
		}
	}
	m, heap, err := heapAfterGC(ctx, rc, names...)
	if err != nil || etcdURL == "" {
		return m, heap, err
	}
	etcd, err := etcdHeapInuse(ctx, etcdURL)
	return m, heap + etcd, err
}

// etcdHeapInuse scrapes etcd's go_memstats_heap_inuse_bytes.
func etcdHeapInuse(ctx context.Context, etcdURL string) (float64, error) {
	m, err := scrapeEtcd(ctx, etcdURL, heapInuseBytes)
	if err != nil {
		return 0, err
	}
	return m.value(heapInuseBytes)
}

// scrapeEtcd fetches the named metric families from etcd's client URL.
func scrapeEtcd(ctx context.Context, etcdURL string, names ...string) (metrics, error) {
	q := url.Values{"name[]": names}
	body, err := getEtcd(ctx, etcdURL+"/metrics?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("scraping etcd's /metrics: %w", err)
	}
	return body, nil
}

// forceEtcdGC makes etcd collect its garbage as forceServerGC does the
// server, through the heap profile etcd serves with --enable-pprof.
func forceEtcdGC(ctx context.Context, etcdURL string) error {
	for range 2 {
		if _, err := getEtcd(ctx, etcdURL+"/debug/pprof/heap?gc=1"); err != nil {
			return fmt.Errorf("forcing an etcd GC via /debug/pprof/heap?gc=1: %w", err)
		}
	}
	return nil
}

// getEtcd is the body of a GET of u, an etcd client URL, if it answers 200.
func getEtcd(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(resp.Status)
	}
	return body, nil
}

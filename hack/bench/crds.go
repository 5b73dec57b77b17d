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
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// crdsResult is the crds section.
type crdsResult struct {
	starts   startStats    // start-to-ready with cfg.crds CRDs, each on a fresh data dir
	populate populateStats // creating cfg.crs custom resources
	cache    crListRun
	etcd     crListRun
	upstream *upstreamCRDs // with -upstream
}

// crListRun is what one server on the populated data dir measured.
type crListRun struct {
	path storagePath
	// first is the first LIST after the ready line (JSON, one request),
	// which creates the resource's storage and, with the watch cache, fills it.
	first time.Duration
	lists []crListStats // in crListVariants order
}

// crListStats are timed listings of custom resources and how many of
// their requests the watch cache served.
type crListStats struct {
	listStats
	fromCache float64  // requests served from the cache's latest state or a snapshot
	requests  int      // requests of the timed listings
	pair      listPair // with -upstream, of the cache server: the listings interleaved with kube-apiserver's
}

// crListVariants are the LISTs of the custom resources: JSON only, as
// custom resources have no protobuf; RV unset, a consistent read.
func crListVariants(page int, crd crdNames) []listVariant {
	return []listVariant{
		{encoding: "JSON", accept: acceptJSON, path: crd.listPath()},
		{encoding: "JSON", accept: acceptJSON, limit: page, path: crd.listPath()},
	}
}

// benchCRDs writes cfg.crds CRD manifests and times starts that install
// them (--crds) on fresh data dirs; then it populates a data dir of its own
// with cfg.crs custom resources of the first CRD and lists them from a
// server with the watch cache and from one without it.
//
// With ub (-upstream), kube-apiserver first gets the same CRDs in an etcd
// of its own, and as many custom resources in another; each of
// miniapiserver's starts is followed by one of kube-apiserver on the
// former, and the cache server's listings are interleaved with
// kube-apiserver's on the latter.
func benchCRDs(ctx context.Context, cfg config, root string, ub *upstreamBench) (res crdsResult, err error) {
	dir := filepath.Join(root, "crds")
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	manifests := filepath.Join(dir, "manifests")
	if err := writeCRDManifests(manifests, cfg.crds); err != nil {
		return crdsResult{}, fmt.Errorf("crds: %w", err)
	}
	withCRDs := withArgs(cfg, "--crds", manifests)
	fresh := func(i int) string { return filepath.Join(dir, fmt.Sprintf("empty-%d", i)) }
	var upstreamPopulated string
	if ub == nil {
		res.starts, err = measureStarts(ctx, withCRDs, fmt.Sprintf("%d CRDs, empty", cfg.crds), fresh, true)
	} else {
		res.upstream, upstreamPopulated, err = ub.crdStartsSideBySide(ctx, withCRDs, fresh, &res)
	}
	if err != nil {
		return crdsResult{}, err
	}
	crd := benchCRD(0)
	populated := filepath.Join(dir, "populated")
	if res.populate, err = populateCustomResources(ctx, withCRDs, populated, crd); err != nil {
		return crdsResult{}, err
	}
	// The LIST servers get --crds too, so that their ready line waits until
	// the CRD is served again.
	var pairs func(context.Context, *server) ([]listPair, error)
	if ub != nil {
		pairs = func(ctx context.Context, s *server) ([]listPair, error) {
			return ub.benchCRListPairs(ctx, withCRDs, s, upstreamPopulated, crd)
		}
	}
	if res.cache, err = listCustomResources(ctx, withCRDs, populated, crd, cachePath, pairs); err != nil {
		return crdsResult{}, err
	}
	if res.upstream != nil {
		for _, l := range res.cache.lists {
			res.upstream.lists = append(res.upstream.lists, l.pair)
		}
	}
	if res.etcd, err = listCustomResources(ctx, withCRDs, populated, crd, etcdPath, nil); err != nil {
		return crdsResult{}, err
	}
	return res, nil
}

// crdStartsSideBySide prepares upstream's two etcd data dirs, then times
// the starts of both servers, interleaved. It returns the populated dir.
func (ub *upstreamBench) crdStartsSideBySide(ctx context.Context, cfg config, fresh func(int) string, res *crdsResult) (*upstreamCRDs, string, error) {
	up := &upstreamCRDs{}
	startsDir, populatedDir := ub.upstreamCRDDirs()
	var err error
	if up.setup, _, err = ub.prepareCRDs(ctx, cfg, startsDir, 0); err != nil {
		return nil, "", fmt.Errorf("kube-apiserver, creating %d CRDs: %w", cfg.crds, err)
	}
	progress("kube-apiserver: %d CRDs created and in discovery in %s", cfg.crds, fmtDuration(up.setup))
	if _, up.populate, err = ub.prepareCRDs(ctx, cfg, populatedDir, cfg.crs); err != nil {
		return nil, "", fmt.Errorf("kube-apiserver, creating %d custom resources: %w", cfg.crs, err)
	}
	if res.starts, up.starts, err = ub.benchCRDStarts(ctx, cfg, fresh, startsDir); err != nil {
		return nil, "", err
	}
	return up, populatedDir, os.RemoveAll(startsDir)
}

// populateCustomResources starts a server (which installs the CRDs) on a
// new data dir, creates cfg.crs custom resources of crd with cfg.workers
// concurrent clients, and stops the server.
func populateCustomResources(ctx context.Context, cfg config, dataDir string, crd crdNames) (populateStats, error) {
	return populateWith(ctx, cfg, dataDir, cfg.crs, crd.plural, func(ctx context.Context, s *server) error {
		rc, err := s.restConfig()
		if err != nil {
			return err
		}
		client, err := dynamic.NewForConfig(rc)
		if err != nil {
			return fmt.Errorf("creating dynamic client: %w", err)
		}
		resource := client.Resource(crd.resource()).Namespace(namespace)
		return forEach(ctx, cfg.crs, cfg.workers, func(ctx context.Context, i int) error {
			obj := customResource(crd, i)
			if _, err := resource.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating %s %s: %w", crd.kind, obj.GetName(), err)
			}
			return nil
		})
	})
}

// listCustomResources starts a server for path on the populated data dir,
// times its first LIST of the custom resources, then measures every
// crListVariants listing; with pairs, that measures them, side by side
// with upstream.
func listCustomResources(ctx context.Context, cfg config, dataDir string, crd crdNames, path storagePath,
	pairs func(context.Context, *server) ([]listPair, error)) (run crListRun, err error) {
	label := "LIST custom resources (" + path.name + ")"
	s, err := startServer(ctx, withArgs(cfg, path.args...), dataDir)
	if err != nil {
		return crListRun{}, fmt.Errorf("%s: %w", label, err)
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	client, err := s.listClient(cfg.gzip)
	if err != nil {
		return crListRun{}, err
	}
	rc := client.CoreV1().RESTClient()
	variants := crListVariants(cfg.page, crd)
	run.path = path
	began := time.Now()
	if _, err := listAll(ctx, rc, variants[0], nil); err != nil {
		return crListRun{}, fmt.Errorf("%s, first LIST: %w", label, err)
	}
	run.first = time.Since(began)
	progress("%s: first LIST after the start took %s", label, fmtDuration(run.first))
	if pairs != nil {
		ps, err := pairs(ctx, s)
		if err != nil {
			return crListRun{}, err
		}
		for _, p := range ps {
			run.lists = append(run.lists, crListStats{listStats: p.ours, fromCache: p.fromCache[0], requests: int(p.requests[0]), pair: p})
		}
		return run, nil
	}
	for _, v := range variants {
		st, err := benchCustomResourceList(ctx, cfg, rc, v, crd, label)
		if err != nil {
			return crListRun{}, fmt.Errorf("%s %s: %w", label, v, err)
		}
		run.lists = append(run.lists, st)
	}
	return run, nil
}

// benchCustomResourceList verifies one untimed listing, then times
// cfg.lists listings between two scrapes of the server's allocation and
// watch cache route counters.
func benchCustomResourceList(ctx context.Context, cfg config, rc rest.Interface, v listVariant, crd crdNames, label string) (crListStats, error) {
	st := crListStats{listStats: listStats{variant: v}}
	var err error
	if st.shape, err = verifiedCustomResources(ctx, rc, v, crd, cfg.crs); err != nil {
		return crListStats{}, err
	}
	before, err := scrapeMetrics(ctx, rc, allocBytesTotal, cacheListRequests)
	if err != nil {
		return crListStats{}, err
	}
	if st.times, err = timeListings(ctx, rc, v, cfg.lists); err != nil {
		return crListStats{}, err
	}
	after, err := scrapeMetrics(ctx, rc, allocBytesTotal, cacheListRequests)
	if err != nil {
		return crListStats{}, err
	}
	alloc0, cached0, err0 := crCounters(before, crd)
	alloc1, cached1, err1 := crCounters(after, crd)
	if err := errors.Join(err0, err1); err != nil {
		return crListStats{}, err
	}
	st.allocPerOp = (alloc1 - alloc0) / float64(cfg.lists)
	st.fromCache, st.requests = cached1-cached0, st.shape.pages*cfg.lists
	progress("%s %s: median %s, %s allocated per listing, %.0f of %d requests from the cache", label, v,
		fmtDuration(median(st.times)), fmtBytes(st.allocPerOp), st.fromCache, st.requests)
	return st, nil
}

// crCounters reads the server's cumulative allocated bytes and how many
// LISTs of crd's resource the watch cache has served itself (from its
// latest state or a snapshot; none without a watch cache).
func crCounters(m metrics, crd crdNames) (alloc, fromCache float64, err error) {
	if alloc, err = m.value(allocBytesTotal); err != nil {
		return 0, 0, err
	}
	for _, source := range []string{routeCache, routeSnapshot} {
		n, err := m.sum(cacheListRequests, `group="`+crd.group+`"`, `resource="`+crd.plural+`"`, `source="`+source+`"`)
		if err != nil {
			return 0, 0, err
		}
		fromCache += n
	}
	return alloc, fromCache, nil
}

// verifiedCustomResources lists the custom resources once, decoding every
// page, and checks that the listing holds exactly want distinct objects of
// crd's kind, defaulted, that no page exceeds the limit, and that
// continueToken agrees with the decoded lists.
func verifiedCustomResources(ctx context.Context, rc rest.Interface, v listVariant, crd crdNames, want int) (listing, error) {
	names := make(map[string]bool, want)
	l, err := listAll(ctx, rc, v, func(body []byte) error { return checkCustomResourcePage(body, v, crd, names) })
	if err != nil {
		return listing{}, err
	}
	if len(names) != want {
		return listing{}, fmt.Errorf("got %d %s in %d page(s), want exactly %d", len(names), crd.plural, l.pages, want)
	}
	return l, nil
}

// customResourceList is what checkCustomResourcePage reads of a JSON list.
type customResourceList struct {
	Kind     string          `json:"kind"`
	Metadata metav1.ListMeta `json:"metadata"`
	Items    []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Schedule string `json:"schedule"`
		} `json:"spec"`
	} `json:"items"`
}

// checkCustomResourcePage decodes one response body and adds its objects'
// names to names.
func checkCustomResourcePage(body []byte, v listVariant, crd crdNames, names map[string]bool) error {
	var list customResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return fmt.Errorf("decoding the JSON list: %w", err)
	}
	token, err := continueToken(body, v.accept)
	switch {
	case list.Kind != crd.kind+"List":
		return fmt.Errorf("got a list of kind %q, want %sList", list.Kind, crd.kind)
	case v.limit > 0 && len(list.Items) > v.limit:
		return fmt.Errorf("got %d items with limit=%d", len(list.Items), v.limit)
	case err != nil:
		return err
	case token != list.Metadata.Continue:
		return fmt.Errorf("extracted continue token %q, decoded %q", token, list.Metadata.Continue)
	case v.limit == 0 && token != "":
		return fmt.Errorf("got continue token %q without a limit", token)
	}
	for _, item := range list.Items {
		name := item.Metadata.Name
		switch {
		case names[name]:
			return fmt.Errorf("%s %s listed twice", crd.kind, name)
		case item.Spec.Schedule != defaultSchedule:
			return fmt.Errorf("%s %s has spec.schedule %q, want the default %q", crd.kind, name, item.Spec.Schedule, defaultSchedule)
		}
		names[name] = true
	}
	return nil
}

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
	"os"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// crdServedTimeout bounds the wait for kube-apiserver to serve the CRDs.
const crdServedTimeout = 2 * time.Minute

// upstreamCRDs is the crds section on kube-apiserver.
type upstreamCRDs struct {
	setup    time.Duration   // creating the CRDs in the starts' etcd until served
	starts   []upstreamStart // on an etcd data dir holding the CRDs
	populate populateStats   // creating the custom resources through kube-apiserver
	lists    []listPair      // in crListVariants order: miniapiserver's cache server, then kube-apiserver
}

// upstreamStart is one start of kube-apiserver on an etcd holding CRDs.
type upstreamStart struct {
	readyz time.Duration // from etcd's exec to the first 200 from /readyz
	served time.Duration // from etcd's exec until every CRD's resource is in discovery
	stop   time.Duration // SIGTERM→exit of kube-apiserver, then etcd
}

func (u *upstreamCRDs) servedTimes() []time.Duration {
	times := make([]time.Duration, len(u.starts))
	for i, st := range u.starts {
		times[i] = st.served
	}
	return times
}

func (u *upstreamCRDs) readyzTimes() []time.Duration {
	times := make([]time.Duration, len(u.starts))
	for i, st := range u.starts {
		times[i] = st.readyz
	}
	return times
}

func (u *upstreamCRDs) stopTimes() []time.Duration {
	times := make([]time.Duration, len(u.starts))
	for i, st := range u.starts {
		times[i] = st.stop
	}
	return times
}

// benchCRDStarts times cfg.starts starts of miniapiserver with --crds on
// fresh data dirs, each followed by a start of kube-apiserver and its etcd
// on dir, which holds the same CRDs (prepareCRDs), restarted on it each
// time.
func (ub *upstreamBench) benchCRDStarts(ctx context.Context, cfg config, fresh func(int) string, dir string) (startStats, []upstreamStart, error) {
	var ours startStats
	var theirs []upstreamStart
	for i := range cfg.starts {
		run, version, err := startStop(ctx, cfg, fresh(i))
		if err = errors.Join(err, os.RemoveAll(fresh(i))); err != nil {
			return startStats{}, nil, fmt.Errorf("start-to-ready (%d CRDs), run %d/%d: %w", cfg.crds, i+1, cfg.starts, err)
		}
		ours.runs, ours.version = append(ours.runs, run), version
		urun, err := ub.crdStart(ctx, cfg, dir)
		if err != nil {
			return startStats{}, nil, fmt.Errorf("kube-apiserver start-to-ready (%d CRDs), run %d/%d: %w", cfg.crds, i+1, cfg.starts, err)
		}
		theirs = append(theirs, urun)
		progress("start-to-ready (%d CRDs) %d/%d: miniapiserver ready in %s, stopped in %s; kube-apiserver /readyz in %s, CRDs in discovery in %s, stopped in %s",
			cfg.crds, i+1, cfg.starts, fmtDuration(run.ready), fmtDuration(run.stop), fmtDuration(urun.readyz), fmtDuration(urun.served), fmtDuration(urun.stop))
	}
	return ours, theirs, nil
}

// crdStart starts upstream on dir, waits until every CRD's resource is in
// discovery, and stops it.
func (ub *upstreamBench) crdStart(ctx context.Context, cfg config, dir string) (upstreamStart, error) {
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return upstreamStart{}, err
	}
	run := upstreamStart{readyz: u.ready}
	err = awaitCRDsInDiscovery(ctx, u.api, cfg.crds)
	run.served = time.Since(u.began)
	if err = errors.Join(err, u.Stop()); err != nil {
		return upstreamStart{}, err
	}
	run.stop = u.stopped
	return run, nil
}

// prepareCRDs starts upstream on a fresh dir, creates the CRDs of the
// manifests writeCRDManifests writes, waits until they are Established and
// in discovery, creates crs custom resources of the first (if any) with
// cfg.workers clients, and stops it. It returns how long the CRDs and the
// custom resources took.
func (ub *upstreamBench) prepareCRDs(ctx context.Context, cfg config, dir string, crs int) (crdsTook time.Duration, st populateStats, err error) {
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return 0, populateStats{}, err
	}
	defer func() { err = errors.Join(err, u.Stop()) }()
	rc, err := u.api.restConfig()
	if err != nil {
		return 0, populateStats{}, err
	}
	client, err := dynamic.NewForConfig(rc)
	if err != nil {
		return 0, populateStats{}, fmt.Errorf("creating dynamic client: %w", err)
	}
	began := time.Now()
	crdResource := apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
	for i := range cfg.crds {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crdManifest(benchCRD(i)))
		if err != nil {
			return 0, populateStats{}, err
		}
		if _, err := client.Resource(crdResource).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			return 0, populateStats{}, fmt.Errorf("creating CRD %s: %w", benchCRD(i).kind, err)
		}
	}
	if err := awaitCRDsInDiscovery(ctx, u.api, cfg.crds); err != nil {
		return 0, populateStats{}, err
	}
	crdsTook = time.Since(began)
	if crs == 0 {
		return crdsTook, populateStats{}, nil
	}
	if err := ensureNamespace(ctx, u.api); err != nil {
		return 0, populateStats{}, err
	}
	crd := benchCRD(0)
	progress("kube-apiserver populate: creating %d %s with %d clients", crs, crd.plural, cfg.workers)
	resource := client.Resource(crd.resource()).Namespace(namespace)
	began = time.Now()
	err = forEach(ctx, crs, cfg.workers, func(ctx context.Context, i int) error {
		obj := customResource(crd, i)
		if _, err := resource.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating %s %s: %w", crd.kind, obj.GetName(), err)
		}
		return nil
	})
	st = populateStats{objects: crs, duration: time.Since(began)}
	progress("kube-apiserver populate: done in %s (%.0f creates/s)", fmtDuration(st.duration), float64(crs)/st.duration.Seconds())
	return crdsTook, st, err
}

// awaitCRDsInDiscovery polls discovery every readyzPoll until the resource
// of each of the first n bench CRDs is in its group version's resource
// list, or crdServedTimeout passes.
func awaitCRDsInDiscovery(ctx context.Context, api *server, n int) error {
	client, err := api.client()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(crdServedTimeout)
	for i := 0; i < n; {
		crd := benchCRD(i)
		list, err := client.Discovery().ServerResourcesForGroupVersion(crd.group + "/" + crdVersion)
		if err == nil && hasResource(list, crd.plural) {
			i++
			continue
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not in discovery within %s (last error: %v)", crd.resource(), crdServedTimeout, err)
		}
		select {
		case <-time.After(readyzPoll):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func hasResource(list *metav1.APIResourceList, plural string) bool {
	for _, r := range list.APIResources {
		if r.Name == plural {
			return true
		}
	}
	return false
}

// benchCRListPairs runs every crListVariants listing of the custom
// resources on miniapiserver s and on upstream started on dir, interleaved.
func (ub *upstreamBench) benchCRListPairs(ctx context.Context, cfg config, s *server, dir string, crd crdNames) (pairs []listPair, err error) {
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver LIST custom resources: %w", err)
	}
	defer func() { err = errors.Join(err, u.Stop()) }()
	if err := awaitCRDsInDiscovery(ctx, u.api, 1); err != nil {
		return nil, err
	}
	sides, err := listSidesWith(ctx, cfg, s, u, nil)
	if err != nil {
		return nil, err
	}
	verify := func(ctx context.Context, rc rest.Interface, v listVariant, want int) (listing, error) {
		return verifiedCustomResources(ctx, rc, v, crd, want)
	}
	sides[0].counters = func(ctx context.Context) (float64, float64, error) {
		m, err := scrapeMetrics(ctx, sides[0].rc, allocBytesTotal, cacheListRequests)
		if err != nil {
			return 0, 0, err
		}
		return crCounters(m, crd)
	}
	sides[1].counters = upstreamListSide(sides[1].rc, u.etcdURL, crd.plural).counters
	for i := range sides {
		sides[i].verify = verify
	}
	for _, v := range crListVariants(cfg.page, crd) {
		p, err := benchListPair(ctx, "LIST custom resources", sides, v, cfg.crs, cfg.lists)
		if err != nil {
			return nil, fmt.Errorf("LIST custom resources %s: %w", v, err)
		}
		pairs = append(pairs, p)
	}
	return pairs, nil
}

// upstreamCRDDirs are where the crds section keeps upstream's etcd data:
// the CRDs only, and the CRDs with the custom resources.
func (ub *upstreamBench) upstreamCRDDirs() (starts, populated string) {
	return filepath.Join(ub.root, "upstream-crds-starts"), filepath.Join(ub.root, "upstream-crds-populated")
}

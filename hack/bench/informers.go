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
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

const (
	secretWorkers = 4                // concurrent clients creating the Secrets
	syncTimeout   = 5 * time.Minute  // for every informer of a round to sync
	drainTimeout  = 30 * time.Second // for the server to end a round's watches
	protobufFirst = acceptProtobuf + "," + acceptJSON
)

// informerMode is how the informers fill their caches. The servers run
// with their defaults in both: the client chooses, with client-go's
// WatchListClient gate, which the bench sets in-process for each round.
type informerMode struct {
	name      string // "watch-list" or "LIST"
	watchList bool   // client-go's WatchListClient gate during its rounds
}

var (
	watchListMode = informerMode{name: "watch-list", watchList: true}
	listMode      = informerMode{name: "LIST", watchList: false}
	// informerModes are the modes in the order each round runs them.
	informerModes = []informerMode{watchListMode, listMode}
)

// gate is how the report names the mode's client-go setting.
func (m informerMode) gate() string {
	return fmt.Sprintf("client-go %s=%t", clientfeatures.WatchListClient, m.watchList)
}

// setWatchListClient sets client-go's WatchListClient gate for this
// process, through the Set method of client-go's default gates (which
// KUBE_FEATURE_WatchListClient would otherwise set, once, for the whole
// process). Reflectors read the gate when they are created, so it holds
// for the informers started after the call.
func setWatchListClient(on bool) error {
	gates, ok := clientfeatures.FeatureGates().(interface {
		Set(clientfeatures.Feature, bool) error
	})
	if !ok {
		return fmt.Errorf("client-go's feature gates (%T) cannot be set in-process", clientfeatures.FeatureGates())
	}
	if err := gates.Set(clientfeatures.WatchListClient, on); err != nil {
		return fmt.Errorf("setting client-go's %s gate: %w", clientfeatures.WatchListClient, err)
	}
	return nil
}

// informerRound is one start of all the informers on one server.
type informerRound struct {
	sync     time.Duration // from starting them to the last one synced
	baseline float64       // server heap in use after a forced GC, before they started
	peak     float64       // largest heap in use sampled while they synced
	// sampler is what the sampler's own scrapes had left on the heap at the
	// sample of the largest net growth (see netPeak).
	sampler float64
	netPeak float64     // largest heap in use less the sampler's scrapes
	samples int         // heap samples taken while they synced
	lists   float64     // LISTs of Secrets in the namespace the server answered meanwhile
	watches float64     // and watches (watch-lists included)
	series  []heapPoint // the heap samples, for the picture
}

// growth is the round's peak heap growth net of the sampler's own scrapes.
func (r informerRound) growth() float64 { return r.netPeak - r.baseline }

// rawGrowth is the largest heap sampled over the baseline, the sampler's
// scrapes included.
func (r informerRound) rawGrowth() float64 { return r.peak - r.baseline }

// netOfSampler sets the round's peak and net peak from its series, given
// what one scrape of the sampler allocates (perSample). A scrape's garbage
// stays on the heap until the next GC, which shows as a drop in the series:
// at each sample, the scrapes since the last drop (or since the baseline,
// itself after a GC), this one included, are subtracted.
func (r *informerRound) netOfSampler(perSample float64) {
	since := 0
	for i, p := range r.series {
		if i > 0 && p.bytes < r.series[i-1].bytes {
			since = 0
		}
		since++
		r.peak = max(r.peak, p.bytes)
		if sampler := float64(since) * perSample; i == 0 || p.bytes-sampler > r.netPeak {
			r.netPeak, r.sampler = p.bytes-sampler, sampler
		}
	}
	r.netPeak = max(r.netPeak, r.baseline)
}

// informerStats are the rounds of one mode on one server.
type informerStats struct {
	mode      informerMode
	rounds    []informerRound
	perSample float64 // what one heap sample allocates on the server (informerSide.perSample)
}

// perRound is f of each of st's rounds, in order.
func perRound[T any](st informerStats, f func(informerRound) T) []T {
	out := make([]T, 0, len(st.rounds))
	for _, round := range st.rounds {
		out = append(out, f(round))
	}
	return out
}

func (st informerStats) lists() []float64 {
	return perRound(st, func(r informerRound) float64 { return r.lists })
}

func (st informerStats) watches() []float64 {
	return perRound(st, func(r informerRound) float64 { return r.watches })
}

func (st informerStats) syncTimes() []time.Duration {
	return perRound(st, func(r informerRound) time.Duration { return r.sync })
}

func (st informerStats) growths() []float64 { return perRound(st, informerRound.growth) }

func (st informerStats) rawGrowths() []float64 { return perRound(st, informerRound.rawGrowth) }

func (st informerStats) samplers() []float64 {
	return perRound(st, func(r informerRound) float64 { return r.sampler })
}

func (st informerStats) baselines() []float64 {
	return perRound(st, func(r informerRound) float64 { return r.baseline })
}

// medianRound is the round of median peak heap growth (of two middle
// ones, the smaller), whose samples the heap picture draws.
func (st informerStats) medianRound() informerRound {
	sorted := slices.SortedStableFunc(slices.Values(st.rounds), func(a, b informerRound) int {
		return cmp.Compare(a.growth(), b.growth())
	})
	return sorted[(len(sorted)-1)/2]
}

// informersResult is the informer memory benchmark.
type informersResult struct {
	populate  time.Duration // creating the Secrets
	watchList informerStats
	list      informerStats
	upstream  *upstreamInformers // with -upstream
	heapSVG   string             // the heap picture as the report links it; "": none written
}

// upstreamInformers are the same rounds on kube-apiserver, interleaved with
// miniapiserver's.
type upstreamInformers struct {
	populate  time.Duration // creating the same Secrets through it
	watchList informerStats
	list      informerStats
}

// informerSide is one server the informer rounds run on.
type informerSide struct {
	name  string         // "miniapiserver" or "kube-apiserver"
	rc    *rest.Config   // the informers' config
	admin rest.Interface // scrapes, forced GCs, the warm-up LIST
	// etcdURL is upstream's etcd, whose heap counts with kube-apiserver's
	// (miniapiserver's etcd is embedded, in its heap); "" for miniapiserver.
	etcdURL string
	stats   map[string]*informerStats // by mode name
	// perSample is what one heap sample's scrapes allocate in the server
	// (and its etcd), measured alone (measureSampler).
	perSample float64
}

// samplerRuns is how many samples measureSampler takes.
const samplerRuns = 20

// measureSampler takes samplerRuns heap samples back to back on the idle
// server, after a forced GC, and sets perSample to the heap's growth per
// sample: a /metrics scrape allocates about a MiB in either server, which
// would otherwise count as the informers' (a round takes 20-50 samples).
func (s *informerSide) measureSampler(ctx context.Context) error {
	if _, _, err := s.heapAfterGC(ctx); err != nil {
		return err
	}
	var first, last float64
	for i := range samplerRuns {
		heap, err := s.heap(ctx)
		if err != nil {
			return err
		}
		if i == 0 {
			first = heap
		}
		if heap < last {
			return fmt.Errorf("measuring the heap sampler on %s: the server collected garbage meanwhile (heap %s after %s)", s.name, fmtBytes(heap), fmtBytes(last))
		}
		last = heap
	}
	s.perSample = (last - first) / (samplerRuns - 1)
	progress("informers: a heap sample allocates %s in %s", fmtBytes(s.perSample), s.name)
	return nil
}

// benchInformers creates the Secrets in a data dir of their own (and, with
// ub, through upstream in its own etcd), starts each server on them once,
// and runs cfg.informerRounds rounds of every mode on each, interleaved:
// per round, watch-list on miniapiserver then on upstream, then LIST on
// each.
func benchInformers(ctx context.Context, cfg config, root string, ub *upstreamBench) (res informersResult, err error) {
	dir := filepath.Join(root, "secrets")
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	if res.populate, err = populateSecrets(ctx, cfg, dir); err != nil {
		return informersResult{}, fmt.Errorf("informers: %w", err)
	}
	var upstreamDir string
	if ub != nil {
		upstreamDir = filepath.Join(ub.root, "upstream-secrets")
		defer func() { err = errors.Join(err, os.RemoveAll(upstreamDir)) }()
		res.upstream = &upstreamInformers{}
		if res.upstream.populate, err = ub.populateSecrets(ctx, cfg, upstreamDir); err != nil {
			return informersResult{}, err
		}
	}

	s, err := startServer(ctx, cfg, dir)
	if err != nil {
		return informersResult{}, fmt.Errorf("informers: %w", err)
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	res.watchList, res.list = informerStats{mode: watchListMode}, informerStats{mode: listMode}
	ours, err := newInformerSide(cfg, "miniapiserver", s, "", &res.watchList, &res.list)
	if err != nil {
		return informersResult{}, err
	}
	sides := []*informerSide{ours}
	if ub != nil {
		u, err := startUpstream(ctx, ub.bins, ub.pki, upstreamDir)
		if err != nil {
			return informersResult{}, fmt.Errorf("informers: kube-apiserver: %w", err)
		}
		defer func() { err = errors.Join(err, u.Stop()) }()
		res.upstream.watchList, res.upstream.list = informerStats{mode: watchListMode}, informerStats{mode: listMode}
		theirs, err := newInformerSide(cfg, "kube-apiserver", u.api, u.etcdURL, &res.upstream.watchList, &res.upstream.list)
		if err != nil {
			return informersResult{}, err
		}
		sides = append(sides, theirs)
	}
	for _, side := range sides {
		// Untimed: an RV=0 LIST with limit 1, which with a watch cache that
		// is not ready yet waits for it (and may return every item).
		if _, err := side.admin.Get().Namespace(namespace).Resource("secrets").
			Param("resourceVersion", "0").Param("limit", "1").DoRaw(ctx); err != nil {
			return informersResult{}, fmt.Errorf("informers (%s): listing Secrets: %w", side.name, err)
		}
		if err := side.measureSampler(ctx); err != nil {
			return informersResult{}, fmt.Errorf("informers: %w", err)
		}
		for _, st := range side.stats {
			st.perSample = side.perSample
		}
	}

	before := clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	defer func() { err = errors.Join(err, setWatchListClient(before)) }()
	for i := range cfg.informerRounds {
		for _, m := range informerModes {
			if err := setWatchListClient(m.watchList); err != nil {
				return informersResult{}, err
			}
			for _, side := range sides {
				round, err := runInformerRound(ctx, cfg, side)
				if err != nil {
					return informersResult{}, fmt.Errorf("informers (%s, %s), round %d/%d: %w", side.name, m.name, i+1, cfg.informerRounds, err)
				}
				progress("informers (%s) %d/%d on %s: %d synced in %s; heap %s at start, peak +%s (%d samples; +%s less %s of the sampler's); %.0f Secret LISTs, %.0f watches",
					m.name, i+1, cfg.informerRounds, side.name, cfg.informers, fmtDuration(round.sync), fmtBytes(round.baseline),
					fmtBytes(round.growth()), round.samples, fmtBytes(round.rawGrowth()), fmtBytes(round.sampler), round.lists, round.watches)
				st := side.stats[m.name]
				st.rounds = append(st.rounds, round)
			}
		}
	}
	return res, nil
}

// newInformerSide is the side of api, whose informers' rounds go to
// watchList and list.
func newInformerSide(cfg config, name string, api *server, etcdURL string, watchList, list *informerStats) (*informerSide, error) {
	rc, err := api.restConfig()
	if err != nil {
		return nil, err
	}
	rc.Timeout = 0 // the informers' watches stream for as long as a round takes
	rc.ContentType, rc.AcceptContentTypes = acceptProtobuf, protobufFirst
	rc.DisableCompression = !cfg.gzip
	admin, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return &informerSide{name: name, rc: rc, admin: admin.CoreV1().RESTClient(), etcdURL: etcdURL,
		stats: map[string]*informerStats{watchListMode.name: watchList, listMode.name: list}}, nil
}

// heapAfterGC forces a GC in the server (and in upstream's etcd), then
// returns a scrape of its request counts and its heap in use (plus etcd's).
func (s *informerSide) heapAfterGC(ctx context.Context) (metrics, float64, error) {
	return heapWithEtcdAfterGC(ctx, s.admin, s.etcdURL, requestTotal)
}

// heap is one sample of the server's heap in use (plus its etcd's, scraped
// at the same time).
func (s *informerSide) heap(ctx context.Context) (float64, error) {
	var etcd float64
	var etcdErr error
	var scraping sync.WaitGroup
	if s.etcdURL != "" {
		scraping.Go(func() { etcd, etcdErr = etcdHeapInuse(ctx, s.etcdURL) })
	}
	m, err := scrapeMetrics(ctx, s.admin, heapInuseBytes)
	var heap float64
	if err == nil {
		heap, err = m.value(heapInuseBytes)
	}
	scraping.Wait()
	return heap + etcd, errors.Join(err, etcdErr)
}

// populateSecrets starts a server on dataDir, creates cfg.secrets Secrets of
// cfg.secretSize random bytes each, and stops it.
func populateSecrets(ctx context.Context, cfg config, dataDir string) (time.Duration, error) {
	s, err := startServer(ctx, cfg, dataDir)
	if err != nil {
		return 0, err
	}
	progress("informers: creating %d Secrets of %s", cfg.secrets, fmtBytes(float64(cfg.secretSize)))
	began := time.Now()
	err = createSecrets(ctx, s, cfg)
	took := time.Since(began)
	if err = errors.Join(err, s.Stop()); err != nil {
		return 0, err
	}
	return took, nil
}

// populateSecrets starts upstream on dir, creates the same Secrets as
// populateSecrets does for miniapiserver (the namespace first, which
// kube-apiserver's own controller may not have made yet), and stops it.
func (ub *upstreamBench) populateSecrets(ctx context.Context, cfg config, dir string) (time.Duration, error) {
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return 0, fmt.Errorf("informers: kube-apiserver: %w", err)
	}
	progress("informers: creating %d Secrets of %s through kube-apiserver", cfg.secrets, fmtBytes(float64(cfg.secretSize)))
	began := time.Now()
	err = ensureNamespace(ctx, u.api)
	if err == nil {
		err = createSecrets(ctx, u.api, cfg)
	}
	took := time.Since(began)
	if err = errors.Join(err, u.Stop()); err != nil {
		return 0, fmt.Errorf("informers: kube-apiserver: %w", err)
	}
	return took, nil
}

func createSecrets(ctx context.Context, s *server, cfg config) error {
	rc, err := s.restConfig()
	if err != nil {
		return err
	}
	rc.ContentType = acceptProtobuf
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	return forEach(ctx, cfg.secrets, secretWorkers, func(ctx context.Context, i int) error {
		data := make([]byte, cfg.secretSize)
		_, _ = rand.NewChaCha8([32]byte{byte(i), byte(i >> 8), byte(i >> 16)}).Read(data)
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-secret-%04d", i)},
			Data:       map[string][]byte{"payload": data},
		}
		if _, err := client.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating Secret %s: %w", secret.Name, err)
		}
		return nil
	})
}

// runInformerRound forces a server GC, then starts cfg.informers informers
// at once and samples the server's heap until all have synced; once they
// have stopped and the server has ended their watches, it counts the
// Secret LISTs and watches the server answered.
func runInformerRound(ctx context.Context, cfg config, side *informerSide) (informerRound, error) {
	if err := awaitNoSecretWatches(ctx, side.admin); err != nil {
		return informerRound{}, err
	}
	before, baseline, err := side.heapAfterGC(ctx)
	if err != nil {
		return informerRound{}, err
	}
	round := informerRound{baseline: baseline}
	began := time.Now()
	sampler := &heapSampler{heap: side.heap, period: cfg.heapSample, origin: began}
	samplingCtx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	var sampling sync.WaitGroup
	sampling.Go(func() { sampler.run(samplingCtx) })

	set, err := startInformers(ctx, side.rc, cfg.informers)
	if err != nil {
		return informerRound{}, err
	}
	defer set.stop()
	err = set.waitSynced(ctx)
	round.sync = time.Since(began)
	stopSampling()
	sampling.Wait()
	if err != nil {
		return informerRound{}, err
	}
	if round.series, err = sampler.result(); err != nil {
		return informerRound{}, err
	}
	round.samples = len(round.series)
	round.netOfSampler(side.perSample)
	if err := set.verify(cfg.secrets); err != nil {
		return informerRound{}, err
	}
	// A LIST informer has synced before it sends its WATCH: let every
	// informer open it (or drainTimeout pass; the count then shows it),
	// so that the rounds' watch counts compare.
	if _, err := awaitSecretWatches(ctx, side.admin, func(open float64) bool { return open >= float64(cfg.informers) }); err != nil {
		return informerRound{}, err
	}
	set.stop()
	if err := awaitNoSecretWatches(ctx, side.admin); err != nil {
		return informerRound{}, err
	}
	return round, countRequests(ctx, side.admin, before, &round)
}

// secretLabels select the bench's Secret requests: kube-apiserver's own
// loopback informer lists and watches Secrets in every namespace
// (scope="cluster").
var secretLabels = []string{`resource="secrets"`, `scope="namespace"`}

// awaitNoSecretWatches waits until the server has let go of the previous
// round's watches, so that the forced GC can free what they held and the
// request counts include them (the server counts a watch when it ends).
func awaitNoSecretWatches(ctx context.Context, admin rest.Interface) error {
	open, err := awaitSecretWatches(ctx, admin, func(open float64) bool { return open == 0 })
	if err == nil && open > 0 {
		err = fmt.Errorf("the server still serves %.0f Secret watches %s after the round", open, drainTimeout)
	}
	return err
}

// awaitSecretWatches polls the server's open Secret watches in the
// namespace until done says so or drainTimeout has passed, and returns the
// last count.
func awaitSecretWatches(ctx context.Context, admin rest.Interface, done func(open float64) bool) (float64, error) {
	deadline := time.Now().Add(drainTimeout)
	for {
		m, err := scrapeMetrics(ctx, admin, longRunning)
		if err != nil {
			return 0, err
		}
		open, err := m.sum(longRunning, append(slices.Clone(secretLabels), `verb="WATCH"`)...)
		if err != nil || done(open) || time.Now().After(deadline) {
			return open, err
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// countRequests sets round.lists and round.watches to the Secret LISTs and
// watches in the namespace that the server answered since before, by
// apiserver_request_total, which both servers have.
func countRequests(ctx context.Context, admin rest.Interface, before metrics, round *informerRound) error {
	after, err := scrapeMetrics(ctx, admin, requestTotal)
	if err != nil {
		return err
	}
	var errs []error
	delta := func(verb string) float64 {
		labels := append(slices.Clone(secretLabels), `verb="`+verb+`"`)
		n0, err0 := before.sum(requestTotal, labels...)
		n1, err1 := after.sum(requestTotal, labels...)
		errs = append(errs, err0, err1)
		return n1 - n0
	}
	round.lists, round.watches = delta("LIST"), delta("WATCH")
	return errors.Join(errs...)
}

// informerSet is the informers of one round, each on a client and so a
// connection of its own.
type informerSet struct {
	informers []cache.SharedIndexInformer
	clients   []*http.Client
	cancel    context.CancelFunc
	running   sync.WaitGroup
	stopOnce  sync.Once
}

// startInformers creates n Secret informers, then starts them all.
func startInformers(ctx context.Context, rc *rest.Config, n int) (*informerSet, error) {
	ctx, cancel := context.WithCancel(ctx)
	set := &informerSet{cancel: cancel}
	for range n {
		client, hc, err := ownClient(rc)
		if err != nil {
			set.stop()
			return nil, err
		}
		set.clients = append(set.clients, hc)
		informer := coreinformers.NewSecretInformer(client, namespace, 0, nil)
		err = errors.Join(informer.SetTransform(dropSecretData), informer.SetWatchErrorHandlerWithContext(quietWhenStopped))
		if err != nil {
			set.stop()
			return nil, fmt.Errorf("configuring the informer: %w", err)
		}
		set.informers = append(set.informers, informer)
	}
	for _, informer := range set.informers {
		set.running.Go(func() { informer.RunWithContext(ctx) })
	}
	return set, nil
}

// dropSecretData keeps the bench's own memory small: the informers hold
// names and metadata only (the server sends the data all the same).
func dropSecretData(obj any) (any, error) {
	if secret, ok := obj.(*corev1.Secret); ok {
		secret.Data = nil
	}
	return obj, nil
}

// quietWhenStopped is client-go's watch error handler, except that it drops
// the errors of watches that a round's end cancelled.
func quietWhenStopped(ctx context.Context, r *cache.Reflector, err error) {
	if ctx.Err() == nil {
		cache.DefaultWatchErrorHandler(ctx, r, err)
	}
}

// waitSynced waits until every informer has synced, for up to syncTimeout.
func (s *informerSet) waitSynced(ctx context.Context) error {
	timer := time.NewTimer(syncTimeout)
	defer timer.Stop()
	for i, informer := range s.informers {
		select {
		case <-informer.HasSyncedChecker().Done():
		case <-timer.C:
			return fmt.Errorf("informer %d of %d not synced within %s", i+1, len(s.informers), syncTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// verify checks that every informer holds exactly want Secrets.
func (s *informerSet) verify(want int) error {
	for i, informer := range s.informers {
		if got := len(informer.GetStore().ListKeys()); got != want {
			return fmt.Errorf("informer %d holds %d Secrets, want %d", i+1, got, want)
		}
	}
	return nil
}

// stop stops the informers, waits for them and closes their connections.
// It is safe to call more than once.
func (s *informerSet) stop() {
	s.stopOnce.Do(func() {
		s.cancel()
		s.running.Wait()
		for _, hc := range s.clients {
			closeIdle(hc)
		}
	})
}

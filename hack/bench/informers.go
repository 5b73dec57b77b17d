package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// informerMode is how the server lets informers fill their caches.
type informerMode struct {
	name string   // "watch-list" or "LIST"
	args []string // server flags selecting it
}

var (
	watchListMode = informerMode{name: "watch-list"}
	listMode      = informerMode{name: "LIST", args: []string{"--feature-gates=ConsistentWatchList=false"}}
)

// informerRound is one start of all the informers.
type informerRound struct {
	sync     time.Duration // from starting them to the last one synced
	baseline float64       // server heap in use after a forced GC, before they started
	peak     float64       // largest heap in use sampled while they synced
	samples  int           // heap samples taken while they synced
	lists    float64       // LISTs of Secrets the server answered meanwhile
}

func (r informerRound) growth() float64 { return r.peak - r.baseline }

// informerStats are the rounds of one variant.
type informerStats struct {
	mode   informerMode
	rounds []informerRound
}

func (st informerStats) lists() []float64 {
	var lists []float64
	for _, round := range st.rounds {
		lists = append(lists, round.lists)
	}
	return lists
}

func (st informerStats) syncTimes() []time.Duration {
	var times []time.Duration
	for _, round := range st.rounds {
		times = append(times, round.sync)
	}
	return times
}

func (st informerStats) growths() []float64 {
	var growths []float64
	for _, round := range st.rounds {
		growths = append(growths, round.growth())
	}
	return growths
}

// informersResult is the informer memory benchmark.
type informersResult struct {
	populate  time.Duration // creating the Secrets
	watchList informerStats
	list      informerStats
}

// benchInformers creates the Secrets in a data dir of their own, then runs
// the informer rounds on a server with watch-list and on one without.
func benchInformers(ctx context.Context, cfg config, root string) (res informersResult, err error) {
	dir := filepath.Join(root, "secrets")
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	if res.populate, err = populateSecrets(ctx, cfg, dir); err != nil {
		return informersResult{}, fmt.Errorf("informers: %w", err)
	}
	if res.watchList, err = informerRounds(ctx, cfg, dir, watchListMode); err != nil {
		return informersResult{}, err
	}
	if res.list, err = informerRounds(ctx, cfg, dir, listMode); err != nil {
		return informersResult{}, err
	}
	return res, nil
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

// informerRounds starts a server for the variant on the Secrets' data dir
// and runs cfg.informerRounds rounds on it.
func informerRounds(ctx context.Context, cfg config, dataDir string, m informerMode) (st informerStats, err error) {
	s, err := startServer(ctx, withArgs(cfg, m.args...), dataDir)
	if err != nil {
		return informerStats{}, fmt.Errorf("informers (%s): %w", m.name, err)
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	rc, err := s.restConfig()
	if err != nil {
		return informerStats{}, err
	}
	rc.Timeout = 0 // the informers' watches stream for as long as a round takes
	rc.ContentType, rc.AcceptContentTypes = acceptProtobuf, protobufFirst
	rc.DisableCompression = !cfg.gzip
	admin, adminHTTP, err := ownClient(rc)
	if err != nil {
		return informerStats{}, err
	}
	defer closeIdle(adminHTTP)
	// Untimed: an RV=0 LIST with limit 1, which with a watch cache that is
	// not ready yet waits for it (and may return every item).
	if _, err := admin.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 1}); err != nil {
		return informerStats{}, fmt.Errorf("informers (%s): listing Secrets: %w", m.name, err)
	}
	st.mode = m
	for i := range cfg.informerRounds {
		round, err := runInformerRound(ctx, cfg, rc, admin.CoreV1().RESTClient())
		if err != nil {
			return informerStats{}, fmt.Errorf("informers (%s), round %d/%d: %w", m.name, i+1, cfg.informerRounds, err)
		}
		progress("informers (%s) %d/%d: %d synced in %s; server heap %s at start, peak +%s (%d samples); %.0f LISTs",
			m.name, i+1, cfg.informerRounds, cfg.informers, fmtDuration(round.sync), fmtBytes(round.baseline),
			fmtBytes(round.growth()), round.samples, round.lists)
		st.rounds = append(st.rounds, round)
	}
	return st, nil
}

// runInformerRound forces a server GC, then starts cfg.informers informers
// at once and samples the server's heap until all have synced.
func runInformerRound(ctx context.Context, cfg config, rc *rest.Config, admin rest.Interface) (informerRound, error) {
	if err := awaitNoSecretWatches(ctx, admin); err != nil {
		return informerRound{}, err
	}
	before, baseline, err := heapAfterGC(ctx, admin, requestTotal)
	if err != nil {
		return informerRound{}, err
	}
	round := informerRound{baseline: baseline}
	sampler := &heapSampler{rc: admin, period: cfg.heapSample}
	samplingCtx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	var sampling sync.WaitGroup
	sampling.Go(func() { sampler.run(samplingCtx) })

	began := time.Now()
	set, err := startInformers(ctx, rc, cfg.informers)
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
	if round.peak, round.samples, err = sampler.result(); err != nil {
		return informerRound{}, err
	}
	if err := set.verify(cfg.secrets); err != nil {
		return informerRound{}, err
	}
	set.stop()
	return round, countLists(ctx, admin, before, &round)
}

// awaitNoSecretWatches waits until the server has let go of the previous
// round's watches, so that the forced GC can free what they held.
func awaitNoSecretWatches(ctx context.Context, admin rest.Interface) error {
	deadline := time.Now().Add(drainTimeout)
	for {
		m, err := scrapeMetrics(ctx, admin, longRunning)
		if err != nil {
			return err
		}
		open, err := m.sum(longRunning, `resource="secrets"`, `verb="WATCH"`)
		switch {
		case err != nil:
			return err
		case open == 0:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("the server still serves %.0f Secret watches %s after the previous round", open, drainTimeout)
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// countLists sets round.lists to the Secret LISTs answered since before.
func countLists(ctx context.Context, admin rest.Interface, before metrics, round *informerRound) error {
	after, err := scrapeMetrics(ctx, admin, requestTotal)
	if err != nil {
		return err
	}
	labels := []string{`resource="secrets"`, `verb="LIST"`}
	n0, err0 := before.sum(requestTotal, labels...)
	n1, err1 := after.sum(requestTotal, labels...)
	round.lists = n1 - n0
	return errors.Join(err0, err1)
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

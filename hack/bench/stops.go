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
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	stopKillAfter    = 2 * time.Minute  // SIGTERM→SIGKILL: past the HTTP server's minute-long shutdown timeout
	stopOpenTimeout  = 30 * time.Second // for the server to count every watch as open
	stopDrainTimeout = 30 * time.Second // for every stream to end once the server has exited
)

// stopRun is one stop of a server with watches open.
type stopRun struct {
	stop         time.Duration // from SIGTERM to exit (to the SIGKILL, if killed)
	killed       bool          // still running stopKillAfter after SIGTERM
	conns        int           // HTTP/2 connections the watches were spread over
	bookmarkable int           // watches that allowed bookmarks
	bookmarked   int           // of those, the ones that ended after exactly one BOOKMARK
	stray        int           // watches that got anything else (events, or a BOOKMARK they did not allow)
	strayFirst   string        // what the first of them got, e.g. "[ERROR]"
	unended      int           // streams still open stopDrainTimeout after the exit
}

// stopStats are the rounds of one variant.
type stopStats struct {
	path     storagePath
	upstream bool // kube-apiserver with its defaults (path is then unset)
	watches  int  // open at SIGTERM; 0: the control, with one idle client connection only
	runs     []stopRun
}

func (st stopStats) stopTimes() []time.Duration {
	times := make([]time.Duration, len(st.runs))
	for i, run := range st.runs {
		times[i] = run.stop
	}
	return times
}

// label names the variant in errors and progress lines.
func (st stopStats) label() string {
	switch {
	case st.upstream:
		return fmt.Sprintf("stop with %d watches (kube-apiserver)", st.watches)
	case st.watches == 0:
		return "stop with one idle connection (control)"
	}
	return fmt.Sprintf("stop with %d watches (%s)", st.watches, st.path.name)
}

// benchStops stops servers with cfg.stopWatches watches open, cfg.stopRounds
// times with the watch cache and as many without; then, as a control, as
// many times with the watch cache and no watch, just one idle client
// connection. Each round runs on a server of its own with a fresh data dir.
// The variants take turns, one stop each per round; with ub, upstream's
// stop with as many watches takes its turn right after miniapiserver's with
// the watch cache, and is returned apart.
func benchStops(ctx context.Context, cfg config, root string, ub *upstreamBench) ([]stopStats, stopStats, error) {
	all := []stopStats{
		{path: cachePath, watches: cfg.stopWatches},
		{path: etcdPath, watches: cfg.stopWatches},
		{path: cachePath},
	}
	upstream := stopStats{upstream: true, watches: cfg.stopWatches}
	for i := range cfg.stopRounds {
		for v := range all {
			st := &all[v]
			run, err := stopOnce(ctx, cfg, filepath.Join(root, fmt.Sprintf("stop-%d-%d", v, i)), st.path, st.watches)
			if err != nil {
				return nil, stopStats{}, fmt.Errorf("%s, round %d/%d: %w", st.label(), i+1, cfg.stopRounds, err)
			}
			progressStop(*st, i, cfg.stopRounds, run)
			st.runs = append(st.runs, run)
			if ub == nil || v != 0 {
				continue
			}
			if run, err = ub.stopOnce(ctx, cfg, filepath.Join(ub.root, fmt.Sprintf("upstream-stop-%d", i)), upstream.watches); err != nil {
				return nil, stopStats{}, fmt.Errorf("%s, round %d/%d: %w", upstream.label(), i+1, cfg.stopRounds, err)
			}
			progressStop(upstream, i, cfg.stopRounds, run)
			upstream.runs = append(upstream.runs, run)
		}
	}
	return all, upstream, nil
}

func progressStop(st stopStats, i, rounds int, run stopRun) {
	progress("%s %d/%d: SIGTERM→exit %s%s; final BOOKMARK on %d of %d watches that allow them",
		st.label(), i+1, rounds, fmtDuration(run.stop), killedNote(run.killed), run.bookmarked, run.bookmarkable)
}

func killedNote(killed bool) string {
	if killed {
		return " (killed: still running " + stopKillAfter.String() + " after SIGTERM)"
	}
	return ""
}

// stopOnce starts a server on dataDir, then times its stop with n watches
// open (timedStop).
func stopOnce(ctx context.Context, cfg config, dataDir string, path storagePath, n int) (run stopRun, err error) {
	defer func() { err = errors.Join(err, os.RemoveAll(dataDir)) }()
	s, err := startServer(ctx, withArgs(cfg, path.args...), dataDir)
	if err != nil {
		return stopRun{}, err
	}
	defer func() {
		if !s.hasExited() {
			err = errors.Join(err, s.Stop())
		}
	}()
	return timedStop(ctx, cfg, s, n)
}

// stopOnce starts upstream on a fresh dir, then times kube-apiserver's stop
// with n watches open (timedStop), and then stops its etcd, untimed.
func (ub *upstreamBench) stopOnce(ctx context.Context, cfg config, dir string, n int) (run stopRun, err error) {
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return stopRun{}, err
	}
	defer func() {
		if u.api.hasExited() {
			err = errors.Join(err, prefixErr("etcd", u.etcd.Stop()))
		} else {
			err = errors.Join(err, u.Stop())
		}
	}()
	if err := ensureNamespace(ctx, u.api); err != nil {
		return stopRun{}, err
	}
	return timedStop(ctx, cfg, u.api, n)
}

// timedStop opens n watches on the running server s, waits until it
// counts them all, then times SIGTERM→exit and reads how each stream
// ended. The client that lists and scrapes closes its connection before
// the signal, unless n is 0: then that idle connection is all the control
// has open.
func timedStop(ctx context.Context, cfg config, s *server, n int) (stopRun, error) {
	s.stopAfter = stopKillAfter
	rc, err := s.restConfig()
	if err != nil {
		return stopRun{}, err
	}
	rc.Timeout = 0 // the watches stream until the server exits
	admin, adminHTTP, err := ownClient(rc)
	if err != nil {
		return stopRun{}, err
	}
	defer closeIdle(adminHTTP)
	list, err := admin.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return stopRun{}, fmt.Errorf("listing ConfigMaps: %w", err)
	}
	// The server's own ConfigMap watches, if any (kube-apiserver has some).
	own, err := openConfigMapWatches(ctx, admin.CoreV1().RESTClient())
	if err != nil {
		return stopRun{}, err
	}
	ws := newStopWatches(n)
	defer ws.close()
	if err := ws.open(ctx, rc, list.ResourceVersion, cfg.watchersPerConn); err != nil {
		return stopRun{}, err
	}
	if err := awaitOpenWatches(ctx, admin.CoreV1().RESTClient(), own+float64(n)); err != nil {
		return stopRun{}, err
	}
	if n > 0 {
		closeIdle(adminHTTP)
	}
	err = s.Stop()
	killed := errors.Is(err, errStopTimeout)
	if err != nil && !killed {
		return stopRun{}, err
	}
	run := ws.results(ctx)
	run.stop, run.killed, run.conns = s.stopped, killed, len(ws.clients)
	return run, nil
}

// openConfigMapWatches is how many ConfigMap watches the server counts open
// in apiserver_longrunning_requests.
func openConfigMapWatches(ctx context.Context, admin rest.Interface) (float64, error) {
	m, err := scrapeMetrics(ctx, admin, longRunning)
	if err != nil {
		return 0, err
	}
	return m.sum(longRunning, `resource="configmaps"`, `verb="WATCH"`)
}

// awaitOpenWatches polls apiserver_longrunning_requests until the server
// counts at least n open ConfigMap watches.
func awaitOpenWatches(ctx context.Context, admin rest.Interface, n float64) error {
	deadline := time.Now().Add(stopOpenTimeout)
	for {
		open, err := openConfigMapWatches(ctx, admin)
		switch {
		case err != nil:
			return err
		case open >= n:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("the server counts %.0f open ConfigMap watches %s after the last one opened, want %.0f", open, stopOpenTimeout, n)
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stopWatches are client-go watches of the ConfigMaps in namespace, the
// even ones with allowWatchBookmarks, each recording the event types it
// gets until its stream ends.
type stopWatches struct {
	clients []*http.Client // one per connection
	cancel  context.CancelFunc
	ended   sync.WaitGroup // one Done per watch whose stream has ended

	mu     sync.Mutex          // guards events and done
	events [][]watch.EventType // per watch, what it got
	done   []bool              // per watch, whether its stream has ended
}

func newStopWatches(n int) *stopWatches {
	return &stopWatches{events: make([][]watch.EventType, n), done: make([]bool, n), cancel: func() {}}
}

func allowsBookmarks(i int) bool { return i%2 == 0 }

// open starts every watch from resourceVersion rv, perConn of them on each
// HTTP/2 connection, and returns once each Watch call has returned.
func (ws *stopWatches) open(ctx context.Context, rc *rest.Config, rv string, perConn int) error {
	ctx, ws.cancel = context.WithCancel(ctx)
	n := len(ws.events)
	var clients []kubernetes.Interface
	for range (n + perConn - 1) / perConn {
		client, hc, err := ownClient(rc)
		if err != nil {
			return err
		}
		clients, ws.clients = append(clients, client), append(ws.clients, hc)
	}
	opened := make(chan error, n)
	ws.ended.Add(n)
	for i := range n {
		go ws.watch(ctx, clients[i/perConn], i, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: allowsBookmarks(i)}, opened)
	}
	var errs []error
	for range n {
		if err := <-opened; err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d watches failed to start, the first: %w", len(errs), n, errs[0])
	}
	return nil
}

// watch runs watch i: it opens it, reports on opened, and records its
// events until the stream ends.
func (ws *stopWatches) watch(ctx context.Context, client kubernetes.Interface, i int, opts metav1.ListOptions, opened chan<- error) {
	defer ws.ended.Done()
	w, err := client.CoreV1().ConfigMaps(namespace).Watch(ctx, opts)
	opened <- err
	if err != nil {
		return
	}
	defer w.Stop()
	var got []watch.EventType
	for ev := range w.ResultChan() {
		got = append(got, ev.Type)
	}
	ws.mu.Lock()
	ws.events[i], ws.done[i] = got, true
	ws.mu.Unlock()
}

// results waits up to stopDrainTimeout for every stream to end, then sums
// up how they ended.
func (ws *stopWatches) results(ctx context.Context) stopRun {
	_ = waitGroupFor(ctx, &ws.ended, stopDrainTimeout)
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var run stopRun
	for i, got := range ws.events {
		allow := allowsBookmarks(i)
		if allow {
			run.bookmarkable++
		}
		switch {
		case !ws.done[i]:
			run.unended++
		case allow && slices.Equal(got, []watch.EventType{watch.Bookmark}):
			run.bookmarked++
		case len(got) > 0:
			run.stray++
			if run.strayFirst == "" {
				run.strayFirst = fmt.Sprintf("%v (allowWatchBookmarks=%t)", got, allow)
			}
		}
	}
	return run
}

// close stops every watch, waits for them and closes their connections.
func (ws *stopWatches) close() {
	ws.cancel()
	ws.ended.Wait()
	for _, hc := range ws.clients {
		closeIdle(hc)
	}
}

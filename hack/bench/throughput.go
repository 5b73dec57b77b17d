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
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// throughputResult is the throughput section.
type throughputResult struct {
	runs     []throughputRun // watch cache, then etcd
	heap     heapPerObject
	upstream *throughputRun // kube-apiserver's, with -upstream (its path unset)
	// upstreamHeap is kube-apiserver's heap plus its etcd's, measured as
	// heap, with -upstream.
	upstreamHeap *heapPerObject
}

func progressThroughput(name string, run throughputRun) {
	progress("throughput (%s): %d updates by %d writers at %.0f/s; %d events to %d watchers at %.0f/s",
		name, run.updates, run.writers, run.writesPerSec(), run.events, run.watchers, run.eventsPerSec())
}

// throughputRun is the events one resource sustained on one server.
type throughputRun struct {
	path      storagePath
	writers   int
	watchers  int
	updates   int
	writing   time.Duration // from the first update to the last one's response
	delivered time.Duration // from the first update until every watcher had every event
	events    int64         // MODIFIED events the watchers read, all together
	timedOut  bool          // some watcher lacked events deliveryTimeout after the last update
	resumed   int64         // watch streams the server ended early, which the watchers reopened
}

func (r throughputRun) writesPerSec() float64 { return float64(r.updates) / r.writing.Seconds() }
func (r throughputRun) eventsPerSec() float64 { return float64(r.events) / r.delivered.Seconds() }

// heapPerObject is the default server's heap in use after a forced GC on an
// empty data dir and on one holding objects ConfigMaps, the latter before
// and after one JSON and one protobuf LIST of them.
type heapPerObject struct {
	objects          int
	empty            float64
	before, after    float64
	populate         populateStats // zero when the lists section's data dir was reused
	populatedFromOwn bool
}

func (h heapPerObject) perObject(heap float64) float64 { return (heap - h.empty) / float64(h.objects) }

// benchThroughput measures the events/s one resource sustains with the watch
// cache and without it, each on a server of its own on a fresh data dir,
// then the default server's heap per ConfigMap on populated (when it exists,
// the data dir the starts, lists and rv0 sections share) or on a data dir
// of its own.
//
// With ub (-upstream), kube-apiserver on a fresh etcd data dir gets the same
// run right after miniapiserver's with the watch cache.
func benchThroughput(ctx context.Context, cfg config, root, populated string, ub *upstreamBench) (res throughputResult, err error) {
	for _, path := range []storagePath{cachePath, etcdPath} {
		dir := filepath.Join(root, "throughput-"+path.name)
		run, empty, err := throughputOnce(ctx, cfg, dir, path)
		if err != nil {
			return throughputResult{}, fmt.Errorf("throughput (%s): %w", path.name, err)
		}
		if path.name == cachePath.name {
			res.heap.empty = empty
		}
		progressThroughput(path.name, run)
		res.runs = append(res.runs, run)
		if ub == nil || path.name != cachePath.name {
			continue
		}
		up, upEmpty, err := ub.throughputOnce(ctx, cfg, filepath.Join(ub.root, "upstream-throughput"))
		if err != nil {
			return throughputResult{}, fmt.Errorf("throughput (kube-apiserver): %w", err)
		}
		progressThroughput("kube-apiserver", up)
		res.upstream = &up
		res.upstreamHeap = &heapPerObject{objects: cfg.objects, empty: upEmpty}
	}
	res.heap.objects = cfg.objects
	if _, err := os.Stat(populated); err != nil {
		populated = filepath.Join(root, "throughput-heap")
		defer func() { err = errors.Join(err, os.RemoveAll(populated)) }()
		if res.heap.populate, err = populate(ctx, cfg, populated, cfg.objects); err != nil {
			return throughputResult{}, fmt.Errorf("throughput: %w", err)
		}
		res.heap.populatedFromOwn = true
	}
	if res.heap.before, res.heap.after, err = heapWithObjects(ctx, cfg, populated); err != nil {
		return throughputResult{}, fmt.Errorf("throughput, heap: %w", err)
	}
	progress("throughput: heap after GC empty %s, with %d ConfigMaps %s, after a JSON and a protobuf LIST %s",
		fmtBytes(res.heap.empty), res.heap.objects, fmtBytes(res.heap.before), fmtBytes(res.heap.after))
	if h := res.upstreamHeap; h != nil {
		if err := ub.heapWithObjects(ctx, cfg, h); err != nil {
			return throughputResult{}, fmt.Errorf("throughput, kube-apiserver's heap: %w", err)
		}
		progress("throughput: kube-apiserver + etcd heap after GC empty %s, with %d ConfigMaps %s, after a JSON and a protobuf LIST %s",
			fmtBytes(h.empty), h.objects, fmtBytes(h.before), fmtBytes(h.after))
	}
	return res, nil
}

// throughputOnce starts a server for path on a fresh dataDir, reads its heap
// after GC while it is empty, creates one ConfigMap per writer, opens the
// watchers, and times cfg.throughputUpdates updates and their deliveries.
func throughputOnce(ctx context.Context, cfg config, dataDir string, path storagePath) (run throughputRun, empty float64, err error) {
	defer func() { err = errors.Join(err, os.RemoveAll(dataDir)) }()
	s, err := startServer(ctx, withArgs(cfg, path.args...), dataDir)
	if err != nil {
		return throughputRun{}, 0, err
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	client, hc, err := s.streamingClient()
	if err != nil {
		return throughputRun{}, 0, err
	}
	defer closeIdle(hc)
	if _, empty, err = heapAfterGC(ctx, client.CoreV1().RESTClient()); err != nil {
		return throughputRun{}, 0, err
	}
	run, err = throughputWorkload(ctx, cfg, client)
	run.path = path
	return run, empty, err
}

// throughputWorkload creates one ConfigMap per writer, opens the watchers,
// and times cfg.throughputUpdates updates and their deliveries, all over
// client's connection.
func throughputWorkload(ctx context.Context, cfg config, client *kubernetes.Clientset) (throughputRun, error) {
	for i := range cfg.throughputWriters {
		if err := createConfigMap(ctx, client, i); err != nil {
			return throughputRun{}, err
		}
	}
	list, err := client.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return throughputRun{}, fmt.Errorf("listing ConfigMaps: %w", err)
	}
	c := newEventCounter(cfg.throughputWatchers, int64(cfg.throughputUpdates))
	defer c.close()
	if err := c.open(ctx, client.CoreV1().RESTClient(), list.ResourceVersion); err != nil {
		return throughputRun{}, err
	}
	run := throughputRun{writers: cfg.throughputWriters, watchers: cfg.throughputWatchers, updates: cfg.throughputUpdates}
	began := time.Now()
	if err := writeConcurrently(ctx, client, cfg.throughputWriters, cfg.throughputUpdates); err != nil {
		return throughputRun{}, err
	}
	run.writing = time.Since(began)
	if err := waitGroupFor(ctx, &c.done, deliveryTimeout); errors.Is(err, errWaitTimeout) {
		run.timedOut = true
	} else if err != nil {
		return throughputRun{}, err
	}
	run.delivered = c.last() - began.Sub(c.began)
	c.close()
	run.events, run.resumed = c.total(), c.resumed.Load()
	if err := c.err(); err != nil && !run.timedOut {
		return throughputRun{}, err
	}
	return run, nil
}

// throughputOnce runs the throughput workload on upstream on a fresh dir,
// its client on one connection as miniapiserver's, after reading its heap
// (and its etcd's) after GC while empty, as throughputOnce does ours.
func (ub *upstreamBench) throughputOnce(ctx context.Context, cfg config, dir string) (run throughputRun, empty float64, err error) {
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return throughputRun{}, 0, err
	}
	defer func() { err = errors.Join(err, u.Stop()) }()
	if err := ensureNamespace(ctx, u.api); err != nil {
		return throughputRun{}, 0, err
	}
	client, hc, err := u.api.streamingClient()
	if err != nil {
		return throughputRun{}, 0, err
	}
	defer closeIdle(hc)
	if _, empty, err = heapWithEtcdAfterGC(ctx, client.CoreV1().RESTClient(), u.etcdURL); err != nil {
		return throughputRun{}, 0, err
	}
	run, err = throughputWorkload(ctx, cfg, client)
	return run, empty, err
}

// heapWithObjects reads kube-apiserver's heap plus its etcd's after GC on
// cfg.objects ConfigMaps (the lists section's data dir when it ran, else
// one of its own), after start and after one JSON and one protobuf LIST of
// them all, into h.
func (ub *upstreamBench) heapWithObjects(ctx context.Context, cfg config, h *heapPerObject) (err error) {
	dir := filepath.Join(ub.root, "upstream-populated")
	if _, err := os.Stat(dir); err != nil {
		dir = filepath.Join(ub.root, "upstream-throughput-heap")
		defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
		if h.populate, err = ub.populate(ctx, cfg, dir, cfg.objects); err != nil {
			return err
		}
		h.populatedFromOwn = true
	}
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, u.Stop()) }()
	client, err := u.api.listClient(cfg.gzip)
	if err != nil {
		return err
	}
	rc := client.CoreV1().RESTClient()
	if _, h.before, err = heapWithEtcdAfterGC(ctx, rc, u.etcdURL); err != nil {
		return err
	}
	if err := listAllOnce(ctx, cfg, rc); err != nil {
		return err
	}
	_, h.after, err = heapWithEtcdAfterGC(ctx, rc, u.etcdURL)
	return err
}

// writeConcurrently has writers clients update ConfigMaps as fast as they
// can, updates in all, spread round-robin over writers ConfigMaps, stopping
// at the first error.
func writeConcurrently(ctx context.Context, client kubernetes.Interface, writers, updates int) error {
	return forEach(ctx, updates, writers, func(ctx context.Context, i int) error {
		// Each value is new, so every patch is a write; two writers may patch
		// one ConfigMap at once, which a merge patch retries on the server.
		return touchConfigMap(ctx, client, i%writers, "tp-"+strconv.Itoa(i))
	})
}

// heapWithObjects starts the default server on dataDir and reads its heap
// after GC, then again after one JSON and one protobuf LIST of every
// ConfigMap in one request.
func heapWithObjects(ctx context.Context, cfg config, dataDir string) (before, after float64, err error) {
	s, err := startServer(ctx, withArgs(cfg, cachePath.args...), dataDir)
	if err != nil {
		return 0, 0, err
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	client, err := s.listClient(cfg.gzip)
	if err != nil {
		return 0, 0, err
	}
	rc := client.CoreV1().RESTClient()
	if _, before, err = heapAfterGC(ctx, rc); err != nil {
		return 0, 0, err
	}
	if err := listAllOnce(ctx, cfg, rc); err != nil {
		return 0, 0, err
	}
	_, after, err = heapAfterGC(ctx, rc)
	return before, after, err
}

// listAllOnce lists every ConfigMap once in one request per encoding.
func listAllOnce(ctx context.Context, cfg config, rc rest.Interface) error {
	for _, v := range listVariants(cfg.page) {
		if v.limit > 0 {
			continue
		}
		if _, err := verifiedListing(ctx, rc, v, cfg.objects); err != nil {
			return fmt.Errorf("%s: %w", v, err)
		}
	}
	return nil
}

// eventCounter is watchers that each count the MODIFIED events of one JSON
// watch of the ConfigMaps in namespace, until they have want of them.
type eventCounter struct {
	want     int64
	began    time.Time // origin of lastAt
	counts   []atomic.Int64
	lastAt   atomic.Int64 // when the latest watcher got its last event, since began
	resumed  atomic.Int64 // streams the server ended early, watched again
	cancel   context.CancelFunc
	running  sync.WaitGroup
	done     sync.WaitGroup // one Done per watcher: all its events, or its stream ended
	mu       sync.Mutex     // guards firstErr
	firstErr error
}

func newEventCounter(watchers int, want int64) *eventCounter {
	return &eventCounter{want: want, began: time.Now(), counts: make([]atomic.Int64, watchers), cancel: func() {}}
}

// open starts every watch from rv over rc's connection and returns once the
// server has answered each.
func (c *eventCounter) open(ctx context.Context, rc rest.Interface, rv string) error {
	ctx, c.cancel = context.WithCancel(ctx)
	opened := make(chan error, len(c.counts))
	c.done.Add(len(c.counts))
	for i := range c.counts {
		c.running.Go(func() { c.watch(ctx, rc, rv, i, opened) })
	}
	var errs []error
	for range c.counts {
		if err := <-opened; err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// watch counts the events of watcher i. A stream the server ends before
// the watcher has all its events is watched again from the resourceVersion
// of the last event read, as client-go's reflector does (kube-apiserver
// ends a watcher that falls behind); a failed reopen or an ERROR event
// ends it.
func (c *eventCounter) watch(ctx context.Context, rc rest.Interface, rv string, i int, opened chan<- error) {
	defer c.done.Done()
	var last []byte // the last MODIFIED event read
	for first := true; ; first = false {
		body, err := rc.Get().AbsPath(listPath).Param("watch", "true").Param("resourceVersion", rv).
			SetHeader("Accept", acceptJSON).Stream(ctx)
		if first {
			opened <- err
		}
		if err != nil {
			if !first {
				c.fail(ctx, fmt.Errorf("watch %d, reopening at resourceVersion %s after %d of %d events: %w", i, rv, c.counts[i].Load(), c.want, err))
			}
			return
		}
		done, err := c.read(body, i, &last)
		body.Close()
		if done || ctx.Err() != nil {
			return
		}
		if err != nil {
			c.fail(ctx, fmt.Errorf("watch %d ended after %d of %d events: %w", i, c.counts[i].Load(), c.want, err))
			return
		}
		c.resumed.Add(1)
		if v := eventResourceVersion(last); v != "" {
			rv = v
		}
	}
}

// read counts the MODIFIED events of one stream, keeping the last in last,
// until watcher i has them all (done) or the stream ends (err: why, if it
// did not just end).
func (c *eventCounter) read(body io.Reader, i int, last *[]byte) (done bool, err error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte(`{"type":"ERROR"`)) {
			return false, fmt.Errorf("ERROR event %s", line)
		}
		if !bytes.HasPrefix(line, []byte(`{"type":"MODIFIED"`)) {
			continue
		}
		*last = append((*last)[:0], line...)
		if c.counts[i].Add(1) == c.want {
			at := int64(time.Since(c.began))
			for {
				old := c.lastAt.Load()
				if at <= old || c.lastAt.CompareAndSwap(old, at) {
					break
				}
			}
			return true, nil
		}
	}
	return false, sc.Err()
}

// eventResourceVersion is the object's resourceVersion in a JSON watch
// event of a ConfigMap, whose only resourceVersion is its metadata's.
func eventResourceVersion(event []byte) string {
	const key = `"resourceVersion":"`
	_, rest, ok := bytes.Cut(event, []byte(key))
	if !ok {
		return ""
	}
	rv, _, ok := bytes.Cut(rest, []byte(`"`))
	if !ok {
		return ""
	}
	return string(rv)
}

func (c *eventCounter) fail(ctx context.Context, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.firstErr == nil && ctx.Err() == nil {
		c.firstErr = err
	}
}

func (c *eventCounter) close() { c.cancel(); c.running.Wait() }

func (c *eventCounter) last() time.Duration { return time.Duration(c.lastAt.Load()) }

func (c *eventCounter) total() int64 {
	var n int64
	for i := range c.counts {
		n += c.counts[i].Load()
	}
	return n
}

func (c *eventCounter) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.firstErr
}

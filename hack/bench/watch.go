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
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	watchedName     = "bench-watch" // the ConfigMap the writer updates
	seqKey          = "seq"         // its data key holding the event's sequence number
	warmUpSeq       = "warm-up"     // the seq of the untimed update every watcher must see first
	deliveryTimeout = time.Minute   // for the warm-up, and after the last update for the rest
)

// watchRun is one watch fan-out measurement.
type watchRun struct {
	path       string // "cache" or "etcd"; upstreamWatchPath for kube-apiserver
	watchers   int
	conns      int // HTTP/2 connections the watchers were spread over
	events     int
	latencies  []time.Duration // one per delivery, ascending
	ended      int             // watchers whose stream ended before the last event
	endErr     error           // why the first of them ended
	timedOut   bool            // some watchers lacked the last event deliveryTimeout after it was written
	writing    time.Duration   // from the first update to the last one's response
	cpu        time.Duration   // server CPU time in the timed phase; -1: unknown
	allocBytes float64         // server bytes allocated in the timed phase
	// Upstream's etcd, a process of its own, over the same phase (zero for
	// miniapiserver, whose etcd is embedded: in cpu and allocBytes).
	etcdCPU   time.Duration // -1: unknown
	etcdAlloc float64
}

func (r watchRun) deliveries() int { return len(r.latencies) }

// upstreamWatchPath is the path of kube-apiserver's runs: its defaults,
// which serve watches from its watch cache.
const upstreamWatchPath = "kube-apiserver"

// benchWatch runs the fan-out for every watcher count, with the watch cache
// and, up to cfg.etcdWatchersMax watchers, without it; each run on a server
// of its own on a fresh data dir. With ub it also runs every count on
// upstream, right after miniapiserver's watch cache run at that count, and
// returns those runs apart.
func benchWatch(ctx context.Context, cfg config, root string, ub *upstreamBench) (runs, upstream []watchRun, err error) {
	for _, n := range cfg.watchers {
		for _, path := range []storagePath{cachePath, etcdPath} {
			if path.name == etcdPath.name && n > cfg.etcdWatchersMax {
				continue
			}
			run, err := watchOnce(ctx, cfg, filepath.Join(root, fmt.Sprintf("watch-%s-%d", path.name, n)), path, n)
			if err != nil {
				return nil, nil, fmt.Errorf("watch fan-out (%s, %d watchers): %w", path.name, n, err)
			}
			progressWatch(run)
			runs = append(runs, run)
			if ub == nil || path.name != cachePath.name {
				continue
			}
			if run, err = ub.watchOnce(ctx, cfg, filepath.Join(ub.root, fmt.Sprintf("upstream-watch-%d", n)), n); err != nil {
				return nil, nil, fmt.Errorf("watch fan-out (kube-apiserver, %d watchers): %w", n, err)
			}
			progressWatch(run)
			upstream = append(upstream, run)
		}
	}
	return runs, upstream, nil
}

func progressWatch(run watchRun) {
	progress("watch fan-out (%s, %d watchers): %d deliveries, latency p50 %s p99 %s, %s allocated per delivery",
		run.path, run.watchers, run.deliveries(), fmtDuration(percentile(run.latencies, 0.5)),
		fmtDuration(percentile(run.latencies, 0.99)), fmtBytes(run.allocBytes/float64(max(run.deliveries(), 1))))
}

// watchOnce starts a server on dataDir, then runs the fan-out on it.
func watchOnce(ctx context.Context, cfg config, dataDir string, path storagePath, n int) (run watchRun, err error) {
	defer func() { err = errors.Join(err, os.RemoveAll(dataDir)) }()
	s, err := startServer(ctx, withArgs(cfg, path.args...), dataDir)
	if err != nil {
		return watchRun{}, err
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	rc, err := s.restConfig()
	if err != nil {
		return watchRun{}, err
	}
	run, err = fanOutRun(ctx, cfg, rc, path.name, n, func(ctx context.Context, metrics rest.Interface) (usage, usage, error) {
		u, err := readUsage(ctx, s, metrics)
		return u, usage{}, err
	})
	run.path = path.name
	return run, err
}

// watchOnce starts upstream on a fresh dir (its etcd's data dir), then runs
// the fan-out on it as on miniapiserver.
func (ub *upstreamBench) watchOnce(ctx context.Context, cfg config, dir string, n int) (run watchRun, err error) {
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return watchRun{}, err
	}
	defer func() { err = errors.Join(err, u.Stop()) }()
	if err := ensureNamespace(ctx, u.api); err != nil {
		return watchRun{}, err
	}
	rc, err := u.api.restConfig()
	if err != nil {
		return watchRun{}, err
	}
	run, err = fanOutRun(ctx, cfg, rc, upstreamWatchPath, n, func(ctx context.Context, metrics rest.Interface) (usage, usage, error) {
		api, err := readUsage(ctx, u.api, metrics)
		if err != nil {
			return usage{}, usage{}, err
		}
		etcd, err := readEtcdUsage(ctx, u)
		return api, etcd, err
	})
	run.path = upstreamWatchPath
	return run, err
}

// usageFunc reads the server's cumulative resource use and, for upstream,
// its etcd's, with metrics (the writer's client) scraping /metrics.
type usageFunc func(ctx context.Context, metrics rest.Interface) (server, etcd usage, err error)

// fanOutRun creates the watched ConfigMap, opens n watches of it, warms
// them up with one update, then times cfg.events updates and their
// deliveries; label names the server in progress lines.
func fanOutRun(ctx context.Context, cfg config, rc *rest.Config, label string, n int, readUsage usageFunc) (watchRun, error) {
	rc.Timeout = 0 // the watches stream for as long as the run takes
	writer, writerHTTP, err := ownClient(rc)
	if err != nil {
		return watchRun{}, err
	}
	defer closeIdle(writerHTTP)
	cm, err := writer.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: watchedName},
		Data:       map[string]string{seqKey: "created"},
	}, metav1.CreateOptions{})
	if err != nil {
		return watchRun{}, fmt.Errorf("creating ConfigMap %s: %w", watchedName, err)
	}

	f := newFanOut(n, cfg.events)
	defer f.close()
	if err := f.open(ctx, rc, cm.ResourceVersion, cfg.watchersPerConn); err != nil {
		return watchRun{}, err
	}
	if cm, err = updateSeq(ctx, writer, cm, warmUpSeq); err != nil {
		return watchRun{}, err
	}
	if err := f.awaitWarmUp(ctx); err != nil {
		return watchRun{}, err
	}
	progress("watch fan-out (%s, %d watchers): all watches established over %d connection(s); %d timed updates",
		label, n, len(f.clients), cfg.events)
	return f.measure(ctx, readUsage, writer, cm, cfg.eventInterval)
}

// measure writes the timed events between two readings of the server's
// (and upstream's etcd's) CPU time and allocation counter, and waits for
// their deliveries.
func (f *fanOut) measure(ctx context.Context, readUsage usageFunc, writer kubernetes.Interface, cm *corev1.ConfigMap, interval time.Duration) (watchRun, error) {
	metricsClient := writer.CoreV1().RESTClient()
	before, etcdBefore, err := readUsage(ctx, metricsClient)
	if err != nil {
		return watchRun{}, err
	}
	began := time.Now()
	if err := f.write(ctx, writer, cm, interval); err != nil {
		return watchRun{}, err
	}
	run := watchRun{watchers: len(f.watchers), conns: len(f.clients), events: f.events, writing: time.Since(began)}
	if err := waitGroupFor(ctx, &f.finished, deliveryTimeout); errors.Is(err, errWaitTimeout) {
		run.timedOut = true
	} else if err != nil {
		return watchRun{}, err
	}
	after, etcdAfter, err := readUsage(ctx, metricsClient)
	if err != nil {
		return watchRun{}, err
	}
	f.close()
	run.cpu, run.allocBytes = usageDelta(before, after)
	run.etcdCPU, run.etcdAlloc = usageDelta(etcdBefore, etcdAfter)
	run.latencies, run.ended, run.endErr = f.results()
	return run, nil
}

// usageDelta is the CPU time (-1 if unknown) and bytes allocated between
// two readings.
func usageDelta(before, after usage) (time.Duration, float64) {
	cpu := after.cpu - before.cpu
	if before.cpu < 0 {
		cpu = -1
	}
	return cpu, after.allocBytes - before.allocBytes
}

// write sends the timed updates one after another, each at least interval
// after the previous one started, recording when each was sent.
func (f *fanOut) write(ctx context.Context, writer kubernetes.Interface, cm *corev1.ConfigMap, interval time.Duration) error {
	began := time.Now()
	for i := range f.events {
		if wait := time.Until(began.Add(time.Duration(i) * interval)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		f.sent[i] = time.Since(f.began)
		var err error
		if cm, err = updateSeq(ctx, writer, cm, strconv.Itoa(i)); err != nil {
			return fmt.Errorf("update %d/%d: %w", i+1, f.events, err)
		}
	}
	return nil
}

// updateSeq writes seq into the ConfigMap and returns the updated object.
func updateSeq(ctx context.Context, writer kubernetes.Interface, cm *corev1.ConfigMap, seq string) (*corev1.ConfigMap, error) {
	cm = cm.DeepCopy()
	cm.Data[seqKey] = seq
	updated, err := writer.CoreV1().ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("updating ConfigMap %s to seq %s: %w", cm.Name, seq, err)
	}
	return updated, nil
}

// usage is a reading of the server's cumulative resource use.
type usage struct {
	cpu        time.Duration // -1: unknown on this OS
	allocBytes float64
}

func readUsage(ctx context.Context, s *server, rc rest.Interface) (usage, error) {
	cpu, err := cpuOf(s)
	if err != nil {
		return usage{}, err
	}
	alloc, err := serverAllocBytes(ctx, rc)
	if err != nil {
		return usage{}, err
	}
	return usage{cpu: cpu, allocBytes: alloc}, nil
}

// readEtcdUsage is readUsage for upstream's etcd, its allocated bytes
// scraped from its client URL.
func readEtcdUsage(ctx context.Context, u *upstreamServer) (usage, error) {
	cpu, err := cpuOf(u.etcd)
	if err != nil {
		return usage{}, err
	}
	alloc, err := etcdAllocBytes(ctx, u.etcdURL)
	if err != nil {
		return usage{}, err
	}
	return usage{cpu: cpu, allocBytes: alloc}, nil
}

// cpuOf is the process's CPU time so far; -1 where the OS does not tell.
func cpuOf(s *server) (time.Duration, error) {
	cpu, err := processCPU(s.cmd.Process.Pid)
	if errors.Is(err, errors.ErrUnsupported) {
		return -1, nil
	}
	return cpu, err
}

var errWaitTimeout = errors.New("timed out")

// waitGroupFor waits for wg for at most d.
func waitGroupFor(ctx context.Context, wg interface{ Wait() }, d time.Duration) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-timer.C:
		return errWaitTimeout
	case <-ctx.Done():
		return ctx.Err()
	}
}

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
	path       string // "cache" or "etcd"
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
}

func (r watchRun) deliveries() int { return len(r.latencies) }

// benchWatch runs the fan-out for every watcher count, with the watch cache
// and, up to cfg.etcdWatchersMax watchers, without it; each run on a server
// of its own on a fresh data dir.
func benchWatch(ctx context.Context, cfg config, root string) ([]watchRun, error) {
	var runs []watchRun
	for _, n := range cfg.watchers {
		for _, path := range []storagePath{cachePath, etcdPath} {
			if path.name == etcdPath.name && n > cfg.etcdWatchersMax {
				continue
			}
			run, err := watchOnce(ctx, cfg, filepath.Join(root, fmt.Sprintf("watch-%s-%d", path.name, n)), path, n)
			if err != nil {
				return nil, fmt.Errorf("watch fan-out (%s, %d watchers): %w", path.name, n, err)
			}
			progress("watch fan-out (%s, %d watchers): %d deliveries, latency p50 %s p99 %s, %s allocated per delivery",
				path.name, n, run.deliveries(), fmtDuration(percentile(run.latencies, 0.5)),
				fmtDuration(percentile(run.latencies, 0.99)), fmtBytes(run.allocBytes/float64(max(run.deliveries(), 1))))
			runs = append(runs, run)
		}
	}
	return runs, nil
}

// watchOnce starts a server on dataDir, opens n watches, warms them up with
// one update, then times cfg.events updates and their deliveries.
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
		path.name, n, len(f.clients), cfg.events)
	run, err = f.measure(ctx, s, writer, cm, cfg.eventInterval)
	run.path = path.name
	return run, err
}

// measure writes the timed events between two readings of the server's CPU
// time and allocation counter, and waits for their deliveries.
func (f *fanOut) measure(ctx context.Context, s *server, writer kubernetes.Interface, cm *corev1.ConfigMap, interval time.Duration) (watchRun, error) {
	metricsClient := writer.CoreV1().RESTClient()
	before, err := readUsage(ctx, s, metricsClient)
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
	after, err := readUsage(ctx, s, metricsClient)
	if err != nil {
		return watchRun{}, err
	}
	f.close()
	run.cpu, run.allocBytes = after.cpu-before.cpu, after.allocBytes-before.allocBytes
	if before.cpu < 0 {
		run.cpu = -1
	}
	run.latencies, run.ended, run.endErr = f.results()
	return run, nil
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
	cpu, err := processCPU(s.cmd.Process.Pid)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		cpu = -1
	case err != nil:
		return usage{}, err
	}
	alloc, err := serverAllocBytes(ctx, rc)
	if err != nil {
		return usage{}, err
	}
	return usage{cpu: cpu, allocBytes: alloc}, nil
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

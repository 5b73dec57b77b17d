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
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	restartLeases  = 100                   // Leases written while the informers watch
	restartWorkers = 4                     // concurrent clients creating the objects
	resyncTimeout  = 2 * time.Minute       // client-go backs off up to 30 s × a jitter of up to 2 between watch retries
	afterRestart   = "bench-after-restart" // the object of each watched type written after the restart
)

// restartMode is how the restarted server lets the informers' watches
// resume.
type restartMode struct {
	name string   // "EfficientWatchResumption on" or "… off"
	args []string // server flags selecting it
}

var (
	resumeMode = restartMode{name: "EfficientWatchResumption on"}
	relistMode = restartMode{name: "EfficientWatchResumption off", args: []string{"--feature-gates=EfficientWatchResumption=false"}}
)

// restartRun is one restart under running informers.
type restartRun struct {
	relists []int         // per watchedResources entry
	stop    time.Duration // SIGTERM→exit of the first server, the informers' watches open
	restart time.Duration // the restarted server's exec→ready line
	resync  time.Duration // from that ready line until every informer had added its new object
}

// restartStats are the rounds of one mode.
type restartStats struct {
	mode restartMode
	runs []restartRun
}

func (st restartStats) resyncTimes() []time.Duration {
	times := make([]time.Duration, len(st.runs))
	for i, run := range st.runs {
		times[i] = run.resync
	}
	return times
}

func (st restartStats) restartTimes() []time.Duration {
	times := make([]time.Duration, len(st.runs))
	for i, run := range st.runs {
		times[i] = run.restart
	}
	return times
}

func (st restartStats) stopTimes() []time.Duration {
	times := make([]time.Duration, len(st.runs))
	for i, run := range st.runs {
		times[i] = run.stop
	}
	return times
}

// relists are informer i's relists in each round.
func (st restartStats) relists(i int) []int {
	n := make([]int, len(st.runs))
	for r, run := range st.runs {
		n[r] = run.relists[i]
	}
	return n
}

// restartsResult is the restarts section: the gate on (the server's
// default), then off.
type restartsResult struct {
	resume   restartStats
	relist   restartStats
	upstream *restartStats // kube-apiserver restarted alone, with -upstream
}

// upstreamRestartMode is kube-apiserver with its defaults, restarted while
// its etcd keeps running.
var upstreamRestartMode = restartMode{name: "kube-apiserver, its etcd kept running"}

// benchRestarts runs cfg.restartRounds restarts in each mode, each on a
// fresh data dir of its own; the modes take turns, one restart each per
// round, and with ub (-upstream) kube-apiserver's restart follows
// miniapiserver's in each round.
func benchRestarts(ctx context.Context, cfg config, root string, ub *upstreamBench) (restartsResult, error) {
	res := restartsResult{resume: restartStats{mode: resumeMode}, relist: restartStats{mode: relistMode}}
	if ub != nil {
		res.upstream = &restartStats{mode: upstreamRestartMode}
	}
	for i := range cfg.restartRounds {
		for m, st := range []*restartStats{&res.resume, &res.relist, res.upstream} {
			if st == nil {
				continue
			}
			var run restartRun
			var err error
			if st.mode.name == upstreamRestartMode.name {
				run, err = ub.restartOnce(ctx, cfg, filepath.Join(ub.root, fmt.Sprintf("upstream-restart-%d", i)))
			} else {
				run, err = restartOnce(ctx, cfg, filepath.Join(root, fmt.Sprintf("restart-%d-%d", m, i)), st.mode)
			}
			if err != nil {
				return restartsResult{}, fmt.Errorf("restart (%s), round %d/%d: %w", st.mode.name, i+1, cfg.restartRounds, err)
			}
			progress("restart (%s) %d/%d: relists %v of %s; stopped in %s, ready again in %s, resynced %s after that",
				st.mode.name, i+1, cfg.restartRounds, run.relists, resourceNames(), fmtDuration(run.stop),
				fmtDuration(run.restart), fmtDuration(run.resync))
			st.runs = append(st.runs, run)
		}
	}
	return res, nil
}

// restartOnce starts upstream on a fresh dir, creates the watched objects
// through kube-apiserver, syncs the informers and writes Leases as
// restartOnce does, then restarts kube-apiserver alone (SIGTERM, then a new
// process on the same port and the same etcd), writes one more object of
// each watched type and waits until every informer has it.
func (ub *upstreamBench) restartOnce(ctx context.Context, cfg config, dir string) (run restartRun, err error) {
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	u, err := startUpstream(ctx, ub.bins, ub.pki, dir)
	if err != nil {
		return restartRun{}, err
	}
	defer func() { err = errors.Join(err, u.Stop()) }()
	client, clientHTTP, err := u.api.streamingClient() // the informers' watches stream across the restart
	if err != nil {
		return restartRun{}, err
	}
	defer closeIdle(clientHTTP)
	if err := createNamespace(ctx, client); err != nil {
		return restartRun{}, err
	}
	if err := ensureDefaultServiceAccount(ctx, client); err != nil {
		return restartRun{}, err
	}
	informers, err := watchedAndSynced(ctx, client, cfg.restartObjects)
	if err != nil {
		return restartRun{}, err
	}
	defer informers.stop()
	// Its HTTP server waits for the open watches up to its shutdown
	// timeout, past stopTimeout.
	u.api.stopAfter = stopKillAfter
	if err := u.api.Stop(); err != nil {
		return restartRun{}, prefixErr("kube-apiserver", err)
	}
	run.stop = u.api.stopped
	if err := u.restartAPI(ctx, ub.bins, ub.pki); err != nil {
		return restartRun{}, fmt.Errorf("restarting kube-apiserver: %w", err)
	}
	run.restart = u.ready
	return awaitResync(ctx, u.api, u.began.Add(u.ready), informers, run)
}

// ensureDefaultServiceAccount creates the namespace's default
// ServiceAccount, which ServiceAccount admission requires of a Pod and
// which, without kube-controller-manager (or namespace defaults), nothing
// else creates.
func ensureDefaultServiceAccount(ctx context.Context, client kubernetes.Interface) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ServiceAccount default: %w", err)
	}
	return nil
}

func resourceNames() string {
	var names []string
	for _, res := range watchedResources {
		names = append(names, res.name)
	}
	return fmt.Sprint(names)
}

// restartOnce starts a server on dataDir with a fixed port, creates the
// watched objects, syncs the informers, writes Leases, restarts the server
// on the same data dir and port, writes one more object of each watched
// type and waits until every informer has it.
func restartOnce(ctx context.Context, cfg config, dataDir string, mode restartMode) (run restartRun, err error) {
	defer func() { err = errors.Join(err, os.RemoveAll(dataDir)) }()
	port, err := freePort()
	if err != nil {
		return restartRun{}, err
	}
	cfg = withArgs(cfg, append(slices.Clone(mode.args), "--secure-port="+strconv.Itoa(port), "--etcd-compaction-interval=0")...)
	first, err := startServer(ctx, cfg, dataDir)
	if err != nil {
		return restartRun{}, err
	}
	firstStopped := false
	defer func() {
		if !firstStopped {
			err = errors.Join(err, first.Stop())
		}
	}()
	client, clientHTTP, err := first.streamingClient() // the informers' watches stream across the restart
	if err != nil {
		return restartRun{}, err
	}
	defer closeIdle(clientHTTP)
	if err := ensureDefaultServiceAccount(ctx, client); err != nil { // as on kube-apiserver: the bench runs ours without namespace defaults
		return restartRun{}, err
	}
	informers, err := watchedAndSynced(ctx, client, cfg.restartObjects)
	if err != nil {
		return restartRun{}, err
	}
	defer informers.stop()

	err, firstStopped = first.Stop(), true
	if err != nil {
		return restartRun{}, err
	}
	run.stop = first.stopped
	return resumeAfterRestart(ctx, cfg, dataDir, informers, run)
}

// resumeAfterRestart starts the server again, writes the objects the
// informers wait for, and fills in the rest of run.
func resumeAfterRestart(ctx context.Context, cfg config, dataDir string, informers *informerGroup, run restartRun) (_ restartRun, err error) {
	second, err := startServer(ctx, cfg, dataDir)
	if err != nil {
		return restartRun{}, fmt.Errorf("restarting: %w", err)
	}
	ready := time.Now()
	defer func() { err = errors.Join(err, second.Stop()) }()
	run.restart = second.ready
	return awaitResync(ctx, second, ready, informers, run)
}

// awaitResync writes, on the restarted server, the objects the informers
// wait for, and fills in the rest of run; ready is when the server was
// ready again.
func awaitResync(ctx context.Context, second *server, ready time.Time, informers *informerGroup, run restartRun) (restartRun, error) {
	rc, err := second.restConfig()
	if err != nil {
		return restartRun{}, err
	}
	writer, writerHTTP, err := ownClient(rc)
	if err != nil {
		return restartRun{}, err
	}
	defer closeIdle(writerHTTP)
	for _, res := range watchedResources {
		if err := res.create(ctx, writer, afterRestart); err != nil {
			return restartRun{}, fmt.Errorf("creating %s %s after the restart: %w", res.name, afterRestart, err)
		}
	}
	last, err := informers.awaitSeen(ctx, resyncTimeout)
	if err != nil {
		return restartRun{}, err
	}
	informers.stop()
	run.resync, run.relists = last.Sub(ready), informers.relists()
	return run, nil
}

// createWatched creates n objects of each watched type, named bench-00000...
// watchedAndSynced creates n objects of each watched type, starts the
// counting informers on them and writes the Leases that move the
// resourceVersion on before a restart; the caller stops the informers.
func watchedAndSynced(ctx context.Context, client kubernetes.Interface, n int) (*informerGroup, error) {
	if err := createWatched(ctx, client, n); err != nil {
		return nil, err
	}
	informers, err := startCountingInformers(ctx, client, afterRestart)
	if err != nil {
		return nil, err
	}
	if err := writeLeases(ctx, client, restartLeases); err != nil {
		informers.stop()
		return nil, err
	}
	return informers, nil
}

func createWatched(ctx context.Context, client kubernetes.Interface, n int) error {
	for _, res := range watchedResources {
		err := forEach(ctx, n, restartWorkers, func(ctx context.Context, i int) error {
			if err := res.create(ctx, client, configMapName(i)); err != nil {
				return fmt.Errorf("creating %s %s: %w", res.name, configMapName(i), err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// writeLeases creates n Leases, which no informer watches: etcd's revision
// moves on while the watched resources stay idle.
func writeLeases(ctx context.Context, client kubernetes.Interface, n int) error {
	return forEach(ctx, n, restartWorkers, func(ctx context.Context, i int) error {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-lease-%04d", i)}}
		if _, err := client.CoordinationV1().Leases(namespace).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating Lease %s: %w", lease.Name, err)
		}
		return nil
	})
}

// freePort is a TCP port on 127.0.0.1 that nothing listened on a moment
// ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("picking a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

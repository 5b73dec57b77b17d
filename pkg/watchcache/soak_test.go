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

package watchcache

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
)

// The soak: soakWriters goroutines write to a pool of pods while
// soakWatchers watch them through the cache with assorted options. It is
// bounded by the number of acknowledged writes, never by time.
const (
	soakWriters       = 8
	soakWatchers      = 50
	soakEarlyWatchers = 20 // opened before the first write; the others during the writes
	// soakNamesPerNamespace pods in each of soakNamespaces make the pool.
	soakNamesPerNamespace = 34
	// soakMarkerNamespace holds the end markers of all-namespace watchers.
	soakMarkerNamespace = "soak-markers"
	// soakDeadline bounds the wait for watchers to see their end markers; only
	// a broken cache (or a starved machine) gets near it.
	soakDeadline = time.Minute
)

var (
	soakNamespaces = []string{"soak-0", "soak-1", "soak-2"}
	soakApps       = []string{"a", "b", "c"}
	soakTiers      = []string{"", "web", "db"} // "": no tier label
	soakNodes      = []string{"", "node-1", "node-2", "node-3"}
)

// TestSoak races writers against watchers through the cache, with the race
// detector: every watcher's stream must be, per object, gap-free and in
// resourceVersion order, and replaying it must end at the state etcd has.
func TestSoak(t *testing.T) {
	// About 110,000 events delivered to the 50 watchers.
	writes := 11000
	if testing.Short() {
		writes = 600
	}
	began := time.Now()
	etcd, _ := newEtcdStore(t)
	c := newConformanceCacheOn(t, etcd, "spec.nodeName")
	watchers := make([]*soakWatcher, soakWatchers)
	for i := range watchers {
		watchers[i] = newSoakWatcher(i, writes)
	}
	// Watches have no deadline. The consumers stop before the cache and etcd do.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		for _, w := range watchers {
			if w.started {
				<-w.done
			}
		}
	})
	for _, w := range watchers[:soakEarlyWatchers] {
		if err := w.start(ctx, c); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
	}
	log, err := runSoakWrites(ctx, c, etcd, writes, watchers[soakEarlyWatchers:])
	if err != nil {
		t.Fatal(err)
	}
	lastWrite := checkWriteLog(ctx, t, etcd, log)

	finalRV, err := writeEndMarkers(ctx, etcd, watchers)
	if err != nil {
		t.Fatal(err)
	}
	if !awaitSoakWatchers(watchers, cancel) {
		for _, w := range watchers {
			if w.err != nil {
				t.Errorf("%s: %v", w, w.err)
			}
		}
		t.FailNow()
	}

	var events, resumes, restarts, timeouts, stalled int
	var longestStall time.Duration
	for _, w := range watchers {
		for _, p := range w.check(ctx, etcd, finalRV) {
			t.Errorf("%s: %s", w, p)
		}
		for _, seg := range w.segments {
			events += len(seg.events)
		}
		resumes += w.resumes
		restarts += w.restarts
		timeouts += w.timeouts
		if w.stalled {
			stalled++
			longestStall = max(longestStall, w.stalledFor)
		}
	}
	// The history holds every write: a watcher that stalled caught up
	// from it rather than being closed.
	if stalled == 0 || resumes+restarts != 0 {
		t.Errorf("%d watchers stalled, %d watches closed and resumed, %d restarted; want some stalled and none closed", stalled, resumes, restarts)
	}
	if !testing.Short() && events < 100000 {
		t.Errorf("%d events delivered, want at least 100,000 (the soak's size)", events)
	}
	t.Logf("%d writes (last at RV %d, end markers to RV %d), %d watchers, %d events delivered, "+
		"%d resumptions from the last RV, %d restarts (closed before the initial state was complete), %d watches refused with 504, "+
		"%d watchers stalled (the longest for %v), in %v",
		len(log), lastWrite, finalRV, len(watchers), events, resumes, restarts, timeouts,
		stalled, longestStall.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
}

// runSoakWrites runs the writers until writes writes are acknowledged, and
// opens the late watchers one by one at evenly spaced write counts meanwhile.
// It returns every acknowledged write.
// The late watchers watch with watchCtx.
func runSoakWrites(watchCtx context.Context, c *Cache, etcd storage.Interface, writes int, late []*soakWatcher) ([]ackedWrite, error) {
	ctx, cancel := context.WithCancel(watchCtx)
	defer cancel()
	// milestones[n] is closed on the n-th acknowledged write.
	milestones := map[int64]chan struct{}{}
	for j := range late {
		milestones[int64((j+1)*writes/(len(late)+1))] = make(chan struct{})
	}
	var budget, acked atomic.Int64
	budget.Store(int64(writes))
	onAck := func() {
		if ch, ok := milestones[acked.Add(1)]; ok {
			close(ch)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, soakWriters+1)
	writers := make([]*soakWriter, soakWriters)
	for i := range writers {
		writers[i] = &soakWriter{id: i, etcd: etcd, rand: rand.New(rand.NewPCG(1, uint64(i)))}
		wg.Go(func() {
			if errs[i] = writers[i].run(ctx, &budget, onAck); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Go(func() {
		for j, w := range late {
			select {
			case <-milestones[int64((j+1)*writes/(len(late)+1))]:
			case <-ctx.Done():
				return
			}
			if err := w.start(watchCtx, c); err != nil {
				errs[soakWriters] = fmt.Errorf("%s: %w", w, err)
				cancel()
				return
			}
		}
	})
	wg.Wait()
	var log []ackedWrite
	for _, wr := range writers {
		log = append(log, wr.log...)
	}
	return log, errors.Join(errs...)
}

// ackedWrite is one write etcd acknowledged.
type ackedWrite struct {
	key     string // namespace/name
	rv      uint64
	deleted bool
}

// soakWriter creates, updates (moving pods between label and field
// selectors) and deletes random pods of the pool.
type soakWriter struct {
	id   int
	etcd storage.Interface
	rand *rand.Rand
	seq  int
	log  []ackedWrite
}

// run writes until budget is spent, each acknowledged write taking one unit of it.
func (wr *soakWriter) run(ctx context.Context, budget *atomic.Int64, onAck func()) error {
	for budget.Add(-1) >= 0 {
		for {
			a, err := wr.writeOnce(ctx)
			if storage.IsNotFound(err) || storage.IsExist(err) {
				continue // deleting a missing pod or creating an existing one: not a write
			}
			if err != nil {
				return fmt.Errorf("writer %d: %w", wr.id, err)
			}
			wr.log = append(wr.log, a)
			onAck()
			break
		}
	}
	return nil
}

func (wr *soakWriter) writeOnce(ctx context.Context) (ackedWrite, error) {
	ns := soakNamespaces[wr.rand.IntN(len(soakNamespaces))]
	name := fmt.Sprintf("pod-%03d", wr.rand.IntN(soakNamesPerNamespace))
	key := "/pods/" + ns + "/" + name
	out := &example.Pod{}
	var err error
	deleted := false
	switch op := wr.rand.IntN(10); {
	case op < 2:
		deleted = true
		err = wr.etcd.Delete(ctx, key, out, nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{})
	case op < 4:
		pod := &example.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		wr.mutate(pod)
		err = wr.etcd.Create(ctx, key, pod, out, 0)
	default: // update, or create if missing
		err = wr.etcd.GuaranteedUpdate(ctx, key, out, true, nil, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			pod := in.(*example.Pod).DeepCopy()
			pod.Name, pod.Namespace = name, ns
			wr.mutate(pod)
			return pod, nil, nil
		}, nil)
	}
	if err != nil {
		return ackedWrite{}, err
	}
	rv, err := storage.APIObjectVersioner{}.ObjectResourceVersion(out)
	return ackedWrite{key: ns + "/" + name, rv: rv, deleted: deleted}, err
}

// mutate picks new labels and node for pod, and marks the write so that it
// always changes the pod (etcd skips updates that change nothing).
func (wr *soakWriter) mutate(pod *example.Pod) {
	wr.seq++
	pod.Labels = map[string]string{"app": soakApps[wr.rand.IntN(len(soakApps))]}
	if tier := soakTiers[wr.rand.IntN(len(soakTiers))]; tier != "" {
		pod.Labels["tier"] = tier
	}
	pod.Spec.NodeName = soakNodes[wr.rand.IntN(len(soakNodes))]
	pod.Annotations = map[string]string{"soak/write": fmt.Sprintf("%d-%d", wr.id, wr.seq)}
}

// checkWriteLog checks the test itself: the writes acknowledged have
// distinct RVs and end at the state etcd lists at the last one, which it returns.
func checkWriteLog(ctx context.Context, t *testing.T, etcd storage.Interface, log []ackedWrite) uint64 {
	t.Helper()
	slices.SortFunc(log, func(a, b ackedWrite) int { return cmp.Compare(a.rv, b.rv) })
	final := map[string]uint64{}
	for i, a := range log {
		if i > 0 && a.rv == log[i-1].rv {
			t.Fatalf("two acknowledged writes at RV %d", a.rv)
		}
		if a.deleted {
			delete(final, a.key)
		} else {
			final[a.key] = a.rv
		}
	}
	last := log[len(log)-1].rv
	inEtcd, err := etcdState(ctx, etcd, "/pods/", storage.Everything, last)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for key, pod := range inEtcd {
		got[key], _ = storage.APIObjectVersioner{}.ObjectResourceVersion(pod)
	}
	if !maps.Equal(got, final) {
		t.Fatalf("etcd at RV %d: got %v, want the acknowledged writes' %v", last, got, final)
	}
	return last
}

// etcdState lists key from etcd at exactly rv, filtered by pred, by namespace/name.
func etcdState(ctx context.Context, etcd storage.Interface, key string, pred storage.SelectionPredicate, rv uint64) (map[string]*example.Pod, error) {
	if rv == 0 {
		return nil, fmt.Errorf("listing %s from etcd: no resourceVersion to list at", key)
	}
	list := &example.PodList{}
	opts := storage.ListOptions{
		ResourceVersion:      fmt.Sprint(rv),
		ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		Recursive:            true,
		Predicate:            pred,
	}
	if err := etcd.GetList(ctx, key, opts, list); err != nil {
		return nil, fmt.Errorf("listing %s from etcd at RV %d: %w", key, rv, err)
	}
	state := map[string]*example.Pod{}
	for i := range list.Items {
		p := &list.Items[i]
		state[p.Namespace+"/"+p.Name] = p
	}
	return state, nil
}

// writeEndMarkers writes, one after another once the writers are done, an
// end marker for each watcher: a pod that its selector matches. A watcher
// has then seen every event it is owed once it has seen the last marker
// write that concerned it (one that its selector matches before or after),
// which becomes its target. It returns the last marker's RV.
func writeEndMarkers(ctx context.Context, etcd storage.Interface, watchers []*soakWatcher) (uint64, error) {
	type marker struct {
		prev, cur *example.Pod // prev is nil for a new pod
		rv        uint64
	}
	markers := make([]marker, len(watchers))
	for i, w := range watchers {
		ns, name := w.namespace, fmt.Sprintf("marker-%02d", i)
		if ns == "" {
			ns = soakMarkerNamespace
		}
		if n, ok := w.pred.Field.RequiresExactMatch("metadata.name"); ok {
			name = n // a pod of the pool, when the watch is of one namespace
		}
		out := &example.Pod{}
		err := etcd.GuaranteedUpdate(ctx, "/pods/"+ns+"/"+name, out, true, nil, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			old := in.(*example.Pod)
			markers[i].prev = nil
			if old.Name != "" {
				markers[i].prev = old.DeepCopy()
			}
			pod := old.DeepCopy()
			pod.Name, pod.Namespace = name, ns
			pod.Labels = maps.Clone(w.sel.markerLabels)
			pod.Spec.NodeName = w.sel.markerNode
			pod.Annotations = map[string]string{"soak/marker": fmt.Sprint(i)}
			return pod, nil, nil
		}, nil)
		if err != nil {
			return 0, fmt.Errorf("end marker of %s: %w", w, err)
		}
		if !w.matches(out) {
			return 0, fmt.Errorf("end marker of %s: %s/%s %v %q does not match it", w, ns, name, out.Labels, out.Spec.NodeName)
		}
		markers[i].cur = out
		markers[i].rv, _ = storage.APIObjectVersioner{}.ObjectResourceVersion(out)
	}
	for _, w := range watchers {
		var target uint64
		for _, m := range markers {
			if w.matches(m.cur) || m.prev != nil && w.matches(m.prev) {
				target = max(target, m.rv)
			}
		}
		w.target <- target
	}
	return markers[len(markers)-1].rv, nil
}

// awaitSoakWatchers waits until every watcher has seen its target or failed,
// for at most soakDeadline; then it stops the others (cancel) and returns false.
func awaitSoakWatchers(watchers []*soakWatcher, cancel context.CancelFunc) bool {
	deadline := time.NewTimer(soakDeadline)
	defer deadline.Stop()
	ok := true
	for _, w := range watchers {
		select {
		case <-w.done:
		case <-deadline.C:
			cancel()
			ok = false
			<-w.done
		}
		ok = ok && w.err == nil
	}
	return ok
}

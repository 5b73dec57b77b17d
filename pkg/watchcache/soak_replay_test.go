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
	"context"
	"fmt"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
)

// check replays w's segments as its client would and returns every
// inconsistency: events out of RV order overall or per object, changes to
// objects the client does not have, initial states (of watch-lists and
// LISTs) other than etcd's at their RV, and a final state other than etcd's
// at finalRV.
func (w *soakWatcher) check(ctx context.Context, etcd storage.Interface, finalRV uint64) []string {
	r := &replay{w: w}
	for i, seg := range w.segments {
		if live, ok := r.begin(ctx, etcd, i, seg, i == len(w.segments)-1); ok {
			r.live(i, live)
		}
	}
	r.compare(ctx, etcd, "replayed stream", finalRV)
	return r.report()
}

// begin starts replaying segment i: it sets up the state the segment's
// changes apply to (checking it, where it is the cache's) and returns those
// changes; false if there are none (a watch-list closed during its initial events).
func (r *replay) begin(ctx context.Context, etcd storage.Interface, i int, seg *segment, last bool) ([]soakEvent, bool) {
	if seg.start != startResume {
		r.reset()
	}
	events := seg.events
	switch seg.start {
	case startNow: // the client had etcd's state at fromRV
		state, err := etcdState(ctx, etcd, r.w.key, r.w.pred, seg.fromRV)
		if err != nil {
			r.problem("segment %d: %v", i, err)
		}
		for _, pod := range state {
			r.apply(soakEvent{typ: watch.Added, rv: mustRV(pod), pod: pod})
		}
		r.rv = seg.fromRV
	case startList:
		for _, pod := range seg.listed {
			r.apply(soakEvent{typ: watch.Added, rv: mustRV(pod), pod: pod})
		}
		r.compare(ctx, etcd, fmt.Sprintf("segment %d: LIST from the cache", i), seg.fromRV)
		r.rv = seg.fromRV
	case startZero:
		// The initial events end where the ADDED events in key order do
		// (or later: then the events taken for initial are in order anyway).
		n := 0
		for n < len(events) && events[n].typ == watch.Added && (n == 0 || events[n].key() > events[n-1].key()) {
			n++
		}
		return r.initial(events[:n], events[n:]), true
	case startWatchList:
		end := slices.IndexFunc(events, func(e soakEvent) bool { return e.typ != watch.Added })
		if end < 0 || !events[end].initialEventsEnd() {
			if last || end >= 0 {
				r.problem("segment %d: watch-list without its initial-events-end bookmark after its initial events", i)
			}
			r.initial(events, nil)
			return nil, false
		}
		bookmark := events[end]
		for _, e := range events[:end] {
			if e.rv > bookmark.rv {
				r.problem("segment %d: initial %s newer than its end bookmark at RV %d", i, e, bookmark.rv)
			}
		}
		events = r.initial(events[:end], events[end+1:])
		r.compare(ctx, etcd, fmt.Sprintf("segment %d: initial events", i), bookmark.rv)
		r.rv = bookmark.rv
	case startResume:
		if seg.fromRV != r.rv {
			r.problem("segment %d resumed from RV %d, but the stream was at RV %d", i, seg.fromRV, r.rv)
		}
	}
	return events, true
}

func mustRV(pod *example.Pod) uint64 {
	rv, err := storage.APIObjectVersioner{}.ParseResourceVersion(pod.ResourceVersion)
	if err != nil {
		panic(err)
	}
	return rv
}

// replay is a client's view of a watcher's stream, with what it found wrong.
type replay struct {
	w        *soakWatcher
	state    map[string]*example.Pod // by namespace/name
	objRV    map[string]uint64       // each object's last event's RV, deletions included
	rv       uint64                  // the stream's last RV
	problems []string
	dropped  int // problems beyond the first few
}

func (r *replay) reset() {
	r.state, r.objRV, r.rv = map[string]*example.Pod{}, map[string]uint64{}, 0
}

func (r *replay) problem(format string, args ...any) {
	if len(r.problems) < 10 {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
	} else {
		r.dropped++
	}
}

func (r *replay) report() []string {
	if r.dropped > 0 {
		return append(r.problems, fmt.Sprintf("and %d more problems", r.dropped))
	}
	return r.problems
}

// initial applies initial events (ADDED, in no RV order, at most the RV of
// the state they make up) and returns the events after them.
func (r *replay) initial(initial, rest []soakEvent) []soakEvent {
	for _, e := range initial {
		if e.typ != watch.Added {
			r.problem("initial %s: want ADDED", e)
		}
		r.apply(e)
		r.rv = max(r.rv, e.rv)
	}
	return rest
}

// live applies the events after the initial state: strictly in RV order,
// bookmarks at no older RV.
func (r *replay) live(segment int, events []soakEvent) {
	for _, e := range events {
		switch {
		case e.typ == watch.Bookmark:
			if e.rv < r.rv {
				r.problem("segment %d: bookmark at RV %d after RV %d", segment, e.rv, r.rv)
			}
			if e.initialEventsEnd() {
				r.problem("segment %d: initial-events-end bookmark at RV %d outside the initial events", segment, e.rv)
			}
		case e.rv <= r.rv:
			r.problem("segment %d: %s after RV %d: out of RV order", segment, e, r.rv)
		}
		r.rv = max(r.rv, e.rv)
		if e.typ != watch.Bookmark {
			r.apply(e)
		}
	}
}

// apply changes the client's state by e, checking e against the object's history.
func (r *replay) apply(e soakEvent) {
	key := e.key()
	if !r.w.matches(e.pod) {
		r.problem("%s (labels %v, node %q) does not match the watch", e, e.pod.Labels, e.pod.Spec.NodeName)
	}
	if prev, ok := r.objRV[key]; ok && e.rv <= prev {
		r.problem("%s after that object's RV %d", e, prev)
	}
	r.objRV[key] = e.rv
	_, present := r.state[key]
	switch e.typ {
	case watch.Added:
		if present {
			r.problem("%s: ADDED again without DELETED", e)
		}
		r.state[key] = e.pod
	case watch.Modified:
		if !present {
			r.problem("%s: MODIFIED before ADDED", e)
		}
		r.state[key] = e.pod
	case watch.Deleted:
		if !present {
			r.problem("%s: DELETED before ADDED", e)
		}
		delete(r.state, key)
	default:
		r.problem("unexpected %s", e)
	}
}

// compare checks the client's state against etcd's at exactly rv.
func (r *replay) compare(ctx context.Context, etcd storage.Interface, what string, rv uint64) {
	want, err := etcdState(ctx, etcd, r.w.key, r.w.pred, rv)
	if err != nil {
		r.problem("%s: %v", what, err)
		return
	}
	var diffs []string
	for key, pod := range want {
		got, ok := r.state[key]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("missing %s@%s", key, pod.ResourceVersion))
		case !apiequality.Semantic.DeepEqual(got, pod):
			diffs = append(diffs, fmt.Sprintf("%s: got %s %v %q, want %s %v %q", key,
				got.ResourceVersion, got.Labels, got.Spec.NodeName, pod.ResourceVersion, pod.Labels, pod.Spec.NodeName))
		}
	}
	for key, pod := range r.state {
		if _, ok := want[key]; !ok {
			diffs = append(diffs, fmt.Sprintf("extra %s@%s", key, pod.ResourceVersion))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		r.problem("%s differs from etcd at RV %d (%d objects there): %s", what, rv, len(want), strings.Join(diffs, "; "))
	}
}

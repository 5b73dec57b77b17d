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
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
)

// soakSelector is a selector a soak watcher may use, with the labels and
// node of an end marker that it matches (a metadata.name selector also
// names the marker).
type soakSelector struct {
	label, field string
	markerLabels map[string]string
	markerNode   string
}

// soakSelectors: equality, set-based and no label selectors, field selectors
// on metadata.name and spec.nodeName (indexed by the soak's cache). 13 of
// them, so that with 4 start modes and 3 namespace choices every watcher
// gets a different combination.
var soakSelectors = []soakSelector{
	{"", "", map[string]string{"app": "a"}, ""},
	{"app=a", "", map[string]string{"app": "a"}, ""},
	{"app in (a,b)", "", map[string]string{"app": "b", "tier": "web"}, ""},
	{"app notin (a)", "", map[string]string{"app": "c"}, ""},
	{"tier", "", map[string]string{"app": "a", "tier": "db"}, ""},
	{"!tier", "", map[string]string{"app": "b"}, ""},
	{"app=b,tier=web", "", map[string]string{"app": "b", "tier": "web"}, ""},
	{"", "spec.nodeName=node-1", map[string]string{"app": "a"}, "node-1"},
	{"app in (b,c)", "spec.nodeName=node-2", map[string]string{"app": "c"}, "node-2"},
	{"", "metadata.name=pod-007", map[string]string{"app": "a"}, ""},
	{"app=c", "metadata.name=pod-021", map[string]string{"app": "c"}, ""},
	{"", "spec.nodeName!=node-3", map[string]string{"app": "a"}, "node-1"},
	{"tier=web,app!=a", "spec.nodeName=", map[string]string{"app": "b", "tier": "web"}, ""},
}

// soakStart is how a soak watcher opens a watch.
type soakStart int

const (
	startNow       soakStart = iota // from the cache's current resourceVersion
	startList                       // a LIST from the cache, then a watch from its resourceVersion
	startZero                       // resourceVersion "0": the cache's state as ADDED events, then changes
	startWatchList                  // sendInitialEvents=true with bookmarks (watch-list)
	startResume                     // from the last resourceVersion seen, after the cache closed the watch
)

func (s soakStart) String() string {
	return [...]string{"now", "list", "rv0", "watch-list", "resume"}[s]
}

// soakWatcher is one client of the cache: it opens a watch, records what it
// receives, and, when the cache closes the watch (it fell behind), watches
// again as a client would: from the last RV it saw, or, if it never had a
// complete initial state, with a new watch-list.
type soakWatcher struct {
	index     int
	mode      soakStart // of its first watch
	rv        string    // startList and startWatchList: "" (consistent) or "0"
	namespace string    // "": all namespaces
	sel       soakSelector
	key       string
	pred      storage.SelectionPredicate

	// target is the RV to reach, sent once the end markers are written.
	target  chan uint64
	started bool // by start, which starts the consumer
	// done is closed when the consumer returns; it owns the fields below until then.
	done chan struct{}
	err  error
	// segments are the watches opened, oldest first.
	segments []*segment
	// stallBelow, when set, is an RV the writes will reach: on its first
	// event, w stops reading for soakStallEvents events if that stays below it.
	stallBelow uint64
	// maxRV is the newest RV the stream has shown, and resumable whether a
	// watch from it would continue the stream (not during initial events).
	maxRV             uint64
	resumable         bool
	resumes, restarts int
	stalled           bool          // it stopped reading for soakStallEvents events
	stalledFor        time.Duration // for how long
	timeouts          int           // watches refused with 504 (the cache was not fresh enough in time)
}

// segment is one watch of a soak watcher: how it was opened and what it delivered.
type segment struct {
	start  soakStart
	fromRV uint64         // startNow, startList, startResume: the RV watched from
	listed []*example.Pod // startList: the cache's LIST the watch continues
	events []soakEvent
}

// soakEvent is a delivered event, its object unwrapped.
type soakEvent struct {
	typ watch.EventType
	rv  uint64
	pod *example.Pod // the bookmark object for a bookmark
}

func (e soakEvent) key() string { return e.pod.Namespace + "/" + e.pod.Name }

func (e soakEvent) initialEventsEnd() bool {
	return e.typ == watch.Bookmark && e.pod.Annotations[metav1.InitialEventsAnnotationKey] == "true"
}

func (e soakEvent) String() string { return fmt.Sprintf("%s %s@%d", e.typ, e.key(), e.rv) }

// newSoakWatcher makes watcher i of a soak of writes writes; the combination
// of selector, start mode and namespace differs for every i below 13*4*3.
// The watchers without selectors stall once, so that they fall behind and
// must catch up from the cache's history.
func newSoakWatcher(i, writes int) *soakWatcher {
	w := &soakWatcher{
		index:  i,
		mode:   soakStart(i % 4),
		sel:    soakSelectors[i%len(soakSelectors)],
		key:    "/pods/",
		target: make(chan uint64, 1),
		done:   make(chan struct{}),
	}
	if (i/4)%2 == 1 {
		w.rv = "0"
	}
	if i%len(soakSelectors) == 0 {
		w.stallBelow = 1 + uint64(writes) // etcd's revision starts at 1; each write adds 1
	}
	if n := i % 3; n > 0 {
		w.namespace = soakNamespaces[n-1]
		w.key += w.namespace + "/"
	}
	w.pred = storage.SelectionPredicate{
		Label:               labels.Everything(),
		Field:               fields.Everything(),
		GetAttrs:            podAttrs,
		AllowWatchBookmarks: i%2 == 0,
	}
	var err error
	if w.pred.Label, err = labels.Parse(w.sel.label); err != nil {
		panic(err)
	}
	if w.pred.Field, err = fields.ParseSelector(w.sel.field); err != nil {
		panic(err)
	}
	return w
}

func (w *soakWatcher) String() string {
	ns := w.namespace
	if ns == "" {
		ns = "all"
	}
	return fmt.Sprintf("watcher %d (%s rv=%q, namespace %s, labels %q, fields %q)", w.index, w.mode, w.rv, ns, w.sel.label, w.sel.field)
}

// matches reports whether pod belongs to w's watch.
func (w *soakWatcher) matches(pod *example.Pod) bool {
	ok, err := w.pred.Matches(pod)
	return err == nil && ok && (w.namespace == "" || pod.Namespace == w.namespace)
}

// start opens w's first watch and consumes it in the background.
func (w *soakWatcher) start(ctx context.Context, c *Cache) error {
	wi, err := w.open(ctx, c, w.mode)
	if err != nil {
		return err
	}
	w.started = true
	go w.consume(ctx, c, wi)
	return nil
}

// open opens a watch and starts a segment for it.
func (w *soakWatcher) open(ctx context.Context, c *Cache, start soakStart) (watch.Interface, error) {
	seg := &segment{start: start}
	opts := storage.ListOptions{Recursive: true, Predicate: w.pred}
	switch start {
	case startNow:
		seg.fromRV = c.ResourceVersion()
		opts.ResourceVersion = fmt.Sprint(seg.fromRV)
	case startList:
		list := &example.PodList{}
		if err := c.GetList(ctx, w.key, storage.ListOptions{ResourceVersion: w.rv, Recursive: true, Predicate: w.pred}, list); err != nil {
			return nil, err
		}
		var err error
		if seg.fromRV, err = (storage.APIObjectVersioner{}).ParseResourceVersion(list.ResourceVersion); err != nil {
			return nil, err
		}
		for i := range list.Items {
			seg.listed = append(seg.listed, &list.Items[i])
		}
		opts.ResourceVersion = list.ResourceVersion
	case startZero:
		opts.ResourceVersion = "0"
	case startWatchList:
		sendInitialEvents := true
		opts.SendInitialEvents = &sendInitialEvents
		opts.ResourceVersion = w.rv
		opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
		opts.Predicate.AllowWatchBookmarks = true
	case startResume:
		seg.fromRV = w.maxRV
		opts.ResourceVersion = fmt.Sprint(w.maxRV)
	}
	wi, err := c.Watch(ctx, w.key, opts)
	if err != nil {
		return nil, err
	}
	w.segments = append(w.segments, seg)
	if start != startResume {
		// In a watch from "0", the RVs of initial events do count: a first
		// watch starts before the end markers exist, so any event at or
		// after the target comes after the initial events.
		w.maxRV, w.resumable = seg.fromRV, start == startNow || start == startList
	}
	return wi, nil
}

// consume records events until the stream reaches w's target or ctx ends.
func (w *soakWatcher) consume(ctx context.Context, c *Cache, wi watch.Interface) {
	defer close(w.done)
	defer func() { wi.Stop() }()
	var target uint64 // 0 until known
	targets := w.target
	for target == 0 || w.maxRV < target {
		select {
		case <-ctx.Done():
			w.err = fmt.Errorf("stopped at RV %d, before its target RV %d", w.maxRV, target)
			return
		case target = <-targets:
			targets = nil
		case ev, ok := <-wi.ResultChan():
			if ok {
				if w.err = w.record(ev); w.err != nil {
					return
				}
				w.maybeStall(ctx, c)
				continue
			}
			if ctx.Err() != nil {
				continue
			}
			if wi, w.err = w.reopen(ctx, c); w.err != nil {
				return
			}
		}
	}
}

// soakStallEvents is how many events a stalled watcher lets pass: far more
// than its buffers hold, about 3 s of the soak's writes under -race.
const soakStallEvents = 2000

// maybeStall stops reading, once, until the cache has applied
// soakStallEvents more events, if the writes are to go that far: the
// watcher falls behind, as a slow client's, and must catch up with no gap.
func (w *soakWatcher) maybeStall(ctx context.Context, c *Cache) {
	if w.stallBelow == 0 {
		return
	}
	until := c.ResourceVersion() + soakStallEvents
	if until <= w.stallBelow {
		// Whether the cache catches up in time or not, reading goes on.
		began := time.Now()
		_ = c.waitUntilFresh(ctx, until, soakDeadline)
		w.stalled, w.stalledFor = true, time.Since(began)
	}
	w.stallBelow = 0
}

// reopen watches again after the cache closed w's watch, as a client would.
func (w *soakWatcher) reopen(ctx context.Context, c *Cache) (watch.Interface, error) {
	if w.resumable {
		w.resumes++
		return w.open(ctx, c, startResume)
	}
	w.restarts++
	return w.open(ctx, c, startWatchList)
}

// record appends ev to the current segment and advances maxRV by it.
func (w *soakWatcher) record(ev watch.Event) error {
	seg := w.segments[len(w.segments)-1]
	if ev.Type == watch.Error {
		if len(seg.events) == 0 && storage.IsTooLargeResourceVersion(apierrors.FromObject(ev.Object)) {
			w.timeouts++ // the cache did not catch up in time (504): the watch closes, the client retries
			return nil
		}
		return fmt.Errorf("ERROR event: %v", ev.Object)
	}
	pod, ok := unwrap(ev.Object).(*example.Pod)
	if !ok {
		return fmt.Errorf("%s event with a %T", ev.Type, ev.Object)
	}
	rv, err := storage.APIObjectVersioner{}.ParseResourceVersion(pod.ResourceVersion)
	if err != nil {
		return fmt.Errorf("%s event: %w", ev.Type, err)
	}
	e := soakEvent{typ: ev.Type, rv: rv, pod: pod}
	seg.events = append(seg.events, e)
	switch {
	case e.initialEventsEnd():
		w.resumable = true
	case seg.start == startWatchList && !w.resumable:
		return nil // an initial event: its RV says nothing about the stream's progress
	}
	w.maxRV = max(w.maxRV, rv)
	return nil
}

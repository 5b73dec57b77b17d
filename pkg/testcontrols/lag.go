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

package testcontrols

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	apistorage "k8s.io/apiserver/pkg/storage"
)

// Followed applies the WatchCacheLag rules to s, the storage the watch
// cache of gr follows: the events of its watches reach the cache that
// much later.
func (f *Faults) Followed(gr schema.GroupResource, s apistorage.Interface) apistorage.Interface {
	return &followedStorage{Interface: s, f: f, gr: gr}
}

type followedStorage struct {
	apistorage.Interface
	f  *Faults
	gr schema.GroupResource
}

func (s *followedStorage) Watch(ctx context.Context, key string, opts apistorage.ListOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	l := &laggingWatch{in: w, out: make(chan watch.Event), done: make(chan struct{}), f: s.f, gr: s.gr}
	go l.run()
	return l, nil
}

// laggingWatch passes on in's events, each no sooner than the lag of the
// rule that hit it after it came (a rule deleted meanwhile: at once), in
// order.
type laggingWatch struct {
	in   watch.Interface
	out  chan watch.Event
	done chan struct{}
	stop sync.Once
	f    *Faults
	gr   schema.GroupResource
}

// lagged is an event, when it came, and the rule that hit it.
type lagged struct {
	ev   watch.Event
	at   time.Time
	rule *rule
}

func (l *laggingWatch) ResultChan() <-chan watch.Event { return l.out }

func (l *laggingWatch) Stop() {
	l.stop.Do(func() {
		close(l.done)
		l.in.Stop()
	})
}

func (l *laggingWatch) run() {
	defer close(l.out)
	in := l.in.ResultChan()
	var queue []lagged
	for in != nil || len(queue) > 0 {
		var out chan watch.Event
		var head watch.Event
		var wait <-chan time.Time
		r, changed := l.f.lag(l.gr)
		if len(queue) > 0 {
			if d := l.due(queue[0]); d > 0 {
				wait = l.f.clock.After(d)
			} else {
				out, head = l.out, queue[0].ev
			}
		}
		select {
		case ev, ok := <-in:
			if !ok {
				in = nil
				continue
			}
			e := lagged{ev: ev, at: l.f.clock.Now()}
			if r != nil && l.f.take(r) {
				e.rule = r
			}
			queue = append(queue, e)
		case out <- head:
			queue[0] = lagged{}
			queue = queue[1:]
		case <-wait:
		case <-changed:
		case <-l.done:
			return
		}
	}
}

// due is how long e still waits: its rule's lag (as the rule is now)
// after it came.
func (l *laggingWatch) due(e lagged) time.Duration {
	if e.rule == nil {
		return 0
	}
	var lag time.Duration
	l.f.mu.RLock()
	for _, r := range l.f.rules { // the rule's current version, if not deleted
		if r.state == e.rule.state && r.obj.Spec.WatchCacheLag != nil {
			lag = r.obj.Spec.WatchCacheLag.Duration
		}
	}
	l.f.mu.RUnlock()
	return e.at.Add(lag).Sub(l.f.clock.Now())
}

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
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
)

// fanOut is the watchers of one watch fan-out run, each reading its own
// JSON watch stream.
type fanOut struct {
	events   int
	began    time.Time       // origin of the sent and received offsets
	sent     []time.Duration // per timed event: when its update was sent
	watchers []*watcher
	clients  []*http.Client // one per connection; watcher i uses clients[i/perConn]

	cancel    context.CancelFunc // stops every watcher
	running   sync.WaitGroup     // the watcher goroutines
	warmed    sync.WaitGroup     // one Done per watcher: warm-up event seen, or stream ended
	finished  sync.WaitGroup     // one Done per watcher: last event seen, or stream ended
	gotWarmUp atomic.Int64       // watchers that have seen the warm-up event
	once      sync.Once          // guards close

	mu       sync.Mutex // guards ended and firstErr
	ended    int        // watchers whose stream has ended early
	firstErr error      // why the first of them ended
}

// watcher is one watch stream. Its fields are written by its goroutine and
// read by others only after fanOut.running is done.
type watcher struct {
	received []time.Duration // per timed event: when it arrived; 0: not (yet)
	err      error           // why the stream ended before the last event
	warm     bool            // the warm-up event (or the end) has been signalled
	finished bool            // the last event (or the end) has been signalled
}

func newFanOut(n, events int) *fanOut {
	f := &fanOut{events: events, began: time.Now(), sent: make([]time.Duration, events), cancel: func() {}}
	for range n {
		f.watchers = append(f.watchers, &watcher{received: make([]time.Duration, events)})
	}
	return f
}

// open starts every watch from resourceVersion rv, perConn of them on each
// HTTP/2 connection, and returns once the server has answered each one.
func (f *fanOut) open(ctx context.Context, rc *rest.Config, rv string, perConn int) error {
	ctx, f.cancel = context.WithCancel(ctx)
	var clients []rest.Interface
	for range (len(f.watchers) + perConn - 1) / perConn {
		client, hc, err := ownClient(rc)
		if err != nil {
			return err
		}
		clients, f.clients = append(clients, client.CoreV1().RESTClient()), append(f.clients, hc)
	}
	opened := make(chan error, len(f.watchers))
	f.warmed.Add(len(f.watchers))
	f.finished.Add(len(f.watchers))
	for i, w := range f.watchers {
		f.running.Go(func() { f.watch(ctx, clients[i/perConn], rv, w, opened) })
	}
	var errs []error
	for range f.watchers {
		if err := <-opened; err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d watches failed to start, the first: %w", len(errs), len(f.watchers), errs[0])
	}
	return nil
}

// watch runs one watcher: it opens the stream, reports on opened, reads
// events until the last timed one, then holds the stream open until ctx ends.
func (f *fanOut) watch(ctx context.Context, rc rest.Interface, rv string, w *watcher, opened chan<- error) {
	body, err := rc.Get().AbsPath(listPath).
		Param("watch", "true").Param("resourceVersion", rv).
		SetHeader("Accept", acceptJSON).Stream(ctx)
	opened <- err
	if err != nil {
		w.end(f, err)
		return
	}
	defer body.Close()
	if err := w.read(f, body); err != nil {
		w.end(f, err)
		return
	}
	<-ctx.Done()
}

// read handles events until the last timed one; any other return is an error.
func (w *watcher) read(f *fanOut, body io.Reader) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4<<10), 1<<20)
	for sc.Scan() {
		at := time.Since(f.began)
		typ, seq, err := parseEvent(sc.Bytes())
		switch {
		case err != nil:
			return err
		case typ == "ERROR":
			return fmt.Errorf("ERROR event: %.300s", sc.Bytes())
		case typ == "BOOKMARK":
		case seq == warmUpSeq:
			w.signalWarm(f)
		default:
			i, err := strconv.Atoi(seq)
			if err != nil || i < 0 || i >= f.events {
				continue // the creation, or not ours
			}
			if w.received[i] == 0 {
				w.received[i] = at
			}
			if i == f.events-1 {
				w.signalFinished(f)
				return nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the watch stream: %w", err)
	}
	return errors.New("the server ended the watch stream")
}

func (w *watcher) signalWarm(f *fanOut) {
	if !w.warm {
		if w.err == nil {
			f.gotWarmUp.Add(1)
		}
		w.warm = true
		f.warmed.Done()
	}
}

func (w *watcher) signalFinished(f *fanOut) {
	if !w.finished {
		w.finished = true
		f.finished.Done()
	}
}

// end records why the stream ended early and releases every wait for it.
func (w *watcher) end(f *fanOut, err error) {
	w.err = err
	f.mu.Lock()
	f.ended++
	if f.firstErr == nil {
		f.firstErr = err
	}
	f.mu.Unlock()
	w.signalWarm(f)
	w.signalFinished(f)
}

// parseEvent reads a JSON watch event's type and its ConfigMap's data.seq
// without decoding it: the server writes one event per line as
// {"type":"MODIFIED","object":{...}}.
func parseEvent(line []byte) (typ, seq string, err error) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"type":"`))
	if !ok {
		return "", "", fmt.Errorf("not a JSON watch event: %.100s", line)
	}
	t, _, _ := bytes.Cut(rest, []byte(`"`))
	if _, after, ok := bytes.Cut(rest, []byte(`"`+seqKey+`":"`)); ok {
		s, _, _ := bytes.Cut(after, []byte(`"`))
		seq = string(s)
	}
	return string(t), seq, nil
}

// awaitWarmUp waits until every watcher has seen the warm-up event.
func (f *fanOut) awaitWarmUp(ctx context.Context) error {
	err := waitGroupFor(ctx, &f.warmed, deliveryTimeout)
	if errors.Is(err, errWaitTimeout) {
		return fmt.Errorf("%d of %d watchers got the warm-up event within %s", f.gotWarmUp.Load(), len(f.watchers), deliveryTimeout)
	}
	if err != nil {
		return err
	}
	if n, first := f.endedEarly(); n > 0 {
		return fmt.Errorf("%d of %d watches ended before the warm-up event, the first: %w", n, len(f.watchers), first)
	}
	return nil
}

func (f *fanOut) endedEarly() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended, f.firstErr
}

// close stops every watcher, waits for them and closes their connections.
// It is safe to call more than once.
func (f *fanOut) close() {
	f.once.Do(func() {
		f.cancel()
		f.running.Wait()
		for _, hc := range f.clients {
			closeIdle(hc)
		}
	})
}

// results are the delivery latencies, ascending, and the watchers that
// ended early, with the first one's reason. Call it after close.
func (f *fanOut) results() (latencies []time.Duration, ended int, endErr error) {
	for _, w := range f.watchers {
		for i, at := range w.received {
			if at > 0 {
				latencies = append(latencies, at-f.sent[i])
			}
		}
		if w.err != nil {
			ended++
			if endErr == nil || errors.Is(endErr, context.Canceled) {
				endErr = w.err // a reason other than our own cancel, if any
			}
		}
	}
	slices.Sort(latencies)
	return latencies, ended, endErr
}

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
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// startRecorderLocked starts watching every key under the prefix from the
// revision after rev, the oldest checkpoint's.
func (cs *Checkpoints) startRecorderLocked(rev int64) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	cs.stopRecorder, cs.recorderDone, cs.recorderErr = cancel, done, nil
	cs.latest = map[string]*mvccpb.KeyValue{}
	cs.recorded = rev
	// The watch's context carries no metadata, so RequestProgress(ctx)
	// reaches its stream (clientv3 keys streams by outgoing metadata).
	events := cs.client.Watch(ctx, cs.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithPrevKV())
	go func() {
		defer utilruntime.HandleCrash()
		defer close(done)
		err := cs.record(ctx, done, events)
		cs.mu.Lock()
		defer cs.mu.Unlock()
		if cs.recorderDone == done {
			cs.recorderErr = err
			cs.advanceLocked()
		}
	}()
}

// stopRecorderLocked ends the recorder, if one runs, and forgets what it
// recorded.
func (cs *Checkpoints) stopRecorderLocked() {
	if cs.stopRecorder == nil {
		return
	}
	cs.stopRecorder()
	cs.stopRecorder, cs.recorderDone, cs.latest = nil, nil, nil
	cs.advanceLocked()
}

// record keeps, for every event, the key's previous value in each
// checkpoint older than the event that has none for it yet, and the key's
// newest value. It returns why the watch ended.
func (cs *Checkpoints) record(ctx context.Context, self chan struct{}, events clientv3.WatchChan) error {
	for resp := range events {
		if err := resp.Err(); err != nil {
			return fmt.Errorf("the checkpoints' etcd watch failed: %w", err)
		}
		cs.mu.Lock()
		if cs.recorderDone != self { // stopped, maybe replaced
			cs.mu.Unlock()
			return nil
		}
		rev := resp.Header.Revision
		if !resp.IsProgressNotify() {
			// Events from history come in batches whose header may name
			// a later revision than their last event: only events count.
			rev = cs.recorded
		}
		for _, ev := range resp.Events {
			cs.recordLocked(ev)
			rev = max(rev, ev.Kv.ModRevision)
		}
		if rev > cs.recorded {
			cs.recorded = rev
			cs.advanceLocked()
		}
		cs.mu.Unlock()
	}
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("the checkpoints' etcd watch ended")
}

func (cs *Checkpoints) recordLocked(ev *clientv3.Event) {
	key := string(ev.Kv.Key)
	for _, c := range cs.held {
		if c.Revision >= ev.Kv.ModRevision {
			continue
		}
		if _, ok := c.before[key]; !ok {
			c.before[key] = ev.PrevKv // nil for a key made since
		}
	}
	if ev.Type == clientv3.EventTypeDelete {
		cs.latest[key] = nil
		return
	}
	cs.latest[key] = ev.Kv
}

// advanceLocked wakes whoever waits for the recorder.
func (cs *Checkpoints) advanceLocked() {
	close(cs.progressed)
	cs.progressed = make(chan struct{})
}

// progressPoll is how often waitRecorded asks etcd for a progress
// notification, which etcd sends only once the watch has caught up.
const progressPoll = 2 * time.Millisecond

// waitRecorded waits until the recorder has seen every revision up to rev.
func (cs *Checkpoints) waitRecorded(ctx context.Context, rev int64) error {
	for {
		cs.mu.Lock()
		recorded, progressed, err, running := cs.recorded, cs.progressed, cs.recorderErr, cs.stopRecorder != nil
		cs.mu.Unlock()
		switch {
		case err != nil:
			return err
		case !running:
			return errors.New("no checkpoint is held")
		case recorded >= rev:
			return nil
		}
		if err := cs.client.RequestProgress(context.Background()); err != nil {
			return fmt.Errorf("asking etcd for the watch's progress: %w", err)
		}
		select {
		case <-progressed:
		case <-cs.clock.After(progressPoll):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

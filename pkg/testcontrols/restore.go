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
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Result counts what a restore wrote.
type Result struct {
	// Deleted are the keys made since the checkpoint.
	Deleted int
	// Recreated are the keys deleted since, put back.
	Recreated int
	// Reverted are the keys changed since, put back as they were.
	Reverted int
	// Revision is the etcd revision once the restore is written.
	Revision int64
}

// change is one key to put back or delete.
type change struct {
	key string
	// want is the value at the checkpoint (nil: delete the key); have the
	// newest value recorded (nil: none).
	want, have *mvccpb.KeyValue
}

// Restore writes back the state of the checkpoint name: keys made since
// are deleted, keys changed or deleted since are put back. Each key is
// one compare-and-swap transaction: a writer racing the restore makes it
// read the key again and write it over. The checkpoint stays held.
func (cs *Checkpoints) Restore(ctx context.Context, name string) (Result, error) {
	if err := cs.beginRestore(name); err != nil {
		return Result{}, err
	}
	defer cs.endRestore()
	start, err := cs.revision(ctx)
	if err != nil {
		return Result{}, err
	}
	res := Result{Revision: start}
	var deleted []string
	settled := false // restored was called: the server has seen the restore
	defer func() {
		if cs.restored != nil && res.Revision > start && !settled {
			cs.restored(ctx, res.Revision, deleted)
		}
	}()
	// A writer racing the restore (a controller making again a dependent
	// the restore deleted, its cache still holding the owner) leaves
	// changes since the checkpoint: the next round, once they are
	// recorded, undoes them. When a round finds nothing left, the server
	// is told (restored: its admission waits to see the namespaces the
	// restore deleted go), and one more round undoes what a writer got
	// into them before that.
	for round := range restoreRounds + 1 {
		rev := start
		if round > 0 { // what was written until now, racing writers' too
			if rev, err = cs.revision(ctx); err != nil {
				return res, err
			}
		}
		if err := cs.waitRecorded(ctx, rev); err != nil {
			return res, apierrors.NewInternalError(err)
		}
		puts, deletes, err := cs.changes(name)
		if err != nil {
			return res, err
		}
		if len(puts)+len(deletes) == 0 {
			if settled || cs.restored == nil || res.Revision <= start {
				return res, nil
			}
			cs.restored(ctx, res.Revision, deleted)
			settled = true
			continue
		}
		for _, phase := range [][]change{puts, deletes} {
			if err := cs.writeAll(ctx, phase, &res, &deleted); err != nil {
				return res, apierrors.NewInternalError(err)
			}
		}
		settled = false
	}
	return res, nil
}

// restoreRounds bounds the rounds of a restore: the first writes what
// changed since the checkpoint, the others what racing writers changed
// during the one before (plus one, after the server has been told).
const restoreRounds = 4

// inFlight is how many writes a restore has sent to etcd at once: etcd
// applies them one revision each, in about the order sent, and syncs them
// together.
const inFlight = 16

// writeAll makes the changes, inFlight at a time, sent in order, counts
// them in res and adds the keys it deleted to deleted.
func (cs *Checkpoints) writeAll(ctx context.Context, changes []change, res *Result, deleted *[]string) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	slots := make(chan struct{}, inFlight)
	for _, c := range changes {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			rev, err := cs.write(ctx, c)
			if err == nil && cs.written != nil {
				cs.written(c.key)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("restoring %s: %w", c.key, err))
				return
			}
			res.Revision = max(res.Revision, rev)
			switch {
			case c.want == nil:
				res.Deleted++
				*deleted = append(*deleted, c.key)
			case c.have == nil:
				res.Recreated++
			default:
				res.Reverted++
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (cs *Checkpoints) beginRestore(name string) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, ok := cs.held[name]; !ok {
		return apierrors.NewNotFound(Resource, name)
	}
	if cs.restoring {
		return apierrors.NewConflict(Resource, name, errors.New("another restore is in progress"))
	}
	cs.restoring = true
	return nil
}

func (cs *Checkpoints) endRestore() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.restoring = false
}

// changes lists the writes that restore the checkpoint name: first the
// puts, oldest key first (owners before their dependents, as they were
// made; a dependent put back without the owner reference it has now
// before that owner goes), then the deletions, oldest key first too
// (namespaces and owners before what is in them or depends on them): a
// controller woken by a dependent's deletion finds its owner gone, rather
// than making the dependent again. A garbage collector that sees a
// dependent's owner missing deletes what the restore deletes next.
func (cs *Checkpoints) changes(name string) (puts, deletes []change, err error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.held[name]
	if !ok {
		return nil, nil, apierrors.NewNotFound(Resource, name)
	}
	for key, want := range c.before {
		have := cs.latest[key]
		switch {
		case want == nil && have == nil:
		case want == nil:
			deletes = append(deletes, change{key: key, have: have})
		case have != nil && bytes.Equal(want.Value, have.Value):
		default:
			puts = append(puts, change{key: key, want: want, have: have})
		}
	}
	slices.SortFunc(puts, func(a, b change) int { return cmp.Compare(a.want.CreateRevision, b.want.CreateRevision) })
	slices.SortFunc(deletes, func(a, b change) int { return cmp.Compare(a.have.CreateRevision, b.have.CreateRevision) })
	return puts, deletes, nil
}

// casAttempts bounds how often one key is written over a racing writer.
const casAttempts = 5

// write makes one change, if the key is still as recorded; otherwise it
// reads the key again and retries. It returns the revision written.
func (cs *Checkpoints) write(ctx context.Context, c change) (int64, error) {
	for range casAttempts {
		cond := clientv3.Compare(clientv3.CreateRevision(c.key), "=", 0)
		if c.have != nil {
			cond = clientv3.Compare(clientv3.ModRevision(c.key), "=", c.have.ModRevision)
		}
		var op clientv3.Op
		switch {
		case c.want == nil:
			op = clientv3.OpDelete(c.key)
		case c.want.Lease != 0:
			op = clientv3.OpPut(c.key, string(c.want.Value), clientv3.WithLease(clientv3.LeaseID(c.want.Lease)))
		default:
			op = clientv3.OpPut(c.key, string(c.want.Value))
		}
		resp, err := cs.client.Txn(ctx).If(cond).Then(op).Else(clientv3.OpGet(c.key)).Commit()
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			// Its lease (an Event's TTL) has run out since: the key
			// would be gone by now, as it is.
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if resp.Succeeded {
			return resp.Header.Revision, nil
		}
		c.have = nil
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			c.have = kvs[0]
		}
		if c.want == nil && c.have == nil || c.want != nil && c.have != nil && bytes.Equal(c.want.Value, c.have.Value) {
			return resp.Header.Revision, nil
		}
	}
	return 0, fmt.Errorf("the key changed under each of %d writes", casAttempts)
}

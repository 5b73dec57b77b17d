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
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/klog/v2"
)

// compactRevKey is the key through which k8s.io/apiserver's compactors
// agree (etcd3's compactRevKey): its value is the last revision compacted
// to, its version counts the rounds.
const compactRevKey = "compact_rev_key"

// RunCompactor compacts etcd as k8s.io/apiserver's compactor does (every
// interval, to the revision seen one interval before, agreeing with other
// API servers through compactRevKey) but never past the oldest checkpoint.
// While held back, it still takes its round, so that another API server's
// compactor cannot compact instead. The storage's own compactor must be
// off (CompactionInterval 0). It returns when ctx ends.
func (cs *Checkpoints) RunCompactor(ctx context.Context, interval time.Duration) {
	logger := klog.FromContext(ctx)
	var version, seen, compacted int64
	for {
		select {
		case <-cs.clock.After(interval):
		case <-ctx.Done():
			return
		}
		target := seen
		if oldest, ok := cs.Oldest(); ok {
			target = min(target, oldest)
		}
		v, cur, done, err := cs.compact(ctx, version, target, compacted)
		if err != nil {
			if ctx.Err() == nil {
				logger.Error(err, "Compacting etcd failed", "revision", target)
			}
			continue
		}
		version, seen, compacted = v, cur, done
	}
}

// compact takes one round, as etcd3.Compact does: if compactRevKey's
// version is still version, it records the round and compacts to target
// (unless compacted is there already); otherwise another compactor took
// it. It returns the key's version, etcd's revision and the revision
// compacted to.
func (cs *Checkpoints) compact(ctx context.Context, version, target, compacted int64) (int64, int64, int64, error) {
	record := max(target, compacted)
	resp, err := cs.client.Txn(ctx).If(
		clientv3.Compare(clientv3.Version(compactRevKey), "=", version),
	).Then(
		clientv3.OpPut(compactRevKey, strconv.FormatInt(record, 10)),
	).Else(
		clientv3.OpGet(compactRevKey),
	).Commit()
	if err != nil {
		return version, 0, compacted, err
	}
	if !resp.Succeeded {
		kv := resp.Responses[0].GetResponseRange().Kvs[0]
		theirs, _ := strconv.ParseInt(string(kv.Value), 10, 64)
		return kv.Version, resp.Header.Revision, max(compacted, theirs), nil
	}
	if target > compacted {
		if _, err := cs.client.Compact(ctx, target); err != nil {
			return version + 1, resp.Header.Revision, compacted, err
		}
		compacted = target
	}
	return version + 1, resp.Header.Revision, compacted, nil
}

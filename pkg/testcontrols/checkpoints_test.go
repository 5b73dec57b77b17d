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
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

func startCheckpoints(t *testing.T) (*Checkpoints, *clientv3.Client) {
	t.Helper()
	etcd, err := storage.StartEtcd(t.Context(), storage.EtcdConfig{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Close)
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.URL()}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	cs, err := New(Config{Client: client, Prefix: "/registry/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cs.Close)
	return cs, client
}

// TestRestoreConflicts: a restore while another runs, or a checkpoint
// taken during one, is a 409 that changes nothing.
func TestRestoreConflicts(t *testing.T) {
	cs, _ := startCheckpoints(t)
	if _, err := cs.Take(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if err := cs.beginRestore("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Restore(t.Context(), "a"); !apierrors.IsConflict(err) {
		t.Errorf("restore during a restore: %v, want Conflict", err)
	}
	if _, err := cs.Take(t.Context(), "b"); !apierrors.IsConflict(err) {
		t.Errorf("checkpoint during a restore: %v, want Conflict", err)
	}
	cs.endRestore()
	if _, err := cs.Restore(t.Context(), "a"); err != nil {
		t.Errorf("restore after the other ended: %v", err)
	}
}

// TestRestoreKeys restores each class of change on raw keys, and leaves
// keys outside the prefix as they are.
func TestRestoreKeys(t *testing.T) {
	cs, client := startCheckpoints(t)
	ctx := t.Context()
	put := func(k, v string) {
		t.Helper()
		if _, err := client.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	put("/registry/x/changed", "before")
	put("/registry/x/deleted", "before")
	put("/registry/x/rewritten", "before")
	checkpoint, err := cs.Take(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	put("/registry/x/changed", "after")
	put("/registry/x/rewritten", "after")
	put("/registry/x/rewritten", "before") // back as it was: left alone
	if _, err := client.Delete(ctx, "/registry/x/deleted"); err != nil {
		t.Fatal(err)
	}
	put("/registry/x/made", "after")
	put("/outside", "after")

	res, err := cs.Restore(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Deleted: 1, Recreated: 1, Reverted: 1}); res.Deleted != want.Deleted || res.Recreated != want.Recreated || res.Reverted != want.Reverted {
		t.Errorf("restore counted %+v, want %+v", res, want)
	}
	if res.Revision <= checkpoint {
		t.Errorf("restore ended at revision %d, want after the checkpoint's %d", res.Revision, checkpoint)
	}
	for key, want := range map[string]string{
		"/registry/x/changed": "before", "/registry/x/deleted": "before", "/registry/x/rewritten": "before",
		"/registry/x/made": "", "/outside": "after",
	} {
		resp, err := client.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(resp.Kvs) > 0 {
			got = string(resp.Kvs[0].Value)
			if resp.Kvs[0].ModRevision <= checkpoint && key == "/registry/x/deleted" {
				t.Errorf("%s put back at revision %d, want after the checkpoint's %d", key, resp.Kvs[0].ModRevision, checkpoint)
			}
		}
		if got != want {
			t.Errorf("%s after the restore: %q, want %q", key, got, want)
		}
	}
}

// TestWriteOverRacingWriter: a key written after the restore read it
// fails the restore's compare; the restore reads it again and writes over
// it. A key already as wanted is left alone.
func TestWriteOverRacingWriter(t *testing.T) {
	cs, client := startCheckpoints(t)
	ctx := t.Context()
	put := func(v string) *clientv3.PutResponse {
		t.Helper()
		resp, err := client.Put(ctx, "/registry/x/raced", v, clientv3.WithPrevKV())
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	put("checkpoint")
	want := put("seen by the restore").PrevKv
	seen := put("written meanwhile").PrevKv // what the restore recorded last
	put("written meanwhile")

	if _, err := cs.write(ctx, change{key: "/registry/x/raced", want: want, have: seen}); err != nil {
		t.Fatalf("write over a racing writer: %v", err)
	}
	resp, err := client.Get(ctx, "/registry/x/raced")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Kvs[0].Value); got != "checkpoint" {
		t.Errorf("after the write: %q, want %q", got, "checkpoint")
	}
	rev := resp.Kvs[0].ModRevision
	if _, err := cs.write(ctx, change{key: "/registry/x/raced", want: want, have: seen}); err != nil {
		t.Fatal(err)
	}
	resp, err = client.Get(ctx, "/registry/x/raced")
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Kvs[0].ModRevision; got != rev {
		t.Errorf("a key already as wanted was written again: revision %d, want %d", got, rev)
	}
}

// TestRestoreUndoesRacingWriter: a writer that makes a key again while the
// restore runs (a controller re-making a dependent the restore deleted,
// its cache still holding the owner) is undone by the restore's next round.
func TestRestoreUndoesRacingWriter(t *testing.T) {
	cs, client := startCheckpoints(t)
	ctx := t.Context()
	if _, err := cs.Take(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"/registry/owners/o", "/registry/dependents/d"} {
		if _, err := client.Put(ctx, key, "made after the checkpoint"); err != nil {
			t.Fatal(err)
		}
	}
	remade := 0
	cs.written = func(key string) {
		if key == "/registry/dependents/d" && remade == 0 {
			remade++
			if _, err := client.Put(ctx, key, "made again"); err != nil {
				t.Error(err)
			}
		}
	}
	res, err := cs.Restore(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if remade != 1 {
		t.Fatalf("the racing writer wrote %d times, want once", remade)
	}
	resp, err := client.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Errorf("%d keys after the restore, want none (the racing writer's undone)", resp.Count)
	}
	if res.Deleted != 3 {
		t.Errorf("restore deleted %d keys, want 3 (two, then the one made again)", res.Deleted)
	}
}

// TestRestoreDeletesOwnersFirst: a restore deletes the keys made since
// the checkpoint oldest first (a namespace, then an owner in it, then its
// dependent), so that a controller woken by the dependent's deletion
// finds the owner gone; and it tells Restored which keys it deleted.
func TestRestoreDeletesOwnersFirst(t *testing.T) {
	cs, client := startCheckpoints(t)
	ctx := t.Context()
	var deleted []string
	cs.restored = func(_ context.Context, _ int64, keys []string) { deleted = keys }
	if _, err := cs.Take(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	made := []string{"/registry/namespaces/ns", "/registry/owners/ns/o", "/registry/dependents/ns/d"}
	for _, key := range made {
		if _, err := client.Put(ctx, key, "made after the checkpoint"); err != nil {
			t.Fatal(err)
		}
	}
	rev, err := cs.revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.waitRecorded(ctx, rev); err != nil {
		t.Fatal(err)
	}
	_, deletes, err := cs.changes("c")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range deletes {
		order = append(order, c.key)
	}
	if !slices.Equal(order, made) {
		t.Errorf("deletions in order %q, want %q (oldest first)", order, made)
	}
	if _, err := cs.Restore(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	slices.Sort(deleted)
	if want := slices.Sorted(slices.Values(made)); !slices.Equal(deleted, want) {
		t.Errorf("Restored was told of deleted keys %q, want %q", deleted, want)
	}
}

// TestRestoreUndoesWritesBeforeTheServerSawIt: a write that lands while
// the server is told of the restore (a controller making an object again
// in a namespace the restore deleted, before admission has seen it go)
// is undone by the round after, before the restore answers.
func TestRestoreUndoesWritesBeforeTheServerSawIt(t *testing.T) {
	cs, client := startCheckpoints(t)
	ctx := t.Context()
	const late = "/registry/deployments/ns/made-again"
	told := 0
	cs.restored = func(ctx context.Context, _ int64, _ []string) {
		if told++; told == 1 {
			if _, err := client.Put(ctx, late, "a racing controller's"); err != nil {
				t.Error(err)
			}
		}
	}
	if _, err := cs.Take(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Put(ctx, "/registry/namespaces/ns", "made after the checkpoint"); err != nil {
		t.Fatal(err)
	}
	res, err := cs.Restore(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.Get(ctx, late)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != 0 {
		t.Errorf("the write made while the server was told stayed, want it undone")
	}
	if res.Deleted != 2 || told != 2 {
		t.Errorf("deleted %d keys and told the server %d times, want 2 and 2", res.Deleted, told)
	}
}

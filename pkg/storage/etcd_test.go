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

package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestEmbeddedEtcdKeepsDataAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	put := func(e *Etcd) {
		c := client(t, e)
		if _, err := c.Put(t.Context(), "/k", "v"); err != nil {
			t.Fatal(err)
		}
	}
	e := startEtcd(t, dir)
	put(e)
	e.Close()
	e.Close() // idempotent

	e = startEtcd(t, dir)
	defer e.Close()
	resp, err := client(t, e).Get(t.Context(), "/k")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("got %v after restart, want /k=v", resp.Kvs)
	}
}

func TestDamagedDatabaseIsAnErrorNamingIt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    func(full int64) int64
		wantErr string
	}{
		// etcd itself dies of SIGBUS on the first two.
		{"cut in half", func(full int64) int64 { return full / 2 }, "truncated: "},
		{"meta pages only", func(int64) int64 { return 2 * 4096 }, "truncated: "},
		{"shorter than a page", func(int64) int64 { return 100 }, "invalid database"},
		{"empty", func(int64) int64 { return 0 }, "empty file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			e := startEtcd(t, dir)
			// Enough data that the database's pages reach past its first half.
			c := client(t, e)
			value := strings.Repeat("x", 100<<10)
			for i := range 200 {
				if _, err := c.Put(t.Context(), fmt.Sprintf("/k%03d", i), value); err != nil {
					t.Fatal(err)
				}
			}
			e.Close()

			db := filepath.Join(dir, "member", "snap", "db")
			fi, err := os.Stat(db)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(db, tc.size(fi.Size())); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			e, err = StartEtcd(ctx, EtcdConfig{Dir: dir, UnsafeNoFsync: true})
			if err == nil {
				e.Close()
				t.Fatal("got nil error, want the database damaged")
			}
			want := "etcd database " + db + " is damaged ("
			hint := "): restore it or remove " + dir + " to start empty"
			if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, tc.wantErr) || !strings.HasSuffix(msg, hint) {
				t.Errorf("got %q, want %q...%q...%q", msg, want, tc.wantErr, hint)
			}
		})
	}
}

func startEtcd(t *testing.T, dir string) *Etcd {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	e, err := StartEtcd(ctx, EtcdConfig{Dir: dir, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func client(t *testing.T, e *Etcd) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.URL()}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

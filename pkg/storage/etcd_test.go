package storage

import (
	"context"
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

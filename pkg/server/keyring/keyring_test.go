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

package keyring_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/miniapiserver/miniapiserver/pkg/server/keyring"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

func newKey(t *testing.T) crypto.PublicKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key.Public()
}

// startEtcd starts an etcd, stopped when the test ends, and a client of it.
func startEtcd(t *testing.T) (*storage.Etcd, *clientv3.Client) {
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
	t.Cleanup(func() { _ = client.Close() })
	return etcd, client
}

// TestKeyring: each server sees the keys of the others, not its own; one
// that joins later is seen, and one that stops is no longer.
func TestKeyring(t *testing.T) {
	_, client := startEtcd(t)
	start := func(name string, key crypto.PublicKey) *keyring.Keyring {
		t.Helper()
		k, err := keyring.Start(t.Context(), keyring.Config{Client: client, Prefix: "/keys/", Name: name, Keys: []crypto.PublicKey{key}})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	keyA, keyB := newKey(t), newKey(t)
	a := start("a", keyA)
	defer a.Stop()
	if got := a.Peers(); len(got) != 0 {
		t.Errorf("a alone: peers %v, want none", got)
	}
	b := start("b", keyB)
	if got := b.Peers(); len(got) != 1 || !keyA.(*ecdsa.PublicKey).Equal(got[0]) {
		t.Errorf("b, once started: peers %v, want a's key", got)
	}
	// a follows: b's key comes, then goes when b stops.
	waitFor := func(what string, cond func([]crypto.PublicKey) bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return cond(a.Peers()), nil
		})
		if err != nil {
			t.Fatalf("a's peers: got %v, want %s", a.Peers(), what)
		}
	}
	waitFor("b's key", func(p []crypto.PublicKey) bool { return len(p) == 1 && keyB.(*ecdsa.PublicKey).Equal(p[0]) })
	b.Stop()
	waitFor("none once b stopped", func(p []crypto.PublicKey) bool { return len(p) == 0 })
}

// TestConfigRequired: a Config without a client, a prefix ending in /,
// a name or keys is refused.
func TestConfigRequired(t *testing.T) {
	for _, c := range []keyring.Config{
		{Prefix: "/keys/", Name: "a", Keys: []crypto.PublicKey{newKey(t)}},
		{Client: &clientv3.Client{}, Prefix: "/keys", Name: "a", Keys: []crypto.PublicKey{newKey(t)}},
		{Client: &clientv3.Client{}, Prefix: "/keys/", Keys: []crypto.PublicKey{newKey(t)}},
		{Client: &clientv3.Client{}, Prefix: "/keys/", Name: "a"},
	} {
		if _, err := keyring.Start(t.Context(), c); err == nil {
			t.Errorf("Start(%+v): got no error", c)
		}
	}
}

// TestKeysPublishedAgain: when a server's lease is lost (it ran out while
// etcd was out of reach, here revoked), its keys are published again under
// a new lease, and the others see them again.
func TestKeysPublishedAgain(t *testing.T) {
	_, client := startEtcd(t)
	// The client renews a lease each third of its TTL, and learns then
	// that it is lost.
	a, err := keyring.Start(t.Context(), keyring.Config{Client: client, Prefix: "/keys/", Name: "a", Keys: []crypto.PublicKey{newKey(t)}, TTL: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	resp, err := client.Get(t.Context(), "/keys/a")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("a's keys after Start: %v, %v; want them published", resp, err)
	}
	lost := clientv3.LeaseID(resp.Kvs[0].Lease)
	if _, err := client.Revoke(t.Context(), lost); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		resp, err = client.Get(ctx, "/keys/a")
		return err == nil && len(resp.Kvs) == 1, nil
	})
	if err != nil {
		t.Fatal("a's keys were not published again once its lease was lost")
	}
	if got := clientv3.LeaseID(resp.Kvs[0].Lease); got == lost || got == 0 {
		t.Errorf("a's keys published again under lease %x, want a new one (lost %x)", got, lost)
	}
	ttl, err := client.TimeToLive(t.Context(), clientv3.LeaseID(resp.Kvs[0].Lease))
	if err != nil || ttl.TTL <= 0 {
		t.Errorf("the new lease: %+v, %v; want it alive", ttl, err)
	}
}

// TestStopWhilePublishingAgain: a server whose lease was lost while etcd
// is out of reach keeps trying to publish its keys, and still stops.
func TestStopWhilePublishingAgain(t *testing.T) {
	etcd, client := startEtcd(t)
	failed := make(chan struct{}, 1)
	handlers := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = append(slices.Clone(handlers), func(_ context.Context, err error, _ string, _ ...any) {
		if strings.HasPrefix(err.Error(), "keyring:") {
			select {
			case failed <- struct{}{}:
			default:
			}
		}
	})
	t.Cleanup(func() { utilruntime.ErrorHandlers = handlers })
	a, err := keyring.Start(t.Context(), keyring.Config{Client: client, Prefix: "/keys/", Name: "a", Keys: []crypto.PublicKey{newKey(t)}, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	etcd.Close()
	select {
	case <-failed: // the lease ran out, and publishing again failed
	case <-time.After(30 * time.Second):
		t.Fatal("no failed attempt to publish the keys again within 30s of etcd stopping")
	}
	stopped := make(chan struct{})
	go func() { a.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return within 10s while the keys were being published again")
	}
}

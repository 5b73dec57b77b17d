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

package keyring

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/keyutil"
)

// Config is a server's part of the keyring.
type Config struct {
	// Client reaches the etcd the servers share (the caller closes it).
	Client *clientv3.Client
	// Prefix is the keys' prefix, ending in "/".
	Prefix string
	// Name is this server's, unique among them.
	Name string
	// Keys are this server's public keys.
	Keys []crypto.PublicKey
	// TTL is how long a server's keys outlive it if it stops without
	// withdrawing them (it crashed); 60s if 0.
	TTL time.Duration
}

// Keyring holds the public keys the other servers published.
type Keyring struct {
	client  *clientv3.Client
	prefix  string
	self    string
	pemKeys string
	ttl     time.Duration
	cancel  context.CancelFunc
	done    sync.WaitGroup

	mu    sync.RWMutex
	lease clientv3.LeaseID              // guarded by mu: this server's keys'
	peers map[string][]crypto.PublicKey // guarded by mu, as keys; by server name
	keys  []crypto.PublicKey            // all of peers', in name order
}

// Start publishes c.Keys under c.Prefix+c.Name, with an etcd lease kept
// alive until Stop (published again under a new lease if it is lost), and
// follows the others' keys; it returns once it has read them.
func Start(ctx context.Context, c Config) (*Keyring, error) {
	switch {
	case c.Client == nil:
		return nil, errors.New("keyring: Config.Client is required")
	case !strings.HasSuffix(c.Prefix, "/"):
		return nil, fmt.Errorf("keyring: Config.Prefix %q must end in /", c.Prefix)
	case c.Name == "" || len(c.Keys) == 0:
		return nil, errors.New("keyring: Config.Name and Config.Keys are required")
	}
	if c.TTL == 0 {
		c.TTL = time.Minute
	}
	pemKeys, err := encode(c.Keys)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	k := &Keyring{client: c.Client, prefix: c.Prefix, self: c.Name, pemKeys: string(pemKeys), ttl: c.TTL, cancel: cancel}
	alive, err := k.publish(ctx, runCtx)
	if err != nil {
		cancel()
		return nil, err
	}
	k.done.Go(func() { k.keepPublished(runCtx, alive) })
	rev, err := k.list(ctx)
	if err != nil {
		k.Stop()
		return nil, err
	}
	k.done.Go(func() { k.follow(runCtx, rev) })
	return k, nil
}

// publish puts this server's keys under a new lease, kept alive until
// runCtx ends, and returns the lease's keep-alive responses.
func (k *Keyring) publish(ctx, runCtx context.Context) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	grant, err := k.client.Grant(ctx, int64(k.ttl.Seconds()))
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	if _, err := k.client.Put(ctx, k.prefix+k.self, k.pemKeys, clientv3.WithLease(grant.ID)); err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	alive, err := k.client.KeepAlive(runCtx, grant.ID)
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	k.mu.Lock()
	k.lease = grant.ID
	k.mu.Unlock()
	return alive, nil
}

// keepPublished drains the lease's keep-alive responses; when they end
// before ctx does (the lease ran out while etcd was out of reach, and the
// keys went with it), it publishes the keys again, retrying each second
// until it can or ctx ends.
func (k *Keyring) keepPublished(ctx context.Context, alive <-chan *clientv3.LeaseKeepAliveResponse) {
	for {
		for range alive { //nolint:revive // the responses need only be drained
		}
		if ctx.Err() != nil {
			return
		}
		// Until published again, alive stays the closed channel. Each
		// attempt ends within a TTL, so that one that waits on etcd is
		// logged, and tried again.
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
			attempt, cancel := context.WithTimeout(ctx, k.ttl)
			defer cancel()
			again, err := k.publish(attempt, ctx)
			if err != nil {
				if ctx.Err() == nil {
					utilruntime.HandleErrorWithContext(ctx, err, "Unhandled Error")
				}
				return false, nil
			}
			alive = again
			return true, nil
		})
	}
}

// Peers returns the other servers' keys (the caller must not change them).
func (k *Keyring) Peers() []crypto.PublicKey {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.keys
}

// setLocked sets peers, and keys from them (with mu held).
func (k *Keyring) setLocked(peers map[string][]crypto.PublicKey) {
	k.peers, k.keys = peers, nil
	for _, name := range slices.Sorted(maps.Keys(peers)) {
		k.keys = append(k.keys, peers[name]...)
	}
}

// Stop withdraws this server's keys and stops following the others'.
func (k *Keyring) Stop() {
	k.cancel()
	k.done.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	k.mu.RLock()
	lease := k.lease
	k.mu.RUnlock()
	_, _ = k.client.Revoke(ctx, lease) // else they expire with the lease
}

// list reads every server's keys, and returns the revision read at.
func (k *Keyring) list(ctx context.Context) (int64, error) {
	resp, err := k.client.Get(ctx, k.prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("keyring: %w", err)
	}
	peers := map[string][]crypto.PublicKey{}
	for _, kv := range resp.Kvs {
		k.read(ctx, peers, string(kv.Key), kv.Value)
	}
	k.mu.Lock()
	k.setLocked(peers)
	k.mu.Unlock()
	return resp.Header.Revision, nil
}

// read adds the keys of the server at key to peers, unless they are
// this server's or unreadable (logged).
func (k *Keyring) read(ctx context.Context, peers map[string][]crypto.PublicKey, key string, value []byte) {
	name := strings.TrimPrefix(key, k.prefix)
	if name == k.self {
		return
	}
	keys, err := keyutil.ParsePublicKeysPEM(value)
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Unreadable keys of a peer server in the keyring", "server", name)
		return
	}
	peers[name] = nil
	for _, key := range keys {
		peers[name] = append(peers[name], key)
	}
}

// follow watches the keys from rev on until ctx ends; when the watch
// ends (a compaction), it lists them again and watches on from there.
func (k *Keyring) follow(ctx context.Context, rev int64) {
	for ctx.Err() == nil {
		for resp := range k.client.Watch(ctx, k.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
			if resp.Err() != nil {
				break
			}
			k.mu.Lock()
			peers := maps.Clone(k.peers)
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypeDelete {
					delete(peers, strings.TrimPrefix(string(ev.Kv.Key), k.prefix))
				} else {
					k.read(ctx, peers, string(ev.Kv.Key), ev.Kv.Value)
				}
			}
			k.setLocked(peers)
			k.mu.Unlock()
			rev = resp.Header.Revision
		}
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			rev, err = k.list(ctx)
			return err == nil, nil
		})
	}
}

// encode is keys as PEM public keys.
func encode(keys []crypto.PublicKey) ([]byte, error) {
	var out []byte
	for _, key := range keys {
		der, err := x509.MarshalPKIXPublicKey(key)
		if err != nil {
			return nil, fmt.Errorf("keyring: %w", err)
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: keyutil.PublicKeyBlockType, Bytes: der})...)
	}
	return out, nil
}

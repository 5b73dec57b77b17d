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

package watchcache

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Upstream's timeouts: how long a read waits for the cache to reach a
// resourceVersion, and how often the cache asks etcd for progress meanwhile.
const (
	freshnessTimeout        = 3 * time.Second
	progressRequestInterval = 100 * time.Millisecond
)

// waitUntilConsistent waits until the cache has seen etcd's current
// revision (a consistent read), asking etcd for progress meanwhile.
func (c *Cache) waitUntilConsistent(ctx context.Context) error {
	target, err := c.cfg.Storage.GetCurrentResourceVersion(ctx)
	if err != nil {
		return err
	}
	return c.waitWithProgress(ctx, target)
}

// waitWithProgress waits until the cache has seen target, for at most 3 s,
// with the progress requester asking etcd for progress meanwhile (target may
// be another instance's RV, of a resource that is idle here), as upstream's
// cache does.
func (c *Cache) waitWithProgress(ctx context.Context, target uint64) error {
	if c.ResourceVersion() >= target && c.Ready() {
		return nil
	}
	start := c.cfg.Clock.Now()
	defer c.recordReadWait(start)
	c.progress.add()
	defer c.progress.remove()
	return c.waitUntilFresh(ctx, target, freshnessTimeout)
}

// errNotReady answers a watch the cache could not get ready for in time,
// as upstream's cacher answers one while it initializes.
var errNotReady = apierrors.NewTooManyRequests("storage is (re)initializing", 1)

// waitReady waits until the cache is ready, for at most 3 s, or until the
// request's own deadline (a watch's timeoutSeconds): either way, a cache
// still not ready answers 429, as upstream's answers at once.
func (c *Cache) waitReady(ctx context.Context) error {
	err := c.waitFor(ctx, freshnessTimeout, func(ready bool, _ uint64) bool { return ready },
		func(uint64) error { return errNotReady })
	if errors.Is(err, context.DeadlineExceeded) {
		return errNotReady
	}
	return err
}

// waitUntilFresh blocks until the cache has seen rv, for at most timeout,
// then fails with upstream's 504 "Too large resource version".
func (c *Cache) waitUntilFresh(ctx context.Context, rv uint64, timeout time.Duration) error {
	return c.waitFor(ctx, timeout, func(ready bool, current uint64) bool { return ready && current >= rv },
		func(current uint64) error { return storage.NewTooLargeResourceVersionError(rv, current, 1) })
}

// waitFor blocks until done holds for the cache's readiness and
// resourceVersion (checked whenever the resourceVersion advances), for at
// most timeout, then returns expired's error for the resourceVersion reached.
func (c *Cache) waitFor(ctx context.Context, timeout time.Duration, done func(ready bool, rv uint64) bool, expired func(rv uint64) error) error {
	deadline := c.cfg.Clock.After(timeout)
	for {
		c.mu.RLock()
		ready, current, changed := c.ready, c.rv, c.rvChanged
		c.mu.RUnlock()
		if done(ready, current) {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return expired(current)
		}
	}
}

// progressRequester asks the storage for a progress notification on the
// cache's etcd watch while any read waits for the cache to catch up: at
// once when a read starts waiting, so an idle resource catches up in a
// round trip, then every 100ms until no read waits (upstream's
// ConditionalProgressRequester, which waits 100ms before the first).
// One per cache; its run loop is owned by Cache.Run.
type progressRequester struct {
	request func(context.Context) error
	clock   clock.Clock

	// mu guards waiting.
	mu      sync.Mutex
	waiting int
	// wake tells run that a read started waiting.
	wake chan struct{}
}

func newProgressRequester(request func(context.Context) error, c clock.Clock) *progressRequester {
	return &progressRequester{request: request, clock: c, wake: make(chan struct{}, 1)}
}

// add registers a waiting read; remove unregisters it.
func (p *progressRequester) add() {
	p.mu.Lock()
	p.waiting++
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default: // a request is due already
	}
}

func (p *progressRequester) remove() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waiting--
}

func (p *progressRequester) hasWaiters() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting > 0
}

// run sends progress requests until ctx is done. A failed request (the
// cache's watch is being re-established) only means waiting for the next.
func (p *progressRequester) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		for p.hasWaiters() {
			if err := p.request(ctx); err != nil {
				klog.FromContext(ctx).V(4).Info("Watch cache progress request failed", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
			case <-p.clock.After(progressRequestInterval):
			}
		}
	}
}

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
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// tickInterval is how often the cache's ticker sends due bookmarks (upstream's
// dispatcher ticks every second) and reads the storage's compaction revision
// to drop the snapshots compacted away. Upstream reads the revision every
// 15s; it is a mutex-guarded int, so the cache reads it every tick, and a
// token it holds a snapshot for expires within a second of etcd's
// compaction, as on the etcd path.
const tickInterval = time.Second

// shutdownProgressTimeout bounds how long Shutdown waits for the cache to
// reach etcd's current revision before it sends its final bookmarks.
const shutdownProgressTimeout = time.Second

// tick runs the cache's ticker until ctx is done.
func (c *Cache) tick(ctx context.Context) {
	ticker := c.cfg.Clock.NewTicker(tickInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			c.sendDueBookmarks()
			c.compactSnapshots()
		}
	}
}

// compactSnapshots drops the snapshots before etcd's compaction revision:
// reads below it go to etcd, which answers 410.
func (c *Cache) compactSnapshots() {
	if c.snaps == nil {
		return
	}
	rev := c.cfg.Storage.CompactRevision()
	if rev <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snaps.raiseFloor(uint64(rev))
	c.recordSnapshots()
}

// sendDueBookmarks offers a bookmark at the cache's resourceVersion to every
// watcher whose bookmark is due; a watcher drops it unless the cache has
// moved past what it has already seen. A full buffer just delays it.
func (c *Cache) sendDueBookmarks() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock.Now()
	var bookmark *event
	for w := range c.watchers.all {
		if w.lagging || w.nextBookmark.IsZero() || now.Before(w.nextBookmark) {
			continue
		}
		if bookmark == nil {
			bookmark = &event{typ: watch.Bookmark, rv: c.rv}
		}
		if w.offer(bookmark) {
			w.scheduleBookmark(now)
		}
	}
}

// Shutdown ends every watch at once, as a server does when it stops, and
// refuses new ones (429, Retry-After) from then on. With
// Config.ShutdownBookmarks, the cache first catches up with etcd's current
// revision (asking for progress, for at most a second, and only while a
// watcher that allows bookmarks is still open) and each watcher
// that allows bookmarks gets a last one at that revision, so that its
// client resumes from there, on this server after a restart or on another
// (KEP-1904). Shutdown returns once every watcher is told to end; their
// streams drain what they hold, then close.
func (c *Cache) Shutdown(ctx context.Context) {
	// Only watchers that allow bookmarks get the final one: without any,
	// there is nothing to catch up for; and once all of those have stopped
	// (their clients went away: the server's own informers stop first),
	// there is no one left to wait for.
	if c.cfg.ShutdownBookmarks && c.Ready() {
		if recipients := c.bookmarkRecipients(); len(recipients) > 0 {
			waitCtx, cancel := context.WithTimeout(ctx, c.shutdownProgressTimeout)
			go func() {
				for _, done := range recipients {
					select {
					case <-done:
					case <-waitCtx.Done():
						return
					}
				}
				cancel()
			}()
			if err := c.waitUntilConsistent(waitCtx); err != nil {
				klog.FromContext(ctx).V(2).Info("Watch cache not caught up for its shutdown bookmarks", "prefix", c.cfg.ResourcePrefix, "err", err)
			}
			cancel()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shuttingDown = true
	var bookmark *event
	if c.cfg.ShutdownBookmarks {
		bookmark = &event{typ: watch.Bookmark, rv: c.rv, final: true}
	}
	for w := range c.watchers.all {
		c.watchers.remove(w)
		if w.lagging { // a bookmark past the events it missed would skip them
			w.end(nil)
		} else {
			w.end(bookmark)
		}
	}
	for _, r := range c.resumed.Shutdown() {
		r.end(c.cfg.ShutdownBookmarks && r.opts.Predicate.AllowWatchBookmarks)
	}
}

// bookmarkRecipients returns the done channels of the watchers that would
// get a final bookmark: those that allow bookmarks and are not stopped.
func (c *Cache) bookmarkRecipients() []<-chan struct{} {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var done []<-chan struct{}
	for w := range c.watchers.all {
		if !w.allowBookmarks {
			continue
		}
		select {
		case <-w.done:
		default:
			done = append(done, w.done)
		}
	}
	return done
}

// EndWatch ends one watch the cache serves, as Shutdown ends them all:
// with bookmark, one that allows bookmarks (and is not behind) gets a last
// one at the cache's resourceVersion first. It is false if w is not one of
// the cache's watches.
func (c *Cache) EndWatch(w watch.Interface, bookmark bool) bool {
	switch w := w.(type) {
	case *watcher:
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, open := c.watchers.all[w]; !open {
			return true // ended already
		}
		c.watchers.remove(w)
		var final *event
		if bookmark && w.allowBookmarks && !w.lagging {
			final = &event{typ: watch.Bookmark, rv: c.rv, final: true}
		}
		w.end(final)
		return true
	case *resumedWatch:
		w.end(bookmark && w.opts.Predicate.AllowWatchBookmarks)
		return true
	}
	return false
}

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
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"
)

// relistBackoff is how long the cache waits before watching or listing again
// after its etcd watch failed.
const relistBackoff = time.Second

// follow keeps the cache in sync until ctx is done: it lists, then watches
// from the list's resourceVersion. When the watch breaks it watches again
// from the last resourceVersion seen, so watchers carry on without a gap;
// only when that is no longer possible (etcd compacted it) does it relist,
// which closes the watchers (they resume from their last resourceVersion,
// or get 410 Gone if it is older than the relist).
func (c *Cache) follow(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("prefix", c.cfg.ResourcePrefix)
	listed := false
	for ctx.Err() == nil {
		var err error
		if !listed {
			if err = c.relist(ctx); err == nil {
				listed = true
			}
		}
		if listed {
			err = c.watch(ctx, c.ResourceVersion())
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || errors.Is(err, errRelistRequested) {
				listed = false
			}
		}
		if ctx.Err() != nil {
			return
		}
		logger.V(2).Info("Watch cache restarting its watch", "err", err, "relist", !listed)
		select {
		case <-ctx.Done():
		case <-c.cfg.Clock.After(relistBackoff):
		}
	}
}

// errRelistRequested ends a watch when a consistency check has failed.
var errRelistRequested = errors.New("relist requested after a failed consistency check")

// watch applies the storage's events after rv until the watch fails, ctx
// ends or a relist is requested.
func (c *Cache) watch(ctx context.Context, rv uint64) error {
	w, err := c.cfg.Storage.Watch(ctx, c.cfg.ResourcePrefix, storage.ListOptions{
		ResourceVersion: fmt.Sprint(rv),
		Recursive:       true,
		Predicate:       storage.Everything,
		ProgressNotify:  c.cfg.ProgressNotify,
	})
	if err != nil {
		return fmt.Errorf("watching from %d: %w", rv, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.relistRequested:
			return errRelistRequested
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("watch closed")
			}
			if err := c.apply(ev); err != nil {
				return err
			}
		}
	}
}

// relist replaces the store with a fresh LIST of the latest state; the
// history starts there (older watches: see Config.ResumeFromStorage).
func (c *Cache) relist(ctx context.Context) (err error) {
	start := c.cfg.Clock.Now()
	defer func() { c.recordInitialization(start, err) }()
	list := c.cfg.NewListFunc()
	opts := storage.ListOptions{ResourceVersion: "", Recursive: true, Predicate: storage.Everything}
	if err := c.cfg.Storage.GetList(ctx, c.cfg.ResourcePrefix, opts, list); err != nil {
		return err
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return err
	}
	rv, err := c.cfg.Versioner.ParseResourceVersion(listMeta.GetResourceVersion())
	if err != nil {
		return err
	}
	fresh := newStore(c.cfg.IndexFields...)
	err = meta.EachListItem(list, func(obj runtime.Object) error {
		e, err := c.newElement(obj)
		if err == nil {
			fresh.upsert(e)
		}
		return err
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store = fresh
	c.inconsistent = false
	c.history.reset(rv)
	if c.snaps != nil {
		c.snaps.reset(rv, fresh)
		c.recordSnapshots()
	}
	c.stopWatchersLocked() // they resume from their last RV, in the window or from the storage
	c.recordCapacity()
	c.ready = true
	c.setRVLocked(rv)
	return nil
}

func (c *Cache) newElement(obj runtime.Object) (*element, error) {
	key, err := c.cfg.KeyFunc(obj)
	if err != nil {
		return nil, err
	}
	l, f, err := c.cfg.GetAttrsFunc(obj)
	if err != nil {
		return nil, err
	}
	normalize(obj) // before any reader sees it: encoding it must not write into it
	return &element{key: key, object: obj, labels: l, fields: f}, nil
}

// apply records one watch event from Storage. A bookmark (etcd progress
// notification) only advances the resourceVersion.
func (c *Cache) apply(ev watch.Event) error {
	switch ev.Type {
	case watch.Error:
		return fmt.Errorf("watch error: %w", apierrors.FromObject(ev.Object))
	case watch.Bookmark:
		rv, err := c.cfg.Versioner.ObjectResourceVersion(ev.Object)
		if err != nil {
			return err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if rv > c.rv { // a progress RV below what was seen is a no-op (etcd#15220)
			c.setRVLocked(rv)
		}
		return nil
	}
	e, err := c.newElement(ev.Object)
	if err != nil {
		return err
	}
	rv, err := c.cfg.Versioner.ObjectResourceVersion(ev.Object)
	if err != nil {
		return err
	}
	c.recordEventReceived()
	c.mu.Lock()
	defer c.mu.Unlock()
	var prev *element
	if ev.Type == watch.Deleted {
		prev, _ = c.store.remove(e.key)
	} else {
		prev, _ = c.store.upsert(e)
	}
	recorded := &event{typ: ev.Type, rv: rv, recordTime: c.cfg.Clock.Now(), obj: e, prevObj: prev}
	recorded.shared.hold(newCachingObject(e.object))
	c.history.add(recorded)
	if c.snaps != nil {
		c.snaps.add(rv, c.store)
		c.snaps.raiseFloor(c.history.startRV) // snapshots live as long as the events
		c.recordSnapshots()
	}
	c.setRVLocked(rv)
	c.dispatchLocked(recorded)
	return nil
}

func (c *Cache) setRVLocked(rv uint64) {
	c.rv = rv
	c.recordResourceVersion(rv)
	close(c.rvChanged)
	c.rvChanged = make(chan struct{})
}

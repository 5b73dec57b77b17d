package watchcache

import (
	"context"
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// watchBufferSize is how many events a watcher may fall behind by before it
// is closed (upstream sizes it to about a second of events, 10 to 1000).
const watchBufferSize = 100

// Watch serves watches that start at a resourceVersion (or at "now") from
// the cache's history. Watches that ask for initial state (RV "0" or
// sendInitialEvents) are passed to the storage until the cache serves them too.
func (c *Cache) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	preparedKey, err := storage.PrepareKey(c.cfg.ResourcePrefix, key, opts.Recursive)
	if err != nil {
		return nil, err
	}
	if opts.SendInitialEvents != nil || opts.ResourceVersion == "0" || !c.Ready() {
		return c.cfg.Storage.Watch(ctx, key, opts)
	}
	var from uint64
	if opts.ResourceVersion != "" {
		if from, err = c.cfg.Versioner.ParseResourceVersion(opts.ResourceVersion); err != nil {
			return nil, err
		}
	}
	w, err := c.register(preparedKey, from, opts)
	var tooOld tooOldError
	if errors.As(err, &tooOld) {
		return newErrWatcher(apierrors.NewResourceExpired(tooOld.Error())), nil
	}
	if err != nil {
		return nil, err
	}
	go w.run()
	go func() {
		select {
		case <-ctx.Done():
			w.Stop()
		case <-w.done:
		}
		c.unregister(w)
	}()
	return w, nil
}

// register creates a watcher that starts after RV from (0: after the cache's
// current RV) with the history it has missed, atomically with respect to
// events being applied, so none is missed or delivered twice.
func (c *Cache) register(preparedKey string, from uint64, opts storage.ListOptions) (*watcher, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if from == 0 {
		from = c.rv
	}
	backlog, err := c.history.since(from)
	if err != nil {
		return nil, err
	}
	w := newWatcher(watchBufferSize, from, matcher(preparedKey, opts.Recursive, opts.Predicate), c.cfg.Versioner)
	w.backlog = backlog
	c.watchers[w] = struct{}{}
	return w, nil
}

func (c *Cache) unregister(w *watcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.watchers, w)
}

// dispatchLocked offers e to every watcher; one that has fallen a whole
// buffer behind is closed (its client resumes from its last RV).
func (c *Cache) dispatchLocked(e *event) {
	for w := range c.watchers {
		if !w.offer(e) {
			w.Stop()
			delete(c.watchers, w)
		}
	}
}

// stopWatchersLocked closes every watcher, as after a relist.
func (c *Cache) stopWatchersLocked() {
	for w := range c.watchers {
		w.Stop()
		delete(c.watchers, w)
	}
}

// matcher selects the elements a watch of preparedKey with pred sees.
func matcher(preparedKey string, recursive bool, pred storage.SelectionPredicate) func(*element) bool {
	return func(e *element) bool {
		if recursive && !strings.HasPrefix(e.key, preparedKey) || !recursive && e.key != preparedKey {
			return false
		}
		if pred.Empty() {
			return true
		}
		if pred.GetAttrs != nil {
			ok, err := pred.Matches(e.object)
			return err == nil && ok
		}
		return pred.MatchesObjectAttributes(e.labels, e.fields)
	}
}

// errWatcher delivers one ERROR event and closes, as upstream answers a
// watch it cannot serve once the response has started.
type errWatcher struct {
	result chan watch.Event
}

func newErrWatcher(err apierrors.APIStatus) *errWatcher {
	status := err.Status()
	w := &errWatcher{result: make(chan watch.Event, 1)}
	w.result <- watch.Event{Type: watch.Error, Object: &status}
	close(w.result)
	return w
}

func (w *errWatcher) ResultChan() <-chan watch.Event { return w.result }
func (w *errWatcher) Stop()                          {}

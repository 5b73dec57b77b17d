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
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	apistorage "k8s.io/apiserver/pkg/storage"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

// Handler applies the rules to the requests h serves (it goes after
// authentication, which says who asks): a request an Error rule hits is
// answered with its status, encoded by s; one a DropConnection rule hits
// is aborted; Delay rules and a watch's 410 are passed on to WrapStorage by
// the request's context. Rules hit in the order they were made, the first
// error or drop ending the request.
func (f *Faults) Handler(h http.Handler, s runtime.NegotiatedSerializer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		a, ok := attributesOf(req.Context())
		if !ok {
			h.ServeHTTP(w, req)
			return
		}
		var rf requestFaults
		for _, r := range f.hit(a) {
			switch spec := r.obj.Spec; {
			case spec.Error != nil && !r.ends(a.verb):
				rf.expire = true
			case spec.Error != nil:
				gv := schema.GroupVersion{Group: a.group, Version: a.version}
				responsewriters.ErrorNegotiated(statusError(spec.Error, a), s, gv, w, req)
				return
			case spec.DropConnection:
				panic(http.ErrAbortHandler) // the HTTP server resets the connection or stream
			case spec.Delay != nil:
				rf.before += spec.Delay.Before.Duration
				rf.after += spec.Delay.After.Duration
			}
		}
		if rf.expire || rf.before > 0 || rf.after > 0 {
			rf.write = a.verb != "get" && a.verb != "list" && a.verb != "watch"
			req = req.WithContext(context.WithValue(req.Context(), requestFaultsKey{}, &rf))
		}
		h.ServeHTTP(w, req)
	})
}

// statusError is the status a rule answers with: upstream's for its code,
// with the rule's message and Retry-After if set.
func statusError(e *v1alpha1.FaultError, a attributes) *apierrors.StatusError {
	gr := schema.GroupResource{Group: a.group, Resource: a.resource}
	msg := func(upstream string) string {
		if e.Message != "" {
			return e.Message
		}
		return upstream
	}
	var err *apierrors.StatusError
	switch e.Code {
	case http.StatusBadRequest:
		err = apierrors.NewBadRequest(msg("injected fault"))
	case http.StatusForbidden:
		err = apierrors.NewForbidden(gr, a.name, errors.New(msg("injected fault")))
	case http.StatusNotFound:
		err = apierrors.NewNotFound(gr, a.name)
	case http.StatusConflict:
		err = apierrors.NewConflict(gr, a.name, errors.New(msg("the object has been modified; please apply your changes to the latest version and try again")))
	case http.StatusGone:
		err = apierrors.NewResourceExpired(msg("The resourceVersion for the provided list is too old."))
	case http.StatusTooManyRequests:
		err = apierrors.NewTooManyRequests(msg("Too many requests, please try again later."), int(e.RetryAfterSeconds))
	case http.StatusInternalServerError:
		err = apierrors.NewInternalError(errors.New(msg("injected fault")))
	case http.StatusServiceUnavailable:
		err = apierrors.NewServiceUnavailable(msg("the server is currently unable to handle the request"))
	case http.StatusGatewayTimeout:
		err = apierrors.NewTimeoutError(msg("request did not complete within requested timeout - context deadline exceeded"), int(e.RetryAfterSeconds))
	default:
		err = apierrors.NewGenericServerResponse(int(e.Code), a.verb, gr, a.name, e.Message, int(e.RetryAfterSeconds), false)
	}
	if e.RetryAfterSeconds > 0 {
		if err.ErrStatus.Details == nil {
			err.ErrStatus.Details = &metav1.StatusDetails{}
		}
		err.ErrStatus.Details.RetryAfterSeconds = e.RetryAfterSeconds
	}
	return err
}

// requestFaults are what Handler passes on to WrapStorage for one request.
type requestFaults struct {
	before, after time.Duration
	// write: the request's verb writes, and after holds after its write
	// call (a delete reads first).
	write bool
	// expire answers a watch with 410, as a too old resourceVersion.
	expire                bool
	beforeDone, afterDone sync.Once
}

type requestFaultsKey struct{}

func requestFaultsOf(ctx context.Context) *requestFaults {
	rf, _ := ctx.Value(requestFaultsKey{}).(*requestFaults)
	return rf
}

// WrapStorage applies the rules to s, the storage of one resource: the delays
// and a watch's 410 that Handler passed on, and EndWatch rules to the
// watches it serves, which end ends (with a last bookmark if asked).
func (f *Faults) WrapStorage(s apistorage.Interface, end func(w watch.Interface, bookmark bool)) apistorage.Interface {
	return &faultyStorage{Interface: s, f: f, end: end}
}

type faultyStorage struct {
	apistorage.Interface
	f   *Faults
	end func(watch.Interface, bool)
}

// call runs the storage call do, held before and after as ctx's request
// says: before its first call, after its first write call (for a write)
// or read call.
func (s *faultyStorage) call(ctx context.Context, write bool, do func() error) error {
	rf := requestFaultsOf(ctx)
	if rf == nil {
		return do()
	}
	rf.beforeDone.Do(func() { s.f.sleep(ctx, rf.before) })
	err := do()
	if err == nil && write == rf.write {
		rf.afterDone.Do(func() { s.f.sleep(ctx, rf.after) })
	}
	return err
}

func (f *Faults) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-f.clock.After(d):
	case <-ctx.Done():
	}
}

func (s *faultyStorage) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	return s.call(ctx, true, func() error { return s.Interface.Create(ctx, key, obj, out, ttl) })
}

func (s *faultyStorage) Delete(ctx context.Context, key string, out runtime.Object, preconditions *apistorage.Preconditions,
	validateDeletion apistorage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts apistorage.DeleteOptions) error {
	return s.call(ctx, true, func() error {
		return s.Interface.Delete(ctx, key, out, preconditions, validateDeletion, cachedExistingObject, opts)
	})
}

func (s *faultyStorage) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *apistorage.Preconditions, tryUpdate apistorage.UpdateFunc, cachedExistingObject runtime.Object) error {
	return s.call(ctx, true, func() error {
		return s.Interface.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, tryUpdate, cachedExistingObject)
	})
}

func (s *faultyStorage) Get(ctx context.Context, key string, opts apistorage.GetOptions, objPtr runtime.Object) error {
	return s.call(ctx, false, func() error { return s.Interface.Get(ctx, key, opts, objPtr) })
}

func (s *faultyStorage) GetList(ctx context.Context, key string, opts apistorage.ListOptions, listObj runtime.Object) error {
	return s.call(ctx, false, func() error { return s.Interface.GetList(ctx, key, opts, listObj) })
}

// Watch answers a watch a 410 rule hit as upstream answers a too old
// resourceVersion: a 200 stream with one ERROR event. It keeps every other
// watch of a request until it stops, for EndWatch rules.
func (s *faultyStorage) Watch(ctx context.Context, key string, opts apistorage.ListOptions) (watch.Interface, error) {
	if rf := requestFaultsOf(ctx); rf != nil {
		rf.beforeDone.Do(func() { s.f.sleep(ctx, rf.before) })
		if rf.expire {
			current, err := s.Interface.GetCurrentResourceVersion(ctx)
			if err != nil {
				return nil, err
			}
			return errorWatch(apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s (%d)", opts.ResourceVersion, current))), nil
		}
	}
	w, err := s.Interface.Watch(ctx, key, opts)
	a, ok := attributesOf(ctx)
	if err != nil || !ok {
		return w, err
	}
	ow := &openWatch{attrs: a}
	ow.end = func(bookmark bool) { ow.once.Do(func() { s.end(w, bookmark) }) }
	s.f.mu.Lock()
	s.f.watches[ow] = struct{}{}
	s.f.mu.Unlock()
	return &keptWatch{Interface: w, forget: func() {
		s.f.mu.Lock()
		delete(s.f.watches, ow)
		s.f.mu.Unlock()
	}}, nil
}

// openWatch is a watch a request opened, which an EndWatch rule can end.
type openWatch struct {
	attrs attributes
	end   func(bookmark bool)
	once  sync.Once
}

// keptWatch forgets its openWatch when stopped.
type keptWatch struct {
	watch.Interface
	forget func()
}

func (w *keptWatch) Stop() {
	w.forget()
	w.Interface.Stop()
}

// errorWatch is a watch with one ERROR event.
func errorWatch(err *apierrors.StatusError) watch.Interface {
	ch := make(chan watch.Event, 1)
	ch <- watch.Event{Type: watch.Error, Object: &err.ErrStatus}
	close(ch)
	return watch.NewProxyWatcher(ch)
}

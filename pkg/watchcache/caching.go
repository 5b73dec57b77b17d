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
	"bytes"
	"io"
	"maps"
	"reflect"
	"sync"
	"sync/atomic"
	"weak"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// cachingObject wraps a cached object handed to watchers so that the HTTP
// layer serializes it once per encoding and shares the bytes among every
// watcher it is sent to (runtime.CacheableObject, which the watch encoder
// honours; upstream's cacher does the same).
//
// The wrapped object is shared with the cache and never modified: encoders
// (which set and restore TypeMeta) get a shallow copy, GetObject a deep
// copy, and the metav1.Object setters replace it with a private deep copy
// first, dropping the serializations made so far.
type cachingObject struct {
	mu             sync.RWMutex
	object         runtime.Object
	meta           metav1.Object // object's metadata
	private        bool          // object is a copy this wrapper owns
	serializations map[runtime.Identifier]*serialization
}

type serialization struct {
	once sync.Once
	raw  []byte
	err  error
}

var (
	_ runtime.CacheableObject = (*cachingObject)(nil)
	_ metav1.Object           = (*cachingObject)(nil)
)

// newCachingObject wraps obj, which must have object metadata (every
// cached object has).
func newCachingObject(obj runtime.Object) *cachingObject {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err) // a cached object always has metadata: its key was computed from it
	}
	return &cachingObject{object: obj, meta: m}
}

// CacheEncode implements runtime.CacheableObject: the first call for an
// encoder id encodes the object, later ones write the same bytes.
func (o *cachingObject) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	o.mu.Lock()
	if o.serializations == nil {
		o.serializations = map[runtime.Identifier]*serialization{}
	}
	s, ok := o.serializations[id]
	if !ok {
		s = &serialization{}
		o.serializations[id] = s
	}
	obj := o.object
	o.mu.Unlock()
	s.once.Do(func() {
		var buf bytes.Buffer
		s.err = encode(shallowCopy(obj), &buf)
		s.raw = buf.Bytes()
	})
	if s.err != nil {
		return s.err
	}
	if splice, ok := w.(runtime.Splice); ok {
		splice.Splice(s.raw)
		return nil
	}
	_, err := w.Write(s.raw)
	return err
}

// shallowCopy copies obj's top-level struct: enough for an encoder, which
// only sets (and restores) the kind, without copying the whole object. An
// unstructured object (a custom resource) keeps its kind in its top-level
// map, which is copied instead.
func shallowCopy(obj runtime.Object) runtime.Object {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return &unstructured.Unstructured{Object: maps.Clone(u.Object)}
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return obj.DeepCopyObject()
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	return c.Interface().(runtime.Object)
}

// GetObject implements runtime.CacheableObject; the caller owns the copy.
func (o *cachingObject) GetObject() runtime.Object {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.object.DeepCopyObject()
}

// GetObjectKind implements runtime.Object. The kind is read-only here:
// callers that need to set it get their own copy from GetObject.
func (o *cachingObject) GetObjectKind() schema.ObjectKind {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return readOnlyKind{o.object.GetObjectKind().GroupVersionKind()}
}

// DeepCopyObject implements runtime.Object.
func (o *cachingObject) DeepCopyObject() runtime.Object { return newCachingObject(o.GetObject()) }

// readOnlyKind reports a kind and ignores attempts to change it.
type readOnlyKind struct{ gvk schema.GroupVersionKind }

func (k readOnlyKind) SetGroupVersionKind(schema.GroupVersionKind) {}
func (k readOnlyKind) GroupVersionKind() schema.GroupVersionKind   { return k.gvk }

func get[T any](o *cachingObject, f func(metav1.Object) T) T {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return f(o.meta)
}

// set changes a private copy of the object and drops the serializations.
func (o *cachingObject) set(f func(metav1.Object)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.private {
		o.object = o.object.DeepCopyObject()
		o.meta, _ = meta.Accessor(o.object) // the copy has metadata as the original has
		o.private = true
	}
	f(o.meta)
	o.serializations = nil
}

// metav1.Object, for callers that read (or, rarely, change) the metadata of
// watch events.

func (o *cachingObject) GetNamespace() string { return get(o, metav1.Object.GetNamespace) }
func (o *cachingObject) SetNamespace(v string) {
	o.set(func(m metav1.Object) { m.SetNamespace(v) })
}
func (o *cachingObject) GetName() string         { return get(o, metav1.Object.GetName) }
func (o *cachingObject) SetName(v string)        { o.set(func(m metav1.Object) { m.SetName(v) }) }
func (o *cachingObject) GetGenerateName() string { return get(o, metav1.Object.GetGenerateName) }
func (o *cachingObject) SetGenerateName(v string) {
	o.set(func(m metav1.Object) { m.SetGenerateName(v) })
}
func (o *cachingObject) GetUID() types.UID  { return get(o, metav1.Object.GetUID) }
func (o *cachingObject) SetUID(v types.UID) { o.set(func(m metav1.Object) { m.SetUID(v) }) }
func (o *cachingObject) GetResourceVersion() string {
	return get(o, metav1.Object.GetResourceVersion)
}
func (o *cachingObject) SetResourceVersion(v string) {
	o.set(func(m metav1.Object) { m.SetResourceVersion(v) })
}
func (o *cachingObject) GetGeneration() int64  { return get(o, metav1.Object.GetGeneration) }
func (o *cachingObject) SetGeneration(v int64) { o.set(func(m metav1.Object) { m.SetGeneration(v) }) }
func (o *cachingObject) GetSelfLink() string   { return get(o, metav1.Object.GetSelfLink) }
func (o *cachingObject) SetSelfLink(v string)  { o.set(func(m metav1.Object) { m.SetSelfLink(v) }) }
func (o *cachingObject) GetCreationTimestamp() metav1.Time {
	return get(o, metav1.Object.GetCreationTimestamp)
}
func (o *cachingObject) SetCreationTimestamp(v metav1.Time) {
	o.set(func(m metav1.Object) { m.SetCreationTimestamp(v) })
}
func (o *cachingObject) GetDeletionTimestamp() *metav1.Time {
	return get(o, metav1.Object.GetDeletionTimestamp)
}
func (o *cachingObject) SetDeletionTimestamp(v *metav1.Time) {
	o.set(func(m metav1.Object) { m.SetDeletionTimestamp(v) })
}
func (o *cachingObject) GetDeletionGracePeriodSeconds() *int64 {
	return get(o, metav1.Object.GetDeletionGracePeriodSeconds)
}
func (o *cachingObject) SetDeletionGracePeriodSeconds(v *int64) {
	o.set(func(m metav1.Object) { m.SetDeletionGracePeriodSeconds(v) })
}
func (o *cachingObject) GetLabels() map[string]string { return get(o, metav1.Object.GetLabels) }
func (o *cachingObject) SetLabels(v map[string]string) {
	o.set(func(m metav1.Object) { m.SetLabels(v) })
}
func (o *cachingObject) GetAnnotations() map[string]string {
	return get(o, metav1.Object.GetAnnotations)
}
func (o *cachingObject) SetAnnotations(v map[string]string) {
	o.set(func(m metav1.Object) { m.SetAnnotations(v) })
}
func (o *cachingObject) GetFinalizers() []string { return get(o, metav1.Object.GetFinalizers) }
func (o *cachingObject) SetFinalizers(v []string) {
	o.set(func(m metav1.Object) { m.SetFinalizers(v) })
}
func (o *cachingObject) GetOwnerReferences() []metav1.OwnerReference {
	return get(o, metav1.Object.GetOwnerReferences)
}
func (o *cachingObject) SetOwnerReferences(v []metav1.OwnerReference) {
	o.set(func(m metav1.Object) { m.SetOwnerReferences(v) })
}
func (o *cachingObject) GetManagedFields() []metav1.ManagedFieldsEntry {
	return get(o, metav1.Object.GetManagedFields)
}
func (o *cachingObject) SetManagedFields(v []metav1.ManagedFieldsEntry) {
	o.set(func(m metav1.Object) { m.SetManagedFields(v) })
}

// sharedEncoding is the cachingObject an event's watchers share, held only
// while it is in flight: dispatch takes a reference for the event and one
// per watcher it offers the event to, each watcher drops its own once it
// has turned the event into what it sends, and dispatch drops the event's
// at its end. At zero the history keeps only a weak pointer, so the
// serializations go with the last response that writes them instead of
// staying for the event's whole time in the history. A watcher replaying
// the event from the history later reuses it if something still holds it,
// or makes another.
//
// References are only taken during dispatch, while dispatch holds its own,
// so the count reaches zero once.
type sharedEncoding struct {
	strong atomic.Pointer[cachingObject] // while refs > 0
	refs   atomic.Int32

	mu   sync.Mutex // guards weak
	weak weak.Pointer[cachingObject]
}

// hold starts sharing c, with one reference (dispatch's).
func (s *sharedEncoding) hold(c *cachingObject) {
	s.mu.Lock()
	s.weak = weak.Make(c)
	s.mu.Unlock()
	s.refs.Store(1)
	s.strong.Store(c)
}

// ref adds a reference; release drops one. On an event never held
// (bookmarks, events built by hand in tests) they do nothing that matters.
func (s *sharedEncoding) ref() { s.refs.Add(1) }

func (s *sharedEncoding) release() {
	if s.refs.Add(-1) == 0 {
		s.strong.Store(nil)
	}
}

// object returns the shared cachingObject of obj, or a new one (shared
// from then on, weakly) if nothing holds the last.
func (s *sharedEncoding) object(obj runtime.Object) *cachingObject {
	if c := s.strong.Load(); c != nil {
		return c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.weak.Value(); c != nil {
		return c
	}
	c := newCachingObject(obj)
	s.weak = weak.Make(c)
	return c
}

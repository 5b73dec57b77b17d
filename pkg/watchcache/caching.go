package watchcache

import (
	"bytes"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cachingObject wraps a cached object handed to watchers so that the HTTP
// layer serializes it once per encoding and shares the bytes among every
// watcher it is sent to (runtime.CacheableObject, which the watch encoder
// honours; upstream's cacher does the same).
//
// It also keeps the shared object safe: encoders set and restore TypeMeta on
// what they encode, so they only ever get a deep copy (GetObject).
type cachingObject struct {
	object runtime.Object // never modified

	mu             sync.Mutex
	serializations map[runtime.Identifier]*serialization
}

type serialization struct {
	once sync.Once
	raw  []byte
	err  error
}

var _ runtime.CacheableObject = (*cachingObject)(nil)

func newCachingObject(obj runtime.Object) *cachingObject {
	return &cachingObject{object: obj}
}

// CacheEncode implements runtime.CacheableObject: the first call for an
// encoder id encodes a copy of the object, later ones write the same bytes.
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
	o.mu.Unlock()
	s.once.Do(func() {
		var buf bytes.Buffer
		s.err = encode(o.GetObject(), &buf)
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

// GetObject implements runtime.CacheableObject; the caller owns the copy.
func (o *cachingObject) GetObject() runtime.Object { return o.object.DeepCopyObject() }

// GetObjectKind implements runtime.Object. The kind is the wrapped object's,
// read-only: callers that set it get their own copy from GetObject.
func (o *cachingObject) GetObjectKind() schema.ObjectKind {
	return readOnlyKind{o.object.GetObjectKind().GroupVersionKind()}
}

// DeepCopyObject implements runtime.Object.
func (o *cachingObject) DeepCopyObject() runtime.Object { return newCachingObject(o.GetObject()) }

// readOnlyKind reports a kind and ignores attempts to change it.
type readOnlyKind struct{ gvk schema.GroupVersionKind }

func (k readOnlyKind) SetGroupVersionKind(schema.GroupVersionKind) {}
func (k readOnlyKind) GroupVersionKind() schema.GroupVersionKind   { return k.gvk }

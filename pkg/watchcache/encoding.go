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
	"io"
	"reflect"
	"runtime"
	"sync"
	"weak"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

// Format is a wire encoding of single objects that the cache keeps, once
// made, with each cached object, so that LIST responses reuse it instead
// of encoding the same immutable object again for every request.
type Format int

const (
	FormatProtobuf Format = iota
	FormatJSON
	numFormats
)

// Encodings lets a response encoder write the items of a list a cache
// filled from the encodings the cache keeps with each object. A server
// makes one, hands it to its caches (Config.Encodings) and to its list
// serializers, which ask it with Items: the one path by which kept
// encodings leave the cache.
//
// It remembers, weakly, which elements filled each list; an entry goes
// when the list is encoded or garbage-collected.
type Encodings struct {
	listed sync.Map // weak.Pointer[byte] -> []*element
	events EventWriter
}

// NewEncodings returns an empty Encodings.
func NewEncodings() *Encodings { return &Encodings{} }

func listKey(list k8sruntime.Object) (*byte, bool) {
	v := reflect.ValueOf(list)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, false
	}
	return (*byte)(v.UnsafePointer()), true
}

// remember records that list's items are elems' objects. A nil Encodings
// remembers nothing.
func (en *Encodings) remember(list k8sruntime.Object, elems []*element) {
	p, ok := listKey(list)
	if en == nil || !ok || len(elems) == 0 {
		return
	}
	key := weak.Make(p)
	en.listed.Store(key, elems)
	runtime.AddCleanup(p, func(key weak.Pointer[byte]) { en.listed.Delete(key) }, key)
}

// Items returns the encodings, in format f, of the items of list if a
// cache filled it: each made by encode once per cached object and kept
// with it (cached objects never change). ok is false for any other list,
// or if its items are no longer the cached ones; encode must give the same
// bytes for the same object every time.
func (en *Encodings) Items(list k8sruntime.Object, f Format, encode Encoder) (encoded [][]byte, ok bool, err error) {
	p, ok := listKey(list)
	if !ok {
		return nil, false, nil
	}
	v, ok := en.listed.LoadAndDelete(weak.Make(p))
	if !ok {
		return nil, false, nil
	}
	elems := v.([]*element)
	items, err := meta.ExtractList(list)
	if err != nil || len(items) != len(elems) {
		return nil, false, nil
	}
	for i, item := range items {
		if !sameObject(item, elems[i].object) {
			return nil, false, nil
		}
	}
	encoded = make([][]byte, len(elems))
	for i, e := range elems {
		kept, err := e.encoded(f, encode)
		if err != nil {
			return nil, true, err
		}
		encoded[i] = kept.Object()
	}
	return encoded, true, nil
}

// Encoded is a cached object's kept encoding in one format:
// Bytes[Start:End] is the object's own encoding, which LISTs write. An
// Encoder may put more around it (the server puts the envelope of the
// watch event that would carry the object), for an EventWriter to write
// in one piece.
type Encoded struct {
	Bytes      []byte
	Start, End int
}

// Object is the object's own encoding.
func (e Encoded) Object() []byte { return e.Bytes[e.Start:e.End] }

// Encoder makes an object's kept encoding in one format.
type Encoder func(k8sruntime.Object) (Encoded, error)

// sameObject reports whether a and b are the same object at the same
// resourceVersion, hence have the same content.
func sameObject(a, b k8sruntime.Object) bool {
	am, err1 := meta.Accessor(a)
	bm, err2 := meta.Accessor(b)
	return err1 == nil && err2 == nil && am.GetResourceVersion() != "" &&
		am.GetResourceVersion() == bm.GetResourceVersion() && am.GetName() == bm.GetName() && am.GetNamespace() == bm.GetNamespace()
}

// encoded returns e's object encoded in format f, made by encode on first use.
func (e *element) encoded(f Format, encode Encoder) (Encoded, error) {
	if kept := e.encodings[f].Load(); kept != nil {
		return *kept, nil
	}
	kept, err := encode(e.object)
	if err != nil {
		return Encoded{}, err
	}
	e.encodings[f].Store(&kept)
	return kept, nil
}

// EventWriter writes a watch event carrying a cached object from the
// object's kept encodings, for the response encoders it recognises by
// their identifier (the watch encoder's, which names its event type and
// both of its encoders); ok is false for any other, which then encodes the
// event as usual. It must write exactly what that encoder would.
//
// A server sets one with SetEventWriter. The cache hands it the objects of
// the initial events of watches (watch-list, or a watch from
// resourceVersion 0): every watcher starting then sends the same objects,
// which the encoder would otherwise encode for each watcher through buffers
// sized to the largest object, once per watcher.
type EventWriter interface {
	WriteEvent(id k8sruntime.Identifier, obj k8sruntime.Object, kept KeptEncoding, w io.Writer) (ok bool, err error)
}

// KeptEncoding returns the kept encoding, in format f, of a cached object,
// made by encode on first use (see Encodings.Items).
type KeptEncoding func(f Format, encode Encoder) (Encoded, error)

// SetEventWriter makes the cache's initial watch events go through ew.
// Call it before any cache given en serves a watch.
func (en *Encodings) SetEventWriter(ew EventWriter) { en.events = ew }

// eventWriter is en's EventWriter; nil for a nil Encodings.
func (en *Encodings) eventWriter() EventWriter {
	if en == nil {
		return nil
	}
	return en.events
}

// keptObject is an initial event's object as a watcher sends it: a
// shallow copy of the cached object (the encoder sets its kind), and the
// cached element, from whose kept encodings the EventWriter writes the
// event. Anything the EventWriter does not recognise is encoded as usual.
type keptObject struct {
	metaObject
	elem   *element
	events EventWriter
}

type metaObject interface {
	k8sruntime.Object
	metav1.Object
}

var _ k8sruntime.CacheableObject = (*keptObject)(nil)

// newKeptObject wraps e's object for events, or returns a plain shallow
// copy if there is no EventWriter.
func newKeptObject(e *element, events EventWriter) k8sruntime.Object {
	obj := shallowCopy(e.object)
	m, ok := obj.(metaObject)
	if events == nil || !ok {
		return obj
	}
	return &keptObject{metaObject: m, elem: e, events: events}
}

// CacheEncode implements runtime.CacheableObject.
func (o *keptObject) CacheEncode(id k8sruntime.Identifier, encode func(k8sruntime.Object, io.Writer) error, w io.Writer) error {
	if ok, err := o.events.WriteEvent(id, o.metaObject, o.elem.encoded, w); ok {
		return err
	}
	return encode(o.metaObject, w)
}

// GetObject implements runtime.CacheableObject; the caller owns the copy.
func (o *keptObject) GetObject() k8sruntime.Object { return o.elem.object.DeepCopyObject() }

// DeepCopyObject implements runtime.Object.
func (o *keptObject) DeepCopyObject() k8sruntime.Object { return o.elem.object.DeepCopyObject() }

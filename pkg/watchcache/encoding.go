package watchcache

import (
	"reflect"
	"runtime"
	"sync"
	"weak"

	"k8s.io/apimachinery/pkg/api/meta"
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
func (en *Encodings) Items(list k8sruntime.Object, f Format, encode func(k8sruntime.Object) ([]byte, error)) (encoded [][]byte, ok bool, err error) {
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
		if encoded[i], err = e.encoded(f, encode); err != nil {
			return nil, true, err
		}
	}
	return encoded, true, nil
}

// sameObject reports whether a and b are the same object at the same
// resourceVersion, hence have the same content.
func sameObject(a, b k8sruntime.Object) bool {
	am, err1 := meta.Accessor(a)
	bm, err2 := meta.Accessor(b)
	return err1 == nil && err2 == nil && am.GetResourceVersion() != "" &&
		am.GetResourceVersion() == bm.GetResourceVersion() && am.GetName() == bm.GetName() && am.GetNamespace() == bm.GetNamespace()
}

// encoded returns e's object encoded in format f, made by encode on first use.
func (e *element) encoded(f Format, encode func(k8sruntime.Object) ([]byte, error)) ([]byte, error) {
	if b := e.encodings[f].Load(); b != nil {
		return *b, nil
	}
	b, err := encode(e.object)
	if err != nil {
		return nil, err
	}
	e.encodings[f].Store(&b)
	return b, nil
}

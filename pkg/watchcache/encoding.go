package watchcache

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
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

// EncodedItem returns obj encoded by encode, in format f. When obj is the
// object the cache holds under its key (same resourceVersion, so the same
// content: cached objects are never modified) the encoding is made once and
// kept with it; otherwise obj is encoded afresh. encode must give the same
// bytes for the same content every time.
func (c *Cache) EncodedItem(obj runtime.Object, f Format, encode func(runtime.Object) ([]byte, error)) ([]byte, error) {
	if e := c.elementFor(obj); e != nil {
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
	return encode(obj)
}

// elementFor returns the live element holding obj's resourceVersion of it, if any.
func (c *Cache) elementFor(obj runtime.Object) *element {
	key, err := c.cfg.KeyFunc(obj)
	if err != nil {
		return nil
	}
	c.mu.RLock()
	e, ok := c.store.get(key)
	c.mu.RUnlock()
	if !ok {
		return nil
	}
	want, err1 := meta.Accessor(obj)
	have, err2 := meta.Accessor(e.object)
	if err1 != nil || err2 != nil || want.GetResourceVersion() == "" || want.GetResourceVersion() != have.GetResourceVersion() {
		return nil
	}
	return e
}

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

package encoding

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// The initial events of a watch-list are the cached objects, sent to
// every informer that starts. Upstream's watch encoder encodes each one
// for each watcher, through buffers of its own sized to the largest
// object (an allocator, then a copy into a splice buffer, then the event
// envelope, then a copy of that): for 16 informers of 100 Secrets of
// 1 MiB that is over 100 MiB of allocations per start-up, more than the
// same informers' LISTs cost. EventWriter writes such an event, byte for
// byte as that encoder would, from the object's kept encoding (the one
// LISTs use, made once): in protobuf straight from it, as the kept
// encoding is framed as the ADDED event that carries the object
// (keepProtobuf); otherwise through one pooled buffer.

// EventWriter is a watchcache.EventWriter for the plain JSON and protobuf
// watch encoders of the served group versions: no Table, no
// PartialObjectMetadata, no pretty printing, no CBOR.
type EventWriter struct {
	scheme  *runtime.Scheme
	formats map[runtime.Identifier]eventFormat
	// customFormats are those of custom resources' versions, added as
	// their storage is made (addCustomResourceVersion).
	customFormats sync.Map // runtime.Identifier -> eventFormat
}

// eventFormat is what a watch encoder's identifier says it writes.
type eventFormat struct {
	format    watchcache.Format
	gv        schema.GroupVersion
	eventType watch.EventType
}

// watchEncoderIdentifier is upstream's (handlers/response.go): the
// identifier its watch encoder passes to CacheEncode.
type watchEncoderIdentifier struct {
	Name            string `json:"name,omitempty"`
	EmbeddedEncoder string `json:"embeddedEncoder,omitempty"`
	Encoder         string `json:"encoder,omitempty"`
	EventType       string `json:"eventType,omitempty"`
}

// NewEventWriter recognises the watch encoders that the API handlers make
// from ns for every version of scheme: an embedded encoder
// ns.EncoderForVersion(serializer, gv) and an envelope encoder
// ns.EncoderForVersion(stream serializer, gv), as serveWatchHandler makes
// them when no conversion is asked for.
func NewEventWriter(ns runtime.NegotiatedSerializer, scheme *runtime.Scheme) *EventWriter {
	ew := &EventWriter{scheme: scheme, formats: map[runtime.Identifier]eventFormat{}}
	for _, mt := range []struct {
		mediaType string
		format    watchcache.Format
	}{{runtime.ContentTypeJSON, watchcache.FormatJSON}, {runtime.ContentTypeProtobuf, watchcache.FormatProtobuf}} {
		for _, gv := range scheme.PrioritizedVersionsAllGroups() {
			watchEncoderFormats(ns, mt.mediaType, mt.format, gv, func(id runtime.Identifier, f eventFormat) { ew.formats[id] = f })
		}
	}
	return ew
}

// watchEncoderFormats passes to add the identifiers of the watch encoders
// the handlers make from ns for mediaType and gv, one per event type.
func watchEncoderFormats(ns runtime.NegotiatedSerializer, mediaType string, format watchcache.Format, gv schema.GroupVersion, add func(runtime.Identifier, eventFormat)) {
	info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), mediaType)
	if !ok || info.StreamSerializer == nil {
		return
	}
	embedded := ns.EncoderForVersion(info.Serializer, gv).Identifier()
	envelope := ns.EncoderForVersion(info.StreamSerializer.Serializer, gv).Identifier()
	for _, t := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
		id, err := json.Marshal(watchEncoderIdentifier{Name: "watch", EmbeddedEncoder: string(embedded), Encoder: string(envelope), EventType: string(t)})
		if err == nil {
			add(runtime.Identifier(id), eventFormat{format: format, gv: gv, eventType: t})
		}
	}
}

// addCustomResourceVersion makes ew recognise the JSON watch encoders of
// apiextensions-apiserver's handlers for gv, a version of custom resources
// whose objects ns (built as apiextensions-apiserver builds its
// serializer) encodes.
func (ew *EventWriter) addCustomResourceVersion(ns runtime.NegotiatedSerializer, gv schema.GroupVersion) {
	watchEncoderFormats(ns, runtime.ContentTypeJSON, watchcache.FormatJSON, gv, func(id runtime.Identifier, f eventFormat) { ew.customFormats.Store(id, f) })
}

// WriteEvent implements watchcache.EventWriter for typed objects whose Go
// type is the encoder's version's (the versioning codec then only sets
// the kind).
func (ew *EventWriter) WriteEvent(id runtime.Identifier, obj runtime.Object, kept watchcache.KeptEncoding, w io.Writer) (bool, error) {
	f, ok := ew.formats[id]
	if !ok {
		if v, custom := ew.customFormats.Load(id); custom {
			return ew.writeCustomResourceEvent(v.(eventFormat), obj, kept, w)
		}
		return false, nil
	}
	if _, unstructured := obj.(runtime.Unstructured); unstructured {
		return false, nil
	}
	if !obj.GetObjectKind().GroupVersionKind().Empty() {
		return false, nil // kept JSON encodings of cached objects have no kind
	}
	kinds, _, err := ew.scheme.ObjectKinds(obj)
	if err != nil {
		return false, nil
	}
	kind := ""
	for _, k := range kinds {
		if k.GroupVersion() == f.gv {
			kind = k.Kind
			break
		}
	}
	if kind == "" {
		return false, nil // a conversion: the encoder's own business
	}
	apiVersion := f.gv.String()
	switch f.format {
	case watchcache.FormatProtobuf:
		kept, err := kept(f.format, keepProtobuf)
		if err != nil {
			return true, err
		}
		size := kept.End - kept.Start
		var scratch [128]byte
		head := appendProtobufEventHead(scratch[:0], f.eventType, apiVersion, kind, size)
		keptEventsWritten.Add(1)
		if kept.Start == len(head) && bytes.Equal(kept.Bytes[:kept.Start], head) && bytes.Equal(kept.Bytes[kept.End:], protobufEventTail) {
			keptFramesWritten.Add(1)
			_, err = w.Write(kept.Bytes) // the kept encoding is framed as this very event
			return true, err
		}
		buf := getEventBuffer()
		defer putEventBuffer(buf)
		event := append(append(append(grow(buf, len(head)+size+len(protobufEventTail))[:0], head...), kept.Object()...), protobufEventTail...)
		_, err = w.Write(event)
		return true, err
	case watchcache.FormatJSON:
		kept, err := kept(f.format, keepJSON)
		if err != nil {
			return true, err
		}
		keptEventsWritten.Add(1)
		buf := getEventBuffer()
		defer putEventBuffer(buf)
		_, err = w.Write(jsonEvent(buf, f.eventType, apiVersion, kind, kept.Object()))
		return true, err
	}
	return false, nil
}

// writeCustomResourceEvent writes an event carrying a custom resource of
// f's version, whose kept JSON encoding is what the encoder would write
// for it (kind and apiVersion included).
func (ew *EventWriter) writeCustomResourceEvent(f eventFormat, obj runtime.Object, kept watchcache.KeptEncoding, w io.Writer) (bool, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetAPIVersion() != f.gv.String() {
		return false, nil // a conversion: the encoder's own business
	}
	encoded, err := kept(watchcache.FormatJSON, keepJSON)
	if err != nil {
		return true, err
	}
	keptEventsWritten.Add(1)
	buf := getEventBuffer()
	defer putEventBuffer(buf)
	b := grow(buf, len(encoded.Object())+len(f.eventType)+32)[:0]
	b = append(b, `{"type":`...)
	b = appendJSONString(b, string(f.eventType))
	b = append(b, `,"object":`...)
	b = append(append(b, encoded.Object()...), "}\n"...)
	_, err = w.Write(b)
	return true, err
}

// keptEventsWritten counts the events written from kept encodings, and
// keptFramesWritten the protobuf events written straight from the
// kept encoding, framed as the event (tests check that the paths are taken).
var keptEventsWritten, keptFramesWritten atomic.Int64

// protobufEventTail ends a protobuf watch event after the object's bytes:
// the runtime.Unknown's empty contentEncoding (field 3) and contentType
// (field 4), which its marshaller always writes.
var protobufEventTail = []byte{3<<3 | 2, 0, 4<<3 | 2, 0}

// appendProtobufEventHead appends what the protobuf watch encoder writes
// before the bytes of an object of size bytes, of apiVersion and kind, in
// an event of type t: a metav1.WatchEvent (type, field 1; object, field
// 2) whose runtime.RawExtension (raw, field 1) holds the protobuf prefix
// and a runtime.Unknown (typeMeta, field 1: apiVersion, kind; raw, field
// 2), as the generated marshallers write them. protobufEventTail follows
// the object.
func appendProtobufEventHead(b []byte, t watch.EventType, apiVersion, kind string, size int) []byte {
	typeMeta := fieldSize(len(apiVersion)) + fieldSize(len(kind))
	unknown := fieldSize(typeMeta) + fieldSize(size) + len(protobufEventTail)
	embedded := len(protobufPrefix) + unknown
	rawExtension := fieldSize(embedded)
	b = appendFieldHead(b, 1, len(t))
	b = append(b, t...)
	b = appendFieldHead(b, 2, rawExtension)
	b = appendFieldHead(b, 1, embedded)
	b = append(b, protobufPrefix...)
	b = appendFieldHead(b, 1, typeMeta)
	b = appendFieldHead(b, 1, len(apiVersion))
	b = append(b, apiVersion...)
	b = appendFieldHead(b, 2, len(kind))
	b = append(b, kind...)
	return appendFieldHead(b, 2, size)
}

// appendFieldHead appends the tag (wire type 2) and length of a
// length-delimited field of n bytes.
func appendFieldHead(b []byte, field, n int) []byte {
	b = append(b, byte(field<<3|2))
	v := uint64(n)
	for ; v >= 0x80; v >>= 7 {
		b = append(b, byte(v)|0x80)
	}
	return append(b, byte(v))
}

// jsonEvent builds in buf what the JSON watch encoder writes for an event
// of type t carrying an object of apiVersion and kind whose JSON encoding
// (without kind and apiVersion, as json.Marshal of a cached object gives
// it) is raw: {"type":t,"object":{"kind":…,"apiVersion":…,…}} and a newline.
func jsonEvent(buf *[]byte, t watch.EventType, apiVersion, kind string, raw []byte) []byte {
	b := grow(buf, len(raw)+len(t)+len(apiVersion)+len(kind)+64)[:0]
	b = append(b, `{"type":`...)
	b = appendJSONString(b, string(t))
	b = append(b, `,"object":{"kind":`...)
	b = appendJSONString(b, kind)
	b = append(b, `,"apiVersion":`...)
	b = appendJSONString(b, apiVersion)
	if rest := raw[1:]; len(rest) > 1 { // raw is {…}: its fields follow ours
		b = append(b, ',')
		b = append(b, rest...)
	} else {
		b = append(b, '}')
	}
	return append(b, "}\n"...)
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// Event buffers are pooled: an informer start-up sends every object once
// per watcher, and each watcher writes one event at a time.
var eventBuffers = sync.Pool{New: func() any { return new([]byte) }}

func getEventBuffer() *[]byte  { return eventBuffers.Get().(*[]byte) }
func putEventBuffer(b *[]byte) { eventBuffers.Put(b) }

// grow returns (*buf)[:n], reallocating it with room to spare if it is
// too small.
func grow(buf *[]byte, n int) []byte {
	if cap(*buf) < n {
		*buf = make([]byte, n+n/8)
	}
	return (*buf)[:n]
}

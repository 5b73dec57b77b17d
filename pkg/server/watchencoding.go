package server

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// same informers' LISTs cost. eventWriter writes such an event, byte for
// byte as that encoder would, from the object's kept encoding (the one
// LISTs use, made once) through one pooled buffer.

// eventWriter is a watchcache.EventWriter for the plain JSON and protobuf
// watch encoders of the served group versions: no Table, no
// PartialObjectMetadata, no pretty printing, no CBOR.
type eventWriter struct {
	scheme  *runtime.Scheme
	formats map[runtime.Identifier]eventFormat
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

// newEventWriter recognises the watch encoders that the API handlers make
// from ns for every version of scheme: an embedded encoder
// ns.EncoderForVersion(serializer, gv) and an envelope encoder
// ns.EncoderForVersion(stream serializer, gv), as serveWatchHandler makes
// them when no conversion is asked for.
func newEventWriter(ns runtime.NegotiatedSerializer, scheme *runtime.Scheme) *eventWriter {
	ew := &eventWriter{scheme: scheme, formats: map[runtime.Identifier]eventFormat{}}
	for _, mt := range []struct {
		mediaType string
		format    watchcache.Format
	}{{runtime.ContentTypeJSON, watchcache.FormatJSON}, {runtime.ContentTypeProtobuf, watchcache.FormatProtobuf}} {
		info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), mt.mediaType)
		if !ok || info.StreamSerializer == nil {
			continue
		}
		for _, gv := range scheme.PrioritizedVersionsAllGroups() {
			embedded := ns.EncoderForVersion(info.Serializer, gv).Identifier()
			envelope := ns.EncoderForVersion(info.StreamSerializer.Serializer, gv).Identifier()
			for _, t := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
				id, err := json.Marshal(watchEncoderIdentifier{Name: "watch", EmbeddedEncoder: string(embedded), Encoder: string(envelope), EventType: string(t)})
				if err != nil {
					continue
				}
				ew.formats[runtime.Identifier(id)] = eventFormat{format: mt.format, gv: gv, eventType: t}
			}
		}
	}
	return ew
}

// WriteEvent implements watchcache.EventWriter for typed objects whose Go
// type is the encoder's version's (the versioning codec then only sets
// the kind).
func (ew *eventWriter) WriteEvent(id runtime.Identifier, obj runtime.Object, kept watchcache.KeptEncoding, w io.Writer) (bool, error) {
	f, ok := ew.formats[id]
	if !ok {
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
	var event []byte
	buf := getEventBuffer()
	defer putEventBuffer(buf)
	switch f.format {
	case watchcache.FormatProtobuf:
		raw, err := kept(f.format, marshalProtobuf)
		if err != nil {
			return true, err
		}
		event, err = protobufEvent(buf, f.eventType, apiVersion, kind, raw)
		if err != nil {
			return true, err
		}
	case watchcache.FormatJSON:
		raw, err := kept(f.format, marshalJSON)
		if err != nil {
			return true, err
		}
		event = jsonEvent(buf, f.eventType, apiVersion, kind, raw)
	default:
		return false, nil
	}
	keptEventsWritten.Add(1)
	_, err = w.Write(event)
	return true, err
}

// keptEventsWritten counts the events written from kept encodings (tests
// check that the path is taken).
var keptEventsWritten atomic.Int64

// protobufEvent builds in buf what the protobuf watch encoder writes for
// an event of type t carrying an object of apiVersion and kind whose
// protobuf encoding is raw: a metav1.WatchEvent whose object's raw bytes
// are the protobuf prefix and a runtime.Unknown holding raw. It marshals
// from the end backwards (as the encoders do), so the object's bytes are
// copied once, into their final place.
func protobufEvent(buf *[]byte, t watch.EventType, apiVersion, kind string, raw []byte) ([]byte, error) {
	unknown := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
	embeddedSize := len(protobufPrefix) + unknown.Size()
	// The envelope adds the type and two field headers: well under 32 bytes
	// more than the type itself. Its size depends only on the embedded
	// bytes' length, so any slice of that length sizes it.
	b := grow(buf, embeddedSize+len(t)+32)
	event := metav1.WatchEvent{Type: string(t), Object: runtime.RawExtension{Raw: b[:embeddedSize]}}
	size := event.Size()
	b = b[:size]
	embedded := b[size-embeddedSize:] // where marshalling puts the object's raw bytes
	copy(embedded, protobufPrefix)
	if _, err := unknown.MarshalToSizedBuffer(embedded[len(protobufPrefix):]); err != nil {
		return nil, err
	}
	event.Object.Raw = embedded // so marshalling copies them onto themselves
	n, err := event.MarshalToSizedBuffer(b)
	if err != nil {
		return nil, err
	}
	if n != size {
		return nil, fmt.Errorf("watch event of %d bytes marshalled into %d", size, n)
	}
	return b, nil
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

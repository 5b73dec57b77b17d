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
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// A LIST served from the watch cache is made of cached objects, which never
// change: each one's protobuf or JSON encoding is the same for every
// request. The serializers below encode such lists the way upstream's
// streaming list encoders do, byte for byte, but take each item's encoding
// from the cache (made once, on first use) instead of encoding it again.
// Anything else (other objects, lists from etcd) is encoded as usual.

// WithCachedListEncoding returns ns with its JSON and protobuf serializers
// encoding lists filled by a watch cache from their items' cached
// encodings, which they get from encodings; nil encodings leave ns as it is.
func WithCachedListEncoding(ns runtime.NegotiatedSerializer, encodings *watchcache.Encodings) runtime.NegotiatedSerializer {
	if encodings == nil {
		return ns
	}
	infos := append([]runtime.SerializerInfo(nil), ns.SupportedMediaTypes()...)
	for i, info := range infos {
		switch info.MediaType {
		case runtime.ContentTypeJSON:
			infos[i].Serializer = &listSerializer{Serializer: info.Serializer, format: watchcache.FormatJSON, encodings: encodings}
		case runtime.ContentTypeProtobuf:
			infos[i].Serializer = &listSerializer{Serializer: info.Serializer, format: watchcache.FormatProtobuf, encodings: encodings}
		}
	}
	return negotiatedSerializer{NegotiatedSerializer: ns, infos: infos}
}

type negotiatedSerializer struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

func (n negotiatedSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return n.infos }

// listSerializer is a JSON or protobuf serializer that writes lists of
// cached objects from their cached encodings.
type listSerializer struct {
	runtime.Serializer
	format    watchcache.Format
	encodings *watchcache.Encodings
}

func (s *listSerializer) Encode(obj runtime.Object, w io.Writer) error {
	if done, err := s.encodeList(obj, w); done {
		return err
	}
	return s.Serializer.Encode(obj, w)
}

// EncodeWithAllocator keeps the protobuf serializer's allocator for what
// it encodes itself.
func (s *listSerializer) EncodeWithAllocator(obj runtime.Object, w io.Writer, a runtime.MemoryAllocator) error {
	if done, err := s.encodeList(obj, w); done {
		return err
	}
	if inner, ok := s.Serializer.(runtime.EncoderWithAllocator); ok {
		return inner.EncodeWithAllocator(obj, w, a)
	}
	return s.Serializer.Encode(obj, w)
}

// encodeList writes obj if a watch cache filled it, with its kind set (the
// versioning codec sets it before encoding).
func (s *listSerializer) encodeList(obj runtime.Object, w io.Writer) (bool, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	list, ok := obj.(metav1.ListInterface)
	if !ok || gvk.Kind == "" {
		return false, nil
	}
	unstructuredList, isUnstructured := obj.(*unstructured.UnstructuredList)
	if isUnstructured && s.format != watchcache.FormatJSON {
		return false, nil // custom resources have no protobuf
	}
	encode := keepJSON
	if s.format == watchcache.FormatProtobuf {
		encode = keepProtobuf
	}
	encoded, ok, err := s.encodings.Items(obj, s.format, encode)
	if !ok || err != nil {
		return ok, err
	}
	listMeta := metav1.ListMeta{
		SelfLink:           list.GetSelfLink(),
		ResourceVersion:    list.GetResourceVersion(),
		Continue:           list.GetContinue(),
		RemainingItemCount: list.GetRemainingItemCount(),
	}
	// Many small writes would make the response writer buffer the first
	// 128 KiB in a growing slice before it decides to gzip; a pooled buffer
	// of twice that hands it one write that decides at once.
	bw := writeBuffers.Get().(*bufio.Writer)
	defer writeBuffers.Put(bw)
	bw.Reset(w)
	defer bw.Reset(nil)
	switch {
	case isUnstructured:
		err = writeUnstructuredJSONList(bw, unstructuredList, encoded)
	case s.format == watchcache.FormatProtobuf:
		err = writeProtobufList(bw, gvk.GroupVersion().String(), gvk.Kind, listMeta, encoded)
	default:
		err = writeJSONList(bw, gvk.GroupVersion().String(), gvk.Kind, listMeta, encoded)
	}
	if err != nil {
		return true, err
	}
	return true, bw.Flush()
}

var writeBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}

// keepJSON makes a cached object's kept JSON encoding: what json.Marshal
// gives it (cached objects of built-in types have no kind, as list items
// have none), or its content for an unstructured one (what the list
// encoder writes for a custom resource, kind included).
func keepJSON(obj runtime.Object) (watchcache.Encoded, error) {
	var v any = obj
	if u, ok := obj.(*unstructured.Unstructured); ok {
		v = u.Object
	}
	b, err := json.Marshal(v)
	return watchcache.Encoded{Bytes: b, End: len(b)}, err
}

// keepProtobuf makes a cached object's kept protobuf encoding, framed as
// the protobuf watch encoder frames an ADDED event carrying the object at
// its version (see protobufEventHead): the initial events of watches are
// then written straight from it, with no copy.
func keepProtobuf(obj runtime.Object) (watchcache.Encoded, error) {
	m, ok := obj.(interface {
		Size() int
		MarshalToSizedBuffer([]byte) (int, error)
	})
	if !ok {
		return watchcache.Encoded{}, fmt.Errorf("%T is not a protobuf message", obj)
	}
	size := m.Size()
	var head, tail []byte
	if gvk, ok := externalKind(api.Scheme, obj); ok {
		head, tail = appendProtobufEventHead(nil, watch.Added, gvk.GroupVersion().String(), gvk.Kind, size), protobufEventTail
	}
	b := make([]byte, len(head)+size+len(tail))
	copy(b, head)
	end := len(head) + size
	if n, err := m.MarshalToSizedBuffer(b[len(head):end]); err != nil {
		return watchcache.Encoded{}, err
	} else if n != size {
		return watchcache.Encoded{}, fmt.Errorf("%T of %d bytes marshalled into %d", obj, size, n)
	}
	copy(b[end:], tail)
	return watchcache.Encoded{Bytes: b, Start: len(head), End: end}, nil
}

// externalKind is obj's one served kind, if its Go type has exactly one
// outside the internal version.
func externalKind(scheme *runtime.Scheme, obj runtime.Object) (schema.GroupVersionKind, bool) {
	kinds, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, false
	}
	var found schema.GroupVersionKind
	for _, k := range kinds {
		if k.Version == runtime.APIVersionInternal || k == found {
			continue
		}
		if !found.Empty() {
			return schema.GroupVersionKind{}, false
		}
		found = k
	}
	return found, !found.Empty()
}

// writeJSONList writes what apimachinery's streaming JSON list encoder
// writes: {"kind":…,"apiVersion":…,"metadata":…,"items":[…]} and a newline.
func writeJSONList(w io.Writer, apiVersion, kind string, listMeta metav1.ListMeta, items [][]byte) error {
	head, err := json.Marshal(struct {
		Kind       string          `json:"kind,omitempty"`
		APIVersion string          `json:"apiVersion,omitempty"`
		Metadata   metav1.ListMeta `json:"metadata"`
	}{kind, apiVersion, listMeta})
	if err != nil {
		return err
	}
	// head is {…,"metadata":{…}}: drop its closing brace to append the items.
	buf := make([]byte, 0, len(head)+len(`,"items":[`))
	buf = append(buf, head[:len(head)-1]...)
	buf = append(buf, `,"items":[`...)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	if err := writeJoined(w, items); err != nil {
		return err
	}
	_, err = w.Write([]byte("]}\n"))
	return err
}

// writeJoined writes items separated by commas.
func writeJoined(w io.Writer, items [][]byte) error {
	comma := []byte(",")
	for i, item := range items {
		if i > 0 {
			if _, err := w.Write(comma); err != nil {
				return err
			}
		}
		if _, err := w.Write(item); err != nil {
			return err
		}
	}
	return nil
}

// writeUnstructuredJSONList writes what apimachinery's streaming JSON
// encoder writes for an unstructured list: the list's fields and its items
// in the order of their keys, and a newline.
func writeUnstructuredJSONList(w io.Writer, list *unstructured.UnstructuredList, items [][]byte) error {
	keys := slices.Sorted(maps.Keys(list.Object))
	if _, ok := list.Object["items"]; !ok {
		keys = append(keys, "items")
		slices.Sort(keys)
	}
	buf := []byte{'{'}
	for i, key := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		k, err := json.Marshal(key)
		if err != nil {
			return err
		}
		buf = append(append(buf, k...), ':')
		if key != "items" {
			v, err := json.Marshal(list.Object[key])
			if err != nil {
				return err
			}
			buf = append(buf, v...)
			continue
		}
		buf = append(buf, '[')
		if _, err := w.Write(buf); err != nil {
			return err
		}
		if err := writeJoined(w, items); err != nil {
			return err
		}
		buf = append(buf[:0], ']')
	}
	buf = append(buf, "}\n"...)
	_, err := w.Write(buf)
	return err
}

// protobufPrefix starts every Kubernetes protobuf message ("k8s" and a zero).
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// writeProtobufList writes what apimachinery's streaming protobuf list
// encoder writes: the prefix, then a runtime.Unknown whose raw bytes are
// the list: its ListMeta (field 1) and each item (field 2).
func writeProtobufList(w io.Writer, apiVersion, kind string, listMeta metav1.ListMeta, items [][]byte) error {
	metaBytes, err := listMeta.Marshal()
	if err != nil {
		return err
	}
	size := fieldSize(len(metaBytes))
	for _, item := range items {
		size += fieldSize(len(item))
	}
	if _, err := w.Write(protobufPrefix); err != nil {
		return err
	}
	unknown := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}}
	_, err = unknown.MarshalToWriter(w, size, func(w io.Writer) (int, error) {
		header := make([]byte, 0, 1+10) // escapes through w.Write: one per list
		n, err := writeField(w, header, 1, metaBytes)
		for _, item := range items {
			if err != nil {
				break
			}
			var m int
			m, err = writeField(w, header, 2, item)
			n += m
		}
		return n, err
	})
	return err
}

// fieldSize is the encoded size of a length-delimited field of n bytes
// with a one-byte tag.
func fieldSize(n int) int { return 1 + varintSize(uint64(n)) + n }

func varintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// writeField writes field number field (wire type 2, length-delimited)
// holding b, building its header in header's capacity.
func writeField(w io.Writer, header []byte, field int, b []byte) (int, error) {
	header = appendFieldHead(header[:0], field, len(b))
	m, err := w.Write(header)
	if err != nil {
		return m, err
	}
	k, err := w.Write(b)
	return m + k, err
}

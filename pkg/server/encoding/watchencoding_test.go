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
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// upstreamWatchEncoder is what serveWatchHandler and watchEncoder
// (handlers/watch.go, handlers/response.go) make of a request for mediaType
// at gv without conversion: the embedded and envelope encoders, with a
// session allocator, and the identifier watchEncoder passes to
// CacheEncode. encode is watchEncoder.doEncode.
type upstreamWatchEncoder struct {
	embedded, envelope runtime.Encoder
}

func newUpstreamWatchEncoder(t *testing.T, ns runtime.NegotiatedSerializer, mediaType string, gv schema.GroupVersion) upstreamWatchEncoder {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), mediaType)
	if !ok || info.StreamSerializer == nil {
		t.Fatalf("no stream serializer for %s", mediaType)
	}
	alloc := &runtime.Allocator{}
	embedded := ns.EncoderForVersion(info.Serializer, gv)
	envelope := ns.EncoderForVersion(info.StreamSerializer.Serializer, gv)
	return upstreamWatchEncoder{
		embedded: runtime.NewEncoderWithAllocator(embedded.(runtime.EncoderWithAllocator), alloc),
		envelope: runtime.NewEncoderWithAllocator(envelope.(runtime.EncoderWithAllocator), alloc),
	}
}

func (e upstreamWatchEncoder) identifier(t watch.EventType) runtime.Identifier {
	id, _ := json.Marshal(struct { // upstream's watchEncoderIdentifier
		Name            string `json:"name,omitempty"`
		EmbeddedEncoder string `json:"embeddedEncoder,omitempty"`
		Encoder         string `json:"encoder,omitempty"`
		EventType       string `json:"eventType,omitempty"`
	}{"watch", string(e.embedded.Identifier()), string(e.envelope.Identifier()), string(t)})
	return runtime.Identifier(id)
}

func (e upstreamWatchEncoder) encode(t *testing.T, typ watch.EventType, obj runtime.Object) []byte {
	t.Helper()
	buffer := runtime.NewSpliceBuffer()
	if err := e.embedded.Encode(obj, buffer); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := e.envelope.Encode(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: buffer.Bytes()}}, &out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestKeptWatchEventsAreUpstreams: for the watch encoders the API handlers
// make (JSON and protobuf, core and apps), the event writer recognises
// their identifier and writes exactly what upstream's watch encoder
// writes; for others (a Table, a conversion, a custom resource) it
// declines.
func TestKeptWatchEventsAreUpstreams(t *testing.T) {
	ns := WithCachedListEncoding(api.Codecs, watchcache.NewEncodings())
	ew := NewEventWriter(ns, api.Scheme)
	replicas := int32(3)
	objects := []runtime.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", ResourceVersion: "7", Annotations: map[string]string{"a": "<b>&\u2028é"}},
			Data: map[string][]byte{"k": bytes.Repeat([]byte{0, 0xff, '\n'}, 50000)}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "8"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi"), corev1.ResourceCPU: resource.MustParse("1.5")}}}}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: "ns"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", ResourceVersion: "9"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas}},
	}
	frames := keptFramesWritten.Load()
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		for _, obj := range objects {
			gv := corev1.SchemeGroupVersion
			if _, ok := obj.(*appsv1.Deployment); ok {
				gv = appsv1.SchemeGroupVersion
			}
			up := newUpstreamWatchEncoder(t, ns, mediaType, gv)
			for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
				name := mediaType + "/" + obj.(metav1.Object).GetName() + "/" + string(typ)
				want := up.encode(t, typ, obj.DeepCopyObject())
				var got bytes.Buffer
				ok, err := ew.WriteEvent(up.identifier(typ), obj.DeepCopyObject(), keptOf(obj), &got)
				if err != nil || !ok {
					t.Errorf("%s: WriteEvent = %v, %v; want it to write the event", name, ok, err)
					continue
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Errorf("%s: wrote\n%q\nupstream's watch encoder writes\n%q", name, trim(got.Bytes()), trim(want))
				}
			}
		}
	}

	// The protobuf ADDED events were written straight from the kept encodings.
	if n := keptFramesWritten.Load() - frames; n != int64(len(objects)) {
		t.Errorf("%d events written straight from kept encodings framed as the event, want %d (the protobuf ADDED ones)", n, len(objects))
	}

	declined := map[string]struct {
		id  runtime.Identifier
		obj runtime.Object
	}{
		"a Table":                   {`{"embeddedEncoder":"{\"encoder\":\"json\",\"name\":\"watch-embedded\",\"target\":\"meta.k8s.io/v1, Kind=Table\"}","encoder":"json","eventType":"ADDED","name":"watch"}`, objects[0]},
		"another version's encoder": {newUpstreamWatchEncoder(t, ns, runtime.ContentTypeJSON, appsv1.SchemeGroupVersion).identifier(watch.Added), objects[0]},
		"a custom resource":         {newUpstreamWatchEncoder(t, ns, runtime.ContentTypeJSON, corev1.SchemeGroupVersion).identifier(watch.Added), &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "u"}}}},
		"an object with its kind":   {newUpstreamWatchEncoder(t, ns, runtime.ContentTypeJSON, corev1.SchemeGroupVersion).identifier(watch.Added), &corev1.Secret{TypeMeta: metav1.TypeMeta{Kind: "Secret", APIVersion: "v1"}}},
	}
	for name, tc := range declined {
		var got bytes.Buffer
		if ok, err := ew.WriteEvent(tc.id, tc.obj, keptOf(tc.obj), &got); ok || err != nil || got.Len() > 0 {
			t.Errorf("%s: WriteEvent = %v, %v and wrote %d bytes; want it to decline", name, ok, err, got.Len())
		}
	}
}

// keptOf encodes obj as the cache's kept encodings are made.
func keptOf(obj runtime.Object) watchcache.KeptEncoding {
	return func(_ watchcache.Format, encode watchcache.Encoder) (watchcache.Encoded, error) {
		return encode(obj)
	}
}

func trim(b []byte) []byte {
	if len(b) > 300 {
		return append(b[:150:150], append([]byte("…"), b[len(b)-150:]...)...)
	}
	return b
}

package server

import (
	"bytes"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// fakeEncodings encodes every item afresh, counting the calls.
type fakeEncodings struct{ calls map[watchcache.Format]int }

func (f *fakeEncodings) EncodedItem(obj runtime.Object, format watchcache.Format, encode func(runtime.Object) ([]byte, error)) ([]byte, error) {
	f.calls[format]++
	return encode(obj)
}

// TestCachedListEncodingIsUpstreams encodes lists with upstream's streaming
// encoders and with ours: the bytes must be identical, and ours must have
// taken every item from the cache.
func TestCachedListEncodingIsUpstreams(t *testing.T) {
	upstream := serializer.NewCodecFactory(api.Scheme,
		serializer.WithStreamingCollectionEncodingToJSON(), serializer.WithStreamingCollectionEncodingToProtobuf())
	fake := &fakeEncodings{calls: map[watchcache.Format]int{}}
	caches := newListCaches()
	caches.add(&corev1.ConfigMapList{}, fake)
	ours := withCachedListEncoding(upstream, caches)

	items := make([]corev1.ConfigMap, 3)
	for i := range items {
		items[i] = corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "default", ResourceVersion: fmt.Sprint(10 + i),
				Labels: map[string]string{"a": "<b>&"}}, // JSON escapes these
			Data: map[string]string{"k": string(bytes.Repeat([]byte{'x'}, 100*i))},
		}
	}
	lists := map[string]*corev1.ConfigMapList{
		"plain":        {ListMeta: metav1.ListMeta{ResourceVersion: "12"}, Items: items},
		"with a token": {ListMeta: metav1.ListMeta{ResourceVersion: "12", Continue: "abc", RemainingItemCount: ptr.To[int64](7)}, Items: items[:2]},
		"one item":     {Items: items[2:]},
	}
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		for name, list := range lists {
			t.Run(mediaType+"/"+name, func(t *testing.T) {
				want := encode(t, upstream, mediaType, list)
				calls := fake.calls[formatOf(mediaType)]
				got := encode(t, ours, mediaType, list)
				if !bytes.Equal(got, want) {
					t.Errorf("got\n%q\nwant\n%q", got, want)
				}
				if n := fake.calls[formatOf(mediaType)] - calls; n != len(list.Items) {
					t.Errorf("took %d items from the cache, want %d", n, len(list.Items))
				}
			})
		}
	}
}

func formatOf(mediaType string) watchcache.Format {
	if mediaType == runtime.ContentTypeProtobuf {
		return watchcache.FormatProtobuf
	}
	return watchcache.FormatJSON
}

// encode encodes obj to v1 as the API handlers do.
func encode(t *testing.T, ns runtime.NegotiatedSerializer, mediaType string, obj runtime.Object) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), mediaType)
	if !ok {
		t.Fatalf("no serializer for %s", mediaType)
	}
	var buf bytes.Buffer
	if err := ns.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion).Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

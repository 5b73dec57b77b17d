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
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	apistorage "k8s.io/apiserver/pkg/storage"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// fixedStorage holds objects at one resourceVersion and never changes: a
// watch cache over it serves them.
type fixedStorage struct {
	apistorage.Interface
	list *corev1.ConfigMapList
}

func (s fixedStorage) GetList(_ context.Context, _ string, _ apistorage.ListOptions, listObj runtime.Object) error {
	*listObj.(*corev1.ConfigMapList) = *s.list.DeepCopy()
	return nil
}

func (fixedStorage) EnableResourceSizeEstimation(apistorage.KeysFunc) error { return nil }
func (fixedStorage) CompactRevision() int64                                 { return 0 }

func (fixedStorage) Watch(context.Context, string, apistorage.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// TestCachedListEncodingIsUpstreams encodes lists from a watch cache with
// upstream's streaming encoders and with ours: the bytes must be identical,
// and ours must have taken the items' encodings from the cache.
func TestCachedListEncodingIsUpstreams(t *testing.T) {
	upstream := serializer.NewCodecFactory(api.Scheme,
		serializer.WithStreamingCollectionEncodingToJSON(), serializer.WithStreamingCollectionEncodingToProtobuf())
	encodings := watchcache.NewEncodings()
	ours := WithCachedListEncoding(upstream, encodings)

	stored := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "20"}}
	for i := range 3 {
		stored.Items = append(stored.Items, corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "default", ResourceVersion: fmt.Sprint(10 + i),
				Annotations: map[string]string{"a": "<b>&"}}, // JSON escapes these
			Data: map[string]string{"k": strings.Repeat("x", 100*i)},
		})
	}
	c, err := watchcache.New(watchcache.Config{
		Storage:        fixedStorage{list: stored},
		ResourcePrefix: "/configmaps/",
		NewListFunc:    func() runtime.Object { return &corev1.ConfigMapList{} },
		KeyFunc: func(obj runtime.Object) (string, error) {
			return apistorage.NamespaceKeyFunc("/configmaps/", obj)
		},
		GetAttrsFunc: apistorage.DefaultNamespaceScopedAttr,
		Snapshots:    true,
		Encodings:    encodings,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) { return c.Ready(), nil }); err != nil {
		t.Fatal(err)
	}
	cached := func(limit int64, cont string) *corev1.ConfigMapList {
		list := &corev1.ConfigMapList{}
		opts := apistorage.ListOptions{ResourceVersion: "20", Recursive: true, Predicate: apistorage.Everything}
		if cont != "" {
			opts.ResourceVersion = ""
		}
		opts.Predicate.Limit, opts.Predicate.Continue = limit, cont
		if err := c.GetList(ctx, "/configmaps/default", opts, list); err != nil {
			t.Fatal(err)
		}
		return list
	}
	first := cached(2, "")
	lists := map[string]func() *corev1.ConfigMapList{
		"whole":           func() *corev1.ConfigMapList { return cached(0, "") },
		"page with token": func() *corev1.ConfigMapList { return cached(2, "") },
		"last page":       func() *corev1.ConfigMapList { return cached(2, first.Continue) },
	}
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		for name, list := range lists {
			t.Run(mediaType+"/"+name, func(t *testing.T) {
				want := encode(t, upstream, mediaType, list())
				for round := range 2 { // the second one from encodings made by the first
					l := list()
					if _, ok, _ := encodings.Items(l, formatOf(mediaType), marshalerOf(mediaType)); !ok {
						t.Fatal("the cache did not record the list it filled")
					}
					l = list() // Items forgot that one
					if got := encode(t, ours, mediaType, l); !bytes.Equal(got, want) {
						t.Errorf("round %d: got\n%q\nwant\n%q", round, got, want)
					}
					if _, ok, _ := encodings.Items(l, formatOf(mediaType), marshalerOf(mediaType)); ok {
						t.Errorf("round %d: the list was not encoded from the cache", round)
					}
				}
			})
		}
	}
}

func marshalerOf(mediaType string) watchcache.Encoder {
	if mediaType == runtime.ContentTypeProtobuf {
		return keepProtobuf
	}
	return keepJSON
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

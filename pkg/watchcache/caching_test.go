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
	"bytes"
	"io"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// A custom resource is unstructured: its kind lives in its map, which an
// encoder sets. Encoding a cached one, concurrently, must not touch the
// cache's copy (go test -race would report the write).
func TestCachingObjectEncodesUnstructuredWithoutChangingIt(t *testing.T) {
	cached := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "a", "namespace": "ns", "resourceVersion": "5"},
		"spec":     map[string]any{"replicas": int64(2)},
	}}
	co := newCachingObject(cached)
	encode := func(obj runtime.Object, w io.Writer) error {
		obj.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind().GroupVersion().WithKind("CronTab"))
		obj.(*unstructured.Unstructured).SetAPIVersion("stable.example.com/v1")
		b, err := obj.(*unstructured.Unstructured).MarshalJSON()
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	var wg sync.WaitGroup
	out := make([]bytes.Buffer, 4)
	for i := range out {
		wg.Go(func() {
			if err := co.CacheEncode("json", encode, &out[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if _, ok := cached.Object["apiVersion"]; ok {
		t.Errorf("encoding changed the cached object: %v", cached.Object)
	}
	if _, ok := cached.Object["kind"]; ok {
		t.Errorf("encoding changed the cached object: %v", cached.Object)
	}
	want := `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"a","namespace":"ns","resourceVersion":"5"},"spec":{"replicas":2}}` + "\n"
	for i := range out {
		if got := out[i].String(); got != want {
			t.Errorf("encoding %d = %s, want %s", i, got, want)
		}
	}
}

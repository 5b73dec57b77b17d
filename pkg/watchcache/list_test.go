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
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
)

func podNames(l *example.PodList) []string {
	var names []string
	for _, p := range l.Items {
		names = append(names, p.Name)
	}
	return names
}

// TestConsistentListSeesEveryAcknowledgedWrite lists with resourceVersion ""
// right after each write: the cache must wait for etcd's revision.
func TestConsistentListSeesEveryAcknowledgedWrite(t *testing.T) {
	s, raw := newEtcdStore(t)
	c := newConformanceCacheOn(t, s)
	ctx := context.Background()
	for i := range 20 {
		name := fmt.Sprintf("p%02d", i)
		rv := createPod(t, s, name)
		list := &example.PodList{}
		if err := c.GetList(ctx, "/pods/", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != i+1 || list.Items[i].Name != name {
			t.Fatalf("after writing %s: got %v", name, podNames(list))
		}
		if got, _ := (storage.APIObjectVersioner{}).ParseResourceVersion(list.ResourceVersion); got < rv {
			t.Fatalf("list RV %d older than the write's %d", got, rv)
		}
	}
	// Writes elsewhere in etcd move the revision; the cache catches up by progress notifications.
	resp, err := raw.Put(ctx, "/elsewhere", "x")
	if err != nil {
		t.Fatal(err)
	}
	list := &example.PodList{}
	if err := c.GetList(ctx, "/pods/", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, list); err != nil {
		t.Fatal(err)
	}
	if list.ResourceVersion != fmt.Sprint(resp.Header.Revision) {
		t.Errorf("consistent list on an idle resource: got RV %s, want etcd's %d", list.ResourceVersion, resp.Header.Revision)
	}
	if got := c.ResourceVersion(); got < uint64(resp.Header.Revision) {
		t.Errorf("cache RV %d after the consistent list, want >= %d: the progress request did not bring it up", got, resp.Header.Revision)
	}
}

func TestListFromCacheWithSelectorsAndNotOlderThan(t *testing.T) {
	s, _ := newEtcdStore(t)
	c := newConformanceCacheOn(t, s, "spec.nodeName") // the field selector reads the index
	ctx := context.Background()
	var last uint64
	for i, node := range []string{"n1", "n2", "n1"} {
		pod := &example.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "ns", Labels: map[string]string{"i": fmt.Sprint(i)}}, Spec: example.PodSpec{NodeName: node}}
		out := &example.Pod{}
		if err := s.Create(ctx, "/pods/ns/"+pod.Name, pod, out, 0); err != nil {
			t.Fatal(err)
		}
		last, _ = storage.APIObjectVersioner{}.ObjectResourceVersion(out)
	}
	// The resourceVersion "0" reads below serve whatever the cache holds:
	// wait until it holds the last write (each subtest may run alone).
	waitFor(t, fmt.Sprintf("the cache to reach rv %d", last), func() bool { return c.ResourceVersion() >= last })
	for _, tc := range []struct {
		name string
		opts storage.ListOptions
		want string
	}{
		{"field selector", storage.ListOptions{ResourceVersion: fmt.Sprint(last), Recursive: true, Predicate: storage.SelectionPredicate{Label: labels.Everything(), Field: fields.OneTermEqualSelector("spec.nodeName", "n1"), GetAttrs: podAttrs}}, "[p0 p2]"},
		{"label selector", storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"i": "1"}), Field: fields.Everything(), GetAttrs: podAttrs}}, "[p1]"},
		{"RV 0 ignores limit", storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything(), Limit: 1, GetAttrs: podAttrs}}, "[p0 p1 p2]"},
		{"single object", storage.ListOptions{ResourceVersion: "0", Recursive: false, Predicate: storage.Everything}, "[p1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "/pods/ns"
			if !tc.opts.Recursive {
				key = "/pods/ns/p1"
			}
			list := &example.PodList{}
			if err := c.GetList(ctx, key, tc.opts, list); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(podNames(list)); got != tc.want || list.Continue != "" {
				t.Errorf("got %s (continue %q), want %s and no continue", got, list.Continue, tc.want)
			}
		})
	}
	pod := &example.Pod{}
	if err := c.Get(ctx, "/pods/ns/p2", storage.GetOptions{ResourceVersion: fmt.Sprint(last)}, pod); err != nil || pod.Spec.NodeName != "n1" {
		t.Errorf("Get at RV %d: got %v, %v", last, pod, err)
	}
	if err := c.Get(ctx, "/pods/ns/missing", storage.GetOptions{ResourceVersion: "0"}, pod); !storage.IsNotFound(err) {
		t.Errorf("Get of a missing key: got %v, want NotFound", err)
	}
}

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

package lists

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apistorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// listPage is one LIST response: its items as name@resourceVersion, its
// resourceVersion, remainingItemCount ("" when omitted) and continue token.
type listPage struct {
	items     []string
	rv        string
	remaining string
	token     string
}

func (p listPage) equal(q listPage) bool {
	return slices.Equal(p.items, q.items) && p.rv == q.rv && p.remaining == q.remaining && p.token == q.token
}

func (p listPage) String() string {
	remaining := p.remaining
	if remaining == "" {
		remaining = "omitted"
	}
	return fmt.Sprintf("{resourceVersion %s, items %v, remainingItemCount %s, continue %s}", p.rv, p.items, remaining, describeToken(p.token))
}

// summarize sums up a LIST response; withNamespace: items as namespace/name@resourceVersion.
func summarize(t *testing.T, list runtime.Object, withNamespace bool) listPage {
	t.Helper()
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		t.Fatal(err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	p := listPage{rv: listMeta.GetResourceVersion(), token: listMeta.GetContinue()}
	if n := listMeta.GetRemainingItemCount(); n != nil {
		p.remaining = fmt.Sprint(*n)
	}
	for _, item := range items {
		name := framework.ObjectName(t, item)
		if withNamespace {
			m, err := meta.Accessor(item)
			if err != nil {
				t.Fatal(err)
			}
			name = m.GetNamespace() + "/" + name
		}
		p.items = append(p.items, name+"@"+framework.ResourceVersionOf(t, item))
	}
	return p
}

// pageThrough LISTs resource in ns with opts and continues until the last
// page: page i on on[i%len(on)], and between(i), if set, after page i
// when another follows.
func pageThrough(t *testing.T, resource, ns string, opts metav1.ListOptions, between func(page int), on ...instance) []listPage {
	t.Helper()
	var pages []listPage
	for i := 0; ; i++ {
		p, err := on[i%len(on)].list(t, resource, ns, opts)
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		pages = append(pages, p)
		if p.token == "" {
			return pages
		}
		if i == 100 {
			t.Fatalf("still paging after %d pages: %v", i+1, pages)
		}
		if between != nil {
			between(i)
		}
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = p.token, "", ""
	}
}

// expectedPages is how a LIST with limit pages through items
// (name@resourceVersion, every one matching) at rv; counted: with
// remainingItemCount (no selector).
func expectedPages(t *testing.T, items []string, limit int, rv string, counted bool) []listPage {
	t.Helper()
	var pages []listPage
	for start := 0; ; start += limit {
		end := min(start+limit, len(items))
		p := listPage{items: items[start:end], rv: rv}
		if end < len(items) {
			name, _, _ := strings.Cut(items[end-1], "@")
			p.token = continueToken(t, name, rv)
			if counted {
				p.remaining = fmt.Sprint(len(items) - end)
			}
		}
		pages = append(pages, p)
		if end == len(items) {
			return pages
		}
	}
}

// samePages fails the test unless got and want are the same pages.
func samePages(t *testing.T, what string, got, want []listPage) {
	t.Helper()
	if !slices.EqualFunc(got, want, listPage.equal) {
		t.Errorf("%s:\ngot  %v\nwant %v", what, got, want)
	}
}

// continueToken is the etcd path's token for the page ending with name at rv.
func continueToken(t *testing.T, name, rv string) string {
	t.Helper()
	token, err := apistorage.EncodeContinue("/"+name+"\x00", "/", int64(framework.ParseRV(t, rv)))
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// decodeToken returns a continue token's resourceVersion and start key.
func decodeToken(token string) (rv int64, start string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, "", false
	}
	var c struct {
		RV    int64  `json:"rv"`
		Start string `json:"start"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return 0, "", false
	}
	return c.RV, c.Start, true
}

func describeToken(token string) string {
	if token == "" {
		return "none"
	}
	if rv, start, ok := decodeToken(token); ok {
		return fmt.Sprintf("%q (rv %d, start %q)", token, rv, start)
	}
	return fmt.Sprintf("%q", token)
}

// describeListOptions prints opts as a request would carry them.
func describeListOptions(opts metav1.ListOptions) string {
	var query []string
	if opts.FieldSelector != "" {
		query = append(query, "fieldSelector="+opts.FieldSelector)
	}
	if opts.LabelSelector != "" {
		query = append(query, "labelSelector="+opts.LabelSelector)
	}
	if opts.Limit != 0 {
		query = append(query, fmt.Sprintf("limit=%d", opts.Limit))
	}
	if opts.ResourceVersion != "" {
		query = append(query, "resourceVersion="+opts.ResourceVersion)
	}
	if opts.ResourceVersionMatch != "" {
		query = append(query, "resourceVersionMatch="+string(opts.ResourceVersionMatch))
	}
	if opts.Continue != "" {
		query = append(query, "continue="+describeToken(opts.Continue))
	}
	return "?" + strings.Join(query, "&")
}

// state is a namespace's configmaps at one resourceVersion: name →
// the object's resourceVersion.
type state map[string]string

func stateOf(cms []*corev1.ConfigMap) state {
	s := state{}
	for _, cm := range cms {
		s.set(cm)
	}
	return s
}

func (s state) set(obj metav1.Object) { s[obj.GetName()] = obj.GetResourceVersion() }

// delete deletes configmap name in ns, and from s.
func (s state) delete(t *testing.T, client kubernetes.Interface, ns, name string) {
	t.Helper()
	deleteCM(t, client, ns, name)
	delete(s, name)
}

func deleteCM(t *testing.T, client kubernetes.Interface, ns, name string) {
	t.Helper()
	if err := client.CoreV1().ConfigMaps(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// items are s's objects as name@resourceVersion, in a LIST's order.
func (s state) items() []string {
	var items []string
	for _, name := range slices.Sorted(maps.Keys(s)) {
		items = append(items, name+"@"+s[name])
	}
	return items
}

// newest is the greatest resourceVersion in s.
func (s state) newest(t *testing.T) uint64 {
	t.Helper()
	var newest uint64
	for _, rv := range s {
		newest = max(newest, framework.ParseRV(t, rv))
	}
	return newest
}

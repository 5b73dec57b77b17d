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
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestTwoInstancesShareAnExternalEtcd runs two servers with --etcd-servers
// on one etcd: what one writes the other serves, and a LIST paged on one
// continues on the other.
func TestTwoInstancesShareAnExternalEtcd(t *testing.T) {
	t.Parallel()
	external := framework.ExternalEtcd(t, 0)
	a := kubernetes.NewForConfigOrDie(testserver.Start(t, external).Config)
	b := kubernetes.NewForConfigOrDie(testserver.Start(t, external).Config)

	framework.CreateConfigMaps(t, a, "default", 5)
	got, err := b.CoreV1().ConfigMaps("default").Get(t.Context(), "cm-003", metav1.GetOptions{})
	if err != nil || got.Data["i"] != "3" {
		t.Fatalf("instance B reading A's write: got %v, %v", got, err)
	}
	page, err := a.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	rest, err := b.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{Limit: 3, Continue: page.Continue})
	if err != nil {
		t.Fatalf("continuing A's list on B: %v", err)
	}
	var names []string
	for _, cm := range append(page.Items, rest.Items...) {
		names = append(names, cm.Name)
	}
	if len(names) != 5 || names[0] != "cm-000" || names[4] != "cm-004" || rest.Continue != "" {
		t.Errorf("paged across instances: got %v (continue %q), want cm-000..cm-004", names, rest.Continue)
	}
	ns, err := b.CoreV1().Namespaces().Get(t.Context(), "kube-system", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("kube-system on B: got %v, %v", ns, err)
	}
}

// TestPagingAcrossInstances pages LISTs alternately on two servers sharing
// an etcd: each serves the other's continuations from its snapshots, with
// the pages one server gives alone. A server started after a first page
// continues it from etcd; a server whose cache of an idle resource is
// behind the token catches up with a progress request.
func TestPagingAcrossInstances(t *testing.T) {
	// Serial: its LISTs are checked against the process's counters (RoutesOf).

	// No periodic progress notifications: a cache's resourceVersion moves
	// only with its resource's events and the progress requests of its reads.
	external := framework.ExternalEtcd(t, time.Hour)
	a := startInstance(t, "A", external)
	b := startInstance(t, "B", external)

	t.Run("alternating", func(t *testing.T) { checkPagingAcross(t, a, b) })

	t.Run("instance started after the first page", func(t *testing.T) {
		ns := framework.CreateNamespace(t, a.client)
		at := stateOf(framework.CreateConfigMaps(t, a.client, ns, 5))
		first, err := a.list(t, "configmaps", ns, metav1.ListOptions{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		framework.CreateCMIn(t, a.client, ns, "cm-after", nil)
		// C's cache starts after the first page's revision: it has no
		// snapshot of it, and etcd serves.
		c := startInstance(t, "C", external).withRoute("continue", "etcd/no_snapshot").withRoute("exact", "etcd/no_snapshot")
		rest := pageThrough(t, "configmaps", ns, metav1.ListOptions{Limit: 2, Continue: first.token}, nil, c)
		samePages(t, "first page on A, the rest on C", append([]listPage{first}, rest...), expectedPages(t, at.items(), 2, first.rv, true))
		exact, err := c.list(t, "configmaps", ns, metav1.ListOptions{ResourceVersion: first.rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if want := (listPage{items: at.items(), rv: first.rv}); err != nil || !exact.equal(want) {
			t.Errorf("Exact LIST at %s on C: got %v (%v), want %v", first.rv, exact, err, want)
		}
	})

	t.Run("idle resource", func(t *testing.T) {
		ns := framework.CreateNamespace(t, a.client)
		at := state{}
		for i := range 5 {
			secret, err := a.client.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s-%d", i)}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			at.set(secret)
		}
		// B's secrets cache, at resourceVersion "0" (no wait, no progress request).
		secretsOnB := func() uint64 {
			p, err := b.list(t, "secrets", ns, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			return framework.ParseRV(t, p.rv)
		}
		// Configmap writes move etcd past the secrets; A's first page of
		// secrets is at etcd's revision, which B's secrets cache has not
		// seen. (Retried, should one of B's periodic reads, once a
		// minute, ask etcd for progress meanwhile.)
		var first listPage
		for attempt := 0; ; attempt++ {
			for i := range 3 {
				framework.CreateCMIn(t, a.client, ns, fmt.Sprintf("tick-%d-%d", attempt, i), nil)
			}
			var err error
			if first, err = a.list(t, "secrets", ns, metav1.ListOptions{Limit: 2}); err != nil {
				t.Fatal(err)
			}
			if behind := secretsOnB(); behind < framework.ParseRV(t, first.rv) {
				break
			} else if attempt == 2 {
				t.Fatalf("B's secrets cache at %d, want it behind A's first page at %s", behind, first.rv)
			}
		}
		// B waits for the token's revision (asking etcd for progress) and
		// serves it from its snapshot; a 504 after 3 s fails the test.
		rest := pageThrough(t, "secrets", ns, metav1.ListOptions{Limit: 2, Continue: first.token}, nil, b, a)
		samePages(t, "first page on A, then B, A", append([]listPage{first}, rest...), expectedPages(t, at.items(), 2, first.rv, true))
		if now := secretsOnB(); now < framework.ParseRV(t, first.rv) {
			t.Errorf("B's secrets cache at %d after continuing at %s, want caught up", now, first.rv)
		}
	})
}

// TestContinueTokensAcrossStoragePaths pages LISTs alternately on a
// server with --watch-cache=false and one with the cache, on one etcd:
// each continues the other's tokens, with the pages (items,
// remainingItemCount, tokens) each gives alone.
func TestContinueTokensAcrossStoragePaths(t *testing.T) {
	// Serial: its LISTs are checked against the process's counters (RoutesOf).
	external := framework.ExternalEtcd(t, 0)
	etcdPath := startInstance(t, "etcd path", external, func(o *server.Options) { o.WatchCache = false })
	cachePath := startInstance(t, "cache path", external)
	t.Run("etcd first", func(t *testing.T) { checkPagingAcross(t, etcdPath, cachePath) })
	t.Run("cache first", func(t *testing.T) { checkPagingAcross(t, cachePath, etcdPath) })
	t.Run("all namespaces", func(t *testing.T) {
		// Tokens start at namespace/name: every configmap (with the ones
		// the subtests above left), by 5, alternately and on each path alone.
		for range 2 {
			framework.CreateConfigMaps(t, cachePath.client, framework.CreateNamespace(t, cachePath.client), 6)
		}
		first, err := cachePath.list(t, "configmaps", "", metav1.ListOptions{Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		want := append([]listPage{first}, pageThrough(t, "configmaps", "", metav1.ListOptions{Limit: 5, Continue: first.token}, nil, etcdPath)...)
		if len(want) < 3 {
			t.Fatalf("got %d pages, want at least 3: %v", len(want), want)
		}
		for _, on := range [][]instance{{etcdPath}, {cachePath}, {cachePath, etcdPath}} {
			pages := pageThrough(t, "configmaps", "", metav1.ListOptions{Limit: 5, ResourceVersion: first.rv}, nil, on...)
			names := on[0].name
			if len(on) > 1 {
				names += " and " + on[1].name
			}
			samePages(t, fmt.Sprintf("paged at %s on %s", first.rv, names), pages, want)
		}
		for _, on := range []instance{etcdPath, cachePath} {
			exact, err := on.list(t, "configmaps", "", metav1.ListOptions{ResourceVersion: first.rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			var items []string
			for _, p := range want {
				items = append(items, p.items...)
			}
			if want := (listPage{items: items, rv: first.rv}); err != nil || !exact.equal(want) {
				t.Errorf("Exact LIST at %s on %s: got %v (%v), want %v", first.rv, on.name, exact, err, want)
			}
		}
	})
}

// checkPagingAcross pages 12 configmaps by 3, alternately on first and
// second (each LIST served where their routes say), with an update, a
// delete and creates through either between pages. The pages must be the
// state at the first page's resourceVersion, the same as each server
// gives alone at it (a LIST with limit and that resourceVersion, then its
// continuations), and as an Exact LIST on either.
func checkPagingAcross(t *testing.T, first, second instance) {
	t.Helper()
	ns := framework.CreateNamespace(t, first.client)
	created := framework.CreateConfigMaps(t, first.client, ns, 12)
	at := stateOf(created)
	writers := []instance{second, first}
	between := func(gap int) { // on the pages after the cursor, and at it
		w := writers[gap%2].client
		framework.UpdateCMLabels(t, w, ns, fmt.Sprintf("cm-%03d", 11-2*gap), map[string]string{"gap": fmt.Sprint(gap)})
		deleteCM(t, w, ns, fmt.Sprintf("cm-%03d", 10-2*gap))
		framework.CreateCMIn(t, w, ns, fmt.Sprintf("cm-%03da", 3*gap+3), nil)
		framework.CreateCMIn(t, w, ns, fmt.Sprintf("cm-later-%d", gap), nil)
	}
	across := pageThrough(t, "configmaps", ns, metav1.ListOptions{Limit: 3}, between, first, second)
	rv := across[0].rv
	if last := created[len(created)-1].ResourceVersion; framework.ParseRV(t, rv) < framework.ParseRV(t, last) {
		t.Errorf("first page on %s at resourceVersion %s, want at least the last create's %s", first.name, rv, last)
	}
	want := expectedPages(t, at.items(), 3, rv, true)
	samePages(t, fmt.Sprintf("paged on %s, %s, %s, ...", first.name, second.name, first.name), across, want)
	for _, alone := range []instance{first, second} {
		pages := pageThrough(t, "configmaps", ns, metav1.ListOptions{Limit: 3, ResourceVersion: rv}, nil, alone)
		samePages(t, fmt.Sprintf("paged on %s alone at resourceVersion %s", alone.name, rv), pages, want)
		exact, err := alone.list(t, "configmaps", ns, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if want := (listPage{items: at.items(), rv: rv}); err != nil || !exact.equal(want) {
			t.Errorf("Exact LIST at %s on %s: got %v (%v), want %v", rv, alone.name, exact, err, want)
		}
	}
}

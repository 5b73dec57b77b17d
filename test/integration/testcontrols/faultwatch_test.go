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

package testcontrols

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestFaultEndWatch: a rule ends the matching open watch, after a last
// bookmark if it says so, and leaves a watch it does not match open.
func TestFaultEndWatch(t *testing.T) {
	t.Parallel()
	for _, bookmark := range []bool{true, false} {
		t.Run(fmt.Sprintf("bookmark=%v", bookmark), func(t *testing.T) {
			t.Parallel()
			s, client := framework.Start(t)
			ctx := t.Context()
			ns, other := framework.CreateNamespace(t, client), framework.CreateNamespace(t, client)
			opts := metav1.ListOptions{ResourceVersion: framework.ResourceVersionNow(t, client), AllowWatchBookmarks: true}
			w, err := client.CoreV1().ConfigMaps(ns).Watch(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			untouched, err := client.CoreV1().ConfigMaps(other).Watch(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer untouched.Stop()
			framework.CreateCMIn(t, client, ns, "seen", nil)
			if ev := framework.NextChange(t, w); ev.Type != watch.Added {
				t.Fatalf("got %s, want the ADDED of seen", framework.Describe(ev))
			}

			rule := inject(t, s, "end", v1alpha1.FaultRuleSpec{Match: v1alpha1.FaultMatch{Verbs: []string{"watch"}, Resources: []string{"configmaps"}, Namespaces: []string{ns}},
				EndWatch: &v1alpha1.FaultEndWatch{Bookmark: bookmark}})
			if bookmark {
				if ev := framework.NextEvent(t, w); ev.Type != watch.Bookmark {
					t.Errorf("got %s, want the last BOOKMARK", framework.Describe(ev))
				}
			}
			framework.ExpectEnd(t, w)
			if got := hits(t, s, rule); got != 1 {
				t.Errorf("rule %s hit %d watches, want 1", rule, got)
			}
			framework.CreateCMIn(t, client, other, "still-watched", nil)
			if ev := framework.NextChange(t, untouched); ev.Type != watch.Added {
				t.Errorf("the watch of namespace %s, which the rule does not match, got %s, want an ADDED", other, framework.Describe(ev))
			}
		})
	}
}

// TestFaultEndedWatchResumesWithoutRelist: client-go's reflector resumes a
// watch a rule ended from its last resourceVersion, without a relist.
func TestFaultEndedWatchResumesWithoutRelist(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ns := framework.CreateNamespace(t, client)
	inf := startInformer(t, client, ns)
	framework.CreateCMIn(t, client, ns, "first", nil)
	framework.WaitUntil(t, func() bool { return inf.seen("first") }, "the informer to see first")
	watches := inf.lw.Watches()

	rule := inject(t, s, "end", v1alpha1.FaultRuleSpec{Match: v1alpha1.FaultMatch{Verbs: []string{"watch"}, Resources: []string{"configmaps"}, Namespaces: []string{ns}},
		EndWatch: &v1alpha1.FaultEndWatch{}})
	if got := hits(t, s, rule); got != 1 {
		t.Fatalf("rule %s hit %d watches, want the informer's", rule, got)
	}
	framework.WaitUntil(t, func() bool { return inf.lw.Watches() > watches }, "the reflector to watch again")
	framework.CreateCMIn(t, client, ns, "second", nil)
	framework.WaitUntil(t, func() bool { return inf.seen("second") }, "the informer to see second")
	if n := inf.lw.Lists(); n != 1 {
		t.Errorf("informer listed %d times, want 1 (a watch resumed, no relist)", n)
	}
}

// TestFaultWatchGoneRelistsOnce: a watch answered 410 makes client-go's
// reflector list again, once.
func TestFaultWatchGoneRelistsOnce(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ns := framework.CreateNamespace(t, client)
	inf := startInformer(t, client, ns)
	framework.CreateCMIn(t, client, ns, "first", nil)
	framework.WaitUntil(t, func() bool { return inf.seen("first") }, "the informer to see first")

	watchesHere := v1alpha1.FaultMatch{Verbs: []string{"watch"}, Resources: []string{"configmaps"}, Namespaces: []string{ns}}
	gone := inject(t, s, "gone", v1alpha1.FaultRuleSpec{Match: watchesHere, Count: 1, Error: &v1alpha1.FaultError{Code: 410}})
	inject(t, s, "end", v1alpha1.FaultRuleSpec{Match: watchesHere, EndWatch: &v1alpha1.FaultEndWatch{}})
	framework.WaitUntil(t, func() bool { return inf.lw.Lists() == 2 }, "the reflector to list again")
	framework.CreateCMIn(t, client, ns, "second", nil)
	framework.WaitUntil(t, func() bool { return inf.seen("second") }, "the informer to see second")
	if n := inf.lw.Lists(); n != 2 {
		t.Errorf("informer listed %d times, want 2 (one relist after the 410)", n)
	}
	if got := hits(t, s, gone); got != 1 {
		t.Errorf("rule %s hit %d watches, want 1", gone, got)
	}
}

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

package framework

import (
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// eventTimeout bounds the wait for one watch event.
const eventTimeout = 30 * time.Second

// NextEvent returns w's next event; it fails the test if none comes in
// time or the watch ends.
func NextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	timer := time.NewTimer(eventTimeout)
	defer timer.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch ended, want another event")
		}
		return ev
	case <-timer.C:
		t.Fatalf("no watch event in %s", eventTimeout)
	}
	return watch.Event{}
}

// ExpectEnd checks that w ends without another event.
func ExpectEnd(t *testing.T, w watch.Interface) {
	t.Helper()
	timer := time.NewTimer(eventTimeout)
	defer timer.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Errorf("got %s, want the watch to end", Describe(ev))
		}
	case <-timer.C:
		t.Errorf("watch still open after %s, want it ended", eventTimeout)
	}
}

// NextChange is NextEvent skipping bookmarks.
func NextChange(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	for {
		if ev := NextEvent(t, w); ev.Type != watch.Bookmark {
			return ev
		}
	}
}

// ExpectEvents reads len(want) events other than bookmarks from w and
// checks them against want ("TYPE name", in order).
func ExpectEvents(t *testing.T, w watch.Interface, want ...string) []watch.Event {
	t.Helper()
	var events []watch.Event
	var got []string
	for range want {
		ev := NextChange(t, w)
		events = append(events, ev)
		got = append(got, Describe(ev))
	}
	if !slices.Equal(got, want) {
		t.Errorf("got events %q, want %q", got, want)
	}
	return events
}

// Describe prints an event as "TYPE name" (for an ERROR, "ERROR <status>").
func Describe(ev watch.Event) string {
	if ev.Type == watch.Error {
		return fmt.Sprintf("ERROR %v", ErrorOf(ev))
	}
	name := ""
	if m, err := meta.Accessor(ev.Object); err == nil {
		name = m.GetName()
	}
	return fmt.Sprintf("%s %s", ev.Type, name)
}

// ErrorOf is the error an ERROR event carries, nil for other events.
func ErrorOf(ev watch.Event) error {
	if ev.Type != watch.Error {
		return nil
	}
	return apierrors.FromObject(ev.Object)
}

// WatchListOptions are what a client-go reflector sends for a watch-list (KEP-3157).
func WatchListOptions(rv string) metav1.ListOptions {
	return metav1.ListOptions{
		ResourceVersion:      rv,
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	}
}

// HasCause reports whether err is a Status with a cause of type on field.
func HasCause(err error, typ metav1.CauseType, field string) bool {
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Type == typ && c.Field == field {
			return true
		}
	}
	return false
}

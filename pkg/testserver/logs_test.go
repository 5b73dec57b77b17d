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

package testserver

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestRepeatedLinesAreCounted(t *testing.T) {
	var got []string
	l := newServerLog(func(args ...any) { got = append(got, fmt.Sprint(args...)) })
	for range 3 {
		l.write("E no leader", true)
	}
	l.write("I other", false)
	l.write("E no leader", true)
	l.write("E no leader", true)
	l.stop()
	l.write("E after the stop", true)

	want := []string{
		"E no leader", "(the line above repeated: 2 more)",
		"I other",
		"E no leader", "(the line above repeated: 1 more)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the test's log got\n%q\nwant\n%q", got, want)
	}
	if n := len(l.errs); n != 5 {
		t.Errorf("%d errors recorded, want every one of the 5", n)
	}
}

// TestShutdownRacesAreNotErrors: the compactor's read that a stop
// cancelled, logged through klog as an error, reaches the test as an info
// line and is no logged error; another etcd error still is.
func TestShutdownRacesAreNotErrors(t *testing.T) {
	var got []string
	l := newServerLog(func(args ...any) { got = append(got, fmt.Sprint(args...)) })
	sink := &routerSink{verbosity: -1, write: l.write}
	sink.Error(nil, `etcd: endpoint ([http://127.0.0.1:2379]): get "compact_rev_key" failed: context canceled`)
	sink.Error(nil, `etcd: endpoint ([http://127.0.0.1:2379]): get "compact_rev_key" failed: etcdserver: request timed out`)
	if len(got) != 2 || !strings.HasPrefix(got[0], "I ") || !strings.HasPrefix(got[1], "E ") {
		t.Errorf("the test's log got %q, want the cancelled read as an info line, the timeout as an error", got)
	}
	if len(l.errs) != 1 || !strings.Contains(l.errs[0], "request timed out") {
		t.Errorf("errors recorded: %q, want the timeout only", l.errs)
	}
}

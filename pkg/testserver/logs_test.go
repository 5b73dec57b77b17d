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
	"context"
	"fmt"
	"net/url"
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
// cancelled, priority and fairness's status write refused by the closed
// port, and a reflector's watch the stop cancelled, logged through klog as
// errors, reach the test as info lines and are no logged errors; other
// errors of theirs still are.
func TestShutdownRacesAreNotErrors(t *testing.T) {
	var got []string
	l := newServerLog(func(args ...any) { got = append(got, fmt.Sprint(args...)) })
	sink := &routerSink{verbosity: -1, write: l.write}
	const patch = `failed to set a status.condition for FlowSchema kube-controller-manager: Patch "https://127.0.0.1:37757/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/kube-controller-manager/status": `
	sink.Error(nil, `etcd: endpoint ([http://127.0.0.1:2379]): get "compact_rev_key" failed: context canceled`)
	sink.Error(nil, patch+`dial tcp 127.0.0.1:37757: connect: connection refused`)
	sink.Error(nil, `etcd: endpoint ([http://127.0.0.1:2379]): get "compact_rev_key" failed: etcdserver: request timed out`)
	sink.Error(nil, patch+`Internal error occurred`)
	const watch = `Get "https://127.0.0.1:37757/apis/apiregistration.k8s.io/v1/apiservices?resourceVersion=7&watch=true"`
	sink.Error(&url.Error{Op: "Get", URL: watch, Err: context.Canceled}, "Failed to watch")
	sink.Error(&url.Error{Op: "Get", URL: watch, Err: context.DeadlineExceeded}, "Failed to watch")
	want := []string{"I ", "I ", "E ", "E ", "I ", "E "}
	if len(got) != len(want) {
		t.Fatalf("the test's log got %q, want %d lines", got, len(want))
	}
	for i, prefix := range want {
		if !strings.HasPrefix(got[i], prefix) {
			t.Errorf("line %d of the test's log is %q, want it to start %q (the cancellations and the refused write as info lines, the others as errors)", i, got[i], prefix)
		}
	}
	if len(l.errs) != 3 || !strings.Contains(l.errs[0], "request timed out") || !strings.Contains(l.errs[1], "Internal error") || !strings.Contains(l.errs[2], "deadline exceeded") {
		t.Errorf("errors recorded: %q, want the timeout, the internal error and the watch's deadline only", l.errs)
	}
}

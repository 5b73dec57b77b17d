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
	"strings"
	"testing"
)

func TestGoroutinesWith(t *testing.T) {
	hook := "goroutine 7 [select]:\nk8s.io/apiserver/pkg/server.runPostStartHook(...)"
	create := "goroutine 9 [chan receive]:\nk8s.io/apiserver/pkg/endpoints/handlers.createHandler.func1()"
	other := "goroutine 8 [IO wait]:\nnet/http.(*conn).serve()"
	dump := strings.Join([]string{hook, other, create, hook}, "\n\n")
	marks := []string{"server.runPostStartHook", "handlers.createHandler"}
	for _, tt := range []struct {
		most int
		want string
	}{
		{10, strings.Join([]string{hook, create, hook}, "\n\n")},
		{2, strings.Join([]string{hook, create, "(and 1 more)"}, "\n\n")},
	} {
		if got := goroutinesWith(dump, marks, tt.most); got != tt.want {
			t.Errorf("at most %d: got\n%s\nwant\n%s", tt.most, got, tt.want)
		}
	}
	if got := goroutinesWith(other, marks, 10); got != "" {
		t.Errorf("no marked goroutine: got %q, want none", got)
	}
	if got := startingStacks(); strings.Contains(got, "TestGoroutinesWith") {
		t.Errorf("this test's own goroutine is neither a hook nor a create:\n%s", got)
	}
}

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

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
	"bytes"
	"fmt"
	"runtime/pprof"
	"slices"
	"strings"
)

// maxStacks bounds how many goroutines startingStacks shows.
const maxStacks = 20

// startingStacks are the stacks of the goroutines that run post-start
// hooks or create objects, in every server of the process: a server that
// is not ready in time waits in one of them, and the error that says so
// shows where.
func startingStacks() string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		return err.Error()
	}
	return goroutinesWith(buf.String(), []string{"server.runPostStartHook", "handlers.createHandler"}, maxStacks)
}

// goroutinesWith are the goroutines of dump (as runtime.Stack writes
// them, blank-line separated) whose stacks name one of marks, at most
// most of them.
func goroutinesWith(dump string, marks []string, most int) string {
	var stacks []string
	for _, g := range strings.Split(dump, "\n\n") {
		if slices.ContainsFunc(marks, func(m string) bool { return strings.Contains(g, m) }) {
			stacks = append(stacks, g)
		}
	}
	if len(stacks) > most {
		stacks = append(stacks[:most], fmt.Sprintf("(and %d more)", len(stacks)-most))
	}
	return strings.Join(stacks, "\n\n")
}

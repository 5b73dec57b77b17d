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
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Poll waits until cond holds, for at most timeout.
func Poll(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// WaitUntil polls cond until it holds, failing the test after 30 s.
func WaitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	Poll(t, what, 30*time.Second, cond)
}

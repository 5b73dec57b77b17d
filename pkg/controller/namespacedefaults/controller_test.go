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

package namespacedefaults

import (
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// newCA returns a self-signed CA certificate named name, PEM-encoded,
// valid from an hour ago until an hour from now.
func newCA(t *testing.T, name string) string {
	t.Helper()
	return string(pkitest.NewCA(t, name).CertPEM())
}

// TestWithCA: servers with CAs of their own converge on the bundle of
// all of them; a bundle that holds a server's CA is left as it is.
func TestWithCA(t *testing.T) {
	a, b := newCA(t, "a"), newCA(t, "b")
	now := time.Now()
	if got := withCA(a, a, now); got != a {
		t.Errorf("a bundle of a, from a: got %q, want it as it is", got)
	}
	ab := withCA(a, b, now)
	if ab != a+b {
		t.Errorf("a bundle of a, from b: got %q, want a then b", ab)
	}
	for _, ca := range []string{a, b} {
		if got := withCA(ab, ca, now); got != ab {
			t.Errorf("the bundle of both: got %q, want it as it is (converged)", got)
		}
	}
	if got := withCA(a, b, now.Add(20*365*24*time.Hour)); got != b {
		t.Errorf("an expired bundle, from b: got %q, want b alone", got)
	}
	for _, bundle := range []string{"", "not a certificate"} {
		if got := withCA(bundle, a, now); got != a {
			t.Errorf("bundle %q, from a: got %q, want a", bundle, got)
		}
	}
}

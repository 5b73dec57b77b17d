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

package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestOn: the ports are outside the ephemeral range (where listening on
// port 0 and outgoing connections take theirs), free, and never repeated.
func TestOn(t *testing.T) {
	low := ephemeralLow()
	seen := map[int]bool{}
	for range 50 {
		port, err := On("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if port < 10000 || port >= low {
			t.Errorf("port %d is not in [10000, %d)", port, low)
		}
		if seen[port] {
			t.Errorf("port %d handed out twice", port)
		}
		seen[port] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		l.Close()
	}
}

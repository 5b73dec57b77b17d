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

// Package freeport picks ports for other processes to listen on.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

var (
	portsMu     sync.Mutex
	portsHanded = map[int]bool{}
)

// On returns a port nothing listens on now on host, for another
// process to listen on, and never the same one twice in a process. It is
// drawn at random below the kernel's range of ephemeral ports: a port from
// that range (as listening on port 0 gives) may be taken by any outgoing
// connection before the other process binds it.
func On(host string) (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	low := ephemeralLow()
	for range 100 {
		port := 10000 + rand.IntN(low-10000)
		if portsHanded[port] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		portsHanded[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("no free port on %s below the ephemeral range", host)
}

// ephemeralLow is the first port of the kernel's ephemeral range, or
// Linux's default where it cannot be read or leaves no room below.
func ephemeralLow() int {
	const linuxDefault = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return linuxDefault
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return linuxDefault
	}
	if low, err := strconv.Atoi(fields[0]); err == nil && low > 11000 {
		return low
	}
	return linuxDefault
}

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

package driver

import (
	"context"
	"fmt"
	"os"
	"time"
)

const (
	idlePeriod  = 250 * time.Millisecond
	idleCPU     = idlePeriod / 10 // a tenth of one core
	idleTimeout = 30 * time.Second
)

// WaitIdle waits until the servers the env runs are idle: together they
// used less than a tenth of a core over the last idlePeriod. A benchmark
// calls it before it times anything, so that what one server still does
// after its own op (a GC of a large heap, closing watches, etcd's
// background work) does not slow the other's. After idleTimeout it gives
// up with an error saying how busy they were.
func (e *Env) WaitIdle(ctx context.Context) error {
	deadline := time.Now().Add(idleTimeout)
	last := e.cpu()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(idlePeriod):
		}
		now := e.cpu()
		used := now - last
		if used < idleCPU {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the servers still used %s of CPU per %s after %s", used, idlePeriod, idleTimeout)
		}
		last = now
	}
}

// cpu is the CPU time the env's running server processes have used so far
// (on Linux; 0 elsewhere).
func (e *Env) cpu() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	var total time.Duration
	for s := range e.running {
		if t, err := s.CPU(); err == nil {
			total += t
		}
	}
	return total
}

// ClientCPU is the CPU time the benchmark's own process has used so far
// (on Linux): what its clients cost, beside the servers' CPU.
func ClientCPU() (time.Duration, error) { return processCPU(os.Getpid()) }

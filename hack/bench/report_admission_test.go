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

package main

import (
	"strings"
	"testing"
	"time"
)

func TestBootstrapMedianDiff(t *testing.T) {
	var base, shifted []time.Duration
	for i := range 200 {
		d := time.Duration(1000+i%37*10) * time.Microsecond
		base, shifted = append(base, d), append(shifted, d+50*time.Microsecond)
	}
	if lo, hi := bootstrapMedianDiff(shifted, base); lo > 50*time.Microsecond || hi < 50*time.Microsecond || lo <= 0 {
		t.Errorf("a 50µs shift: interval %s … %s, want one around 50µs above 0", lo, hi)
	}
	if lo, hi := bootstrapMedianDiff(base, base); lo > 0 || hi < 0 {
		t.Errorf("no shift: interval %s … %s, want one around 0", lo, hi)
	}
}

func TestWriteAdmission(t *testing.T) {
	µs := func(xs ...int) []time.Duration {
		var d []time.Duration
		for _, x := range xs {
			d = append(d, time.Duration(x)*time.Microsecond)
		}
		return d
	}
	r := report{cfg: config{admissionCreates: 4}, admission: admissionResult{
		ours:     admissionRun{none: µs(1000, 1000, 1000, 1000), policy: µs(1010, 1010, 1010, 1010), webhook: µs(2000, 2000, 2000, 2000)},
		upstream: &admissionRun{none: µs(2000, 2000, 2000, 2000), policy: µs(2010, 2010, 2010, 2010), webhook: µs(2500, 2500, 2500, 2500)},
	}}
	var b markdown
	r.writeAdmission(&b)
	out := b.String()
	for _, want := range []string{
		"| one ValidatingAdmissionPolicy | miniapiserver | 1.0 ms |",
		"| one ValidatingAdmissionPolicy | 0.50× | +10 µs vs +10 µs | +0 µs … +0 µs | met (no difference) |",
		"| one validating webhook | 0.80× | +1.0 ms vs +500 µs | +500 µs … +500 µs | **missed** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

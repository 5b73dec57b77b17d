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

package bench

import (
	"fmt"
	"os"
	"testing"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

// BenchmarkStartToReady is the time from exec to ready: miniapiserver's
// ready line, kube-apiserver's first 200 from /readyz (its etcd started at
// the same moment). data=empty starts each time on a fresh data dir;
// data=populated on one holding -objects ConfigMaps, miniapiserver only
// (kube-apiserver's start does not read its objects).
func BenchmarkStartToReady(b *testing.B) {
	b.Run("data=empty", func(b *testing.B) {
		onEach(b, func(b *testing.B, kind driver.Kind) {
			benchStarts(b, kind, func(i int) string { return env.Dir(fmt.Sprintf("empty-%s-%d", kind, i)) }, true)
		})
	})
	b.Run("data=populated", func(b *testing.B) {
		b.Run("server=mini", func(b *testing.B) {
			dir := configMaps(b, driver.Mini)
			benchStarts(b, driver.Mini, func(int) string { return dir }, false)
		})
	})
	b.Run("data=crds", benchCRDStarts)
}

// benchStarts starts and stops a server b.N times, run i on dir(i), which
// it removes after with remove. ns/op is start-to-ready; stop-ns/op is from
// SIGTERM to exit.
func benchStarts(b *testing.B, kind driver.Kind, dir func(int) string, remove bool, args ...string) {
	totals := map[string]float64{}
	for i := 0; b.Loop(); i++ {
		s, err := env.Start(b.Context(), kind, dir(i), args...)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
		totals["ns/op"] += float64(s.Ready)
		totals["stop-ns/op"] += float64(s.Stopped)
		if remove {
			if err := os.RemoveAll(dir(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportMeans(b, totals)
}

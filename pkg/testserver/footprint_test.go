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

package testserver_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// BenchmarkFootprint starts 64 in-process servers at once, as a parallel
// suite would, and reports the heap each holds after start (after a GC),
// the process's peak RSS, and a data dir's size.
func BenchmarkFootprint(b *testing.B) {
	const n = 64
	for b.Loop() {
		heapBefore := heapInUse()
		servers := make([]*testserver.Server, n)
		var wg sync.WaitGroup
		for i := range servers {
			wg.Go(func() {
				s, err := testserver.New()
				if err != nil {
					b.Error(err)
					return
				}
				servers[i] = s
			})
		}
		wg.Wait()
		heap := heapInUse() - heapBefore
		b.ReportMetric(float64(heap)/n/(1<<20), "heap-MiB/server")
		b.ReportMetric(float64(peakRSS(b))/(1<<20), "peak-RSS-MiB")
		if servers[0] != nil {
			b.ReportMetric(float64(dirSize(b, servers[0].DataDir))/(1<<20), "datadir-MiB")
		}
		for _, s := range servers {
			if s != nil {
				if err := s.Stop(); err != nil {
					b.Error(err)
				}
			}
		}
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// peakRSS is the process's peak resident set (Linux's VmHWM), in bytes; 0
// elsewhere.
func peakRSS(b *testing.B) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	return 0
}

func dirSize(b *testing.B, dir string) int64 {
	var size int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil && info.Mode().IsRegular() {
			size += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return size
}

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
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// median of a non-empty sample; the mean of the middle two for even sizes.
func median(times []time.Duration) time.Duration {
	sorted := slices.Sorted(slices.Values(times))
	mid := len(sorted) / 2
	if len(sorted)%2 == 0 {
		return (sorted[mid-1] + sorted[mid]) / 2
	}
	return sorted[mid]
}

// medianFloat is median for plain numbers.
func medianFloat(xs []float64) float64 {
	sorted := slices.Sorted(slices.Values(xs))
	mid := len(sorted) / 2
	if len(sorted)%2 == 0 {
		return (sorted[mid-1] + sorted[mid]) / 2
	}
	return sorted[mid]
}

// percentile q (0 < q ≤ 1) of ascending samples by the nearest-rank
// method; 0 for none.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(len(sorted))*q)) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= 100*time.Millisecond:
		return fmt.Sprintf("%.0f ms", d.Seconds()*1e3)
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", d.Seconds()*1e3)
	default:
		return fmt.Sprintf("%.0f µs", d.Seconds()*1e6)
	}
}

func fmtBytes(n float64) string {
	switch {
	case math.Abs(n) >= 1<<30:
		return fmt.Sprintf("%.2f GiB", n/(1<<30))
	case math.Abs(n) >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	default:
		return fmt.Sprintf("%.1f KiB", n/(1<<10))
	}
}

// fmtRatio is "1.54×", or "–" when it is not a number (a zero denominator).
func fmtRatio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	return fmt.Sprintf("%.2f×", x)
}

// fmtSmallRatio is fmtRatio, but with two significant digits below 0.01:
// "0.00054×".
func fmtSmallRatio(x float64) string {
	if x > 0 && x < 0.01 {
		return fmt.Sprintf("%.2g×", x)
	}
	return fmtRatio(x)
}

// fmtTimes is a factor of 10 or more as a whole count, "1,853×", a
// smaller one as fmtRatio does.
func fmtTimes(x float64) string {
	if x >= 10 && !math.IsInf(x, 0) {
		return fmtCount(int(math.Round(x))) + "×"
	}
	return fmtRatio(x)
}

// fmtCount writes n with thousands separators: 10000 → "10,000".
func fmtCount(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fmtCounts is "100, 1,000".
func fmtCounts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmtCount(n)
	}
	return strings.Join(s, ", ")
}

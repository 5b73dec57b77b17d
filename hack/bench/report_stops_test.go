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

// stopsFixture is the stops section with watches watches per round, the
// last cache round replaced by odd when it is not zero.
func stopsFixture(watches int, odd stopRun) []stopStats {
	conns := (watches + 99) / 100
	run := func(stop float64, bookmarked int) stopRun {
		return stopRun{stop: ms(stop), conns: conns, bookmarkable: watches / 2, bookmarked: bookmarked}
	}
	cache := []stopRun{run(1110, watches/2), run(1090, watches/2), run(1170, watches/2)}
	if odd != (stopRun{}) {
		odd.conns, odd.bookmarkable = conns, watches/2
		cache[2] = odd
	}
	return []stopStats{
		{path: cachePath, watches: watches, runs: cache},
		{path: etcdPath, watches: watches, runs: []stopRun{run(1100, 0), run(1110, 0), run(1120, 0)}},
		{path: cachePath, runs: []stopRun{{stop: ms(1060)}, {stop: ms(1050)}, {stop: ms(1080)}}},
	}
}

// restartsFixture is the restarts section; the gate-on ConfigMap informer
// relists onRelists times in the second round, each gate-off informer
// offRelists times a round (twice for Secrets in the first).
func restartsFixture(onRelists, offRelists int) restartsResult {
	run := func(relists []int, stop, restart, resync float64) restartRun {
		return restartRun{relists: relists, stop: ms(stop), restart: ms(restart), resync: ms(resync)}
	}
	return restartsResult{
		resume: restartStats{mode: resumeMode, runs: []restartRun{
			run([]int{0, 0, 0}, 15.8, 368, 733),
			run([]int{onRelists, 0, 0}, 26.4, 10830, 15.8),
			run([]int{0, 0, 0}, 18.6, 331, 1190),
		}},
		relist: restartStats{mode: relistMode, runs: []restartRun{
			run([]int{offRelists, 2 * offRelists, offRelists}, 1230, 559, 13),
			run([]int{offRelists, offRelists, offRelists}, 16, 299, 1120),
			run([]int{offRelists, offRelists, offRelists}, 1140, 357, 35.7),
		}},
	}
}

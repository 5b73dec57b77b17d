package main

import "time"

// upstreamReport is a run with -upstream: the starts and lists sections
// side by side with kube-apiserver, one LIST target missed, -upstream-args
// given, and the rv0 section on miniapiserver only.
func upstreamReport() report {
	cfg := baseConfig("starts,lists,rv0")
	cfg.starts, cfg.lists, cfg.objects = 3, 3, 2000
	cfg.upstream = "/root/.cache/go-build/miniapiserver-upstream/v1.37.2-etcd-v3.7.2"
	r := report{cfg: cfg, version: "miniapiserver v1.37.2", os: "linux", arch: "amd64", cpus: 2, elapsed: 95 * time.Second}
	r.empty = startStats{runs: []startRun{{ms(206), ms(6.2)}, {ms(150), ms(5)}, {ms(232), ms(7)}}}
	r.populated = startStats{runs: []startRun{{ms(276), ms(10.9)}, {ms(227), ms(9)}, {ms(333), ms(12)}}}
	r.populate = populateStats{objects: 2000, duration: ms(1380)}
	bins := upstreamBinaries{apiserverVersion: "Kubernetes v1.37.2", etcdVersion: "etcd Version: 3.7.2",
		args: []string{"--enable-priority-and-fairness=false"}}
	upstream := startStats{runs: []startRun{{ms(4810), ms(1210)}, {ms(5120), ms(1190)}, {ms(4950), ms(1330)}}}
	r.upstream = &upstreamResult{bins: bins, starts: startPair{ours: r.empty, upstream: upstream},
		populate: populateStats{objects: 2000, duration: ms(2950)}}
	// Times per variant: ours, then upstream's; upstream/ours 2.0× except
	// where noted.
	times := [][2]float64{{12.8, 25.6}, {22, 44}, {13.9, 27.8}, {24, 48}, {15.7, 31.4}, {10.9, 21.8},
		{60, 120}, {48, 240}, {55, 275}} // the exact-RV JSON LIST: 2.0×, missed
	for i, v := range upstreamListVariants(cfg.page) {
		ours, theirs := v, v
		if v.match != "" {
			ours.rv, theirs.rv = "10104", "10311"
		}
		pages := 1
		if v.limit > 0 {
			pages = 4
		}
		p := listPair{
			ours:     listFixture(ours, 0.9*(1<<20), pages, 2_800_000, times[i][0]*0.9, times[i][0], times[i][0]*1.2),
			upstream: listFixture(theirs, 7.5*(1<<20), pages, 2_800_000, times[i][1]*0.9, times[i][1], times[i][1]*1.3),
			target:   upstreamListTarget,
		}
		if v.match != "" {
			p.target = upstreamExactTarget
		}
		// Upstream's watch cache serves first pages only, and no exact RV.
		requests := float64(pages * cfg.lists)
		p.fromCache, p.requests = [2]float64{requests, float64(cfg.lists)}, [2]float64{requests, requests}
		if v.match != "" {
			p.fromCache[1] = 0
		}
		r.upstream.lists = append(r.upstream.lists, p)
		if v.rv == "" {
			r.lists = append(r.lists, p.ours)
		}
	}
	rv := rv0Variants()
	r.rv0 = rv0Stats{
		cache: []listStats{listFixture(rv[0], 0.8*(1<<20), 1, 2_800_000, 15, 12, 21), listFixture(rv[1], 0.7*(1<<20), 1, 2_400_000, 10, 9, 17)},
		etcd:  []listStats{listFixture(rv[0], 18*(1<<20), 1, 2_800_000, 36, 31, 44), listFixture(rv[1], 18*(1<<20), 1, 2_400_000, 24, 21, 36)},
	}
	return r
}

// upstreamInformersReport is the informers section alone side by side with
// kube-apiserver, its heap picture in a temporary file (no -readme), and
// kube-apiserver's watch-list rounds falling back to LIST.
func upstreamInformersReport() report {
	cfg := baseConfig("informers")
	cfg.upstream = "/root/.cache/go-build/miniapiserver-upstream/v1.37.2-etcd-v3.7.2"
	r := report{cfg: cfg, version: "miniapiserver v1.37.2", os: "linux", arch: "amd64", cpus: 2, elapsed: 140 * time.Second}
	r.informers = informersFixture(0, 16)
	r.informers.upstream = &upstreamInformers{
		populate:  ms(3310),
		watchList: informerStats{mode: watchListMode, rounds: informerRounds(512.4, 190, 16, 7020, 6810, 7450)},
		list:      informerStats{mode: listMode, rounds: informerRounds(512.4, 95, 16, 6900, 6620, 7010)},
	}
	r.informers.heapSVG = "/tmp/miniapiserver-bench-informers-heap-123.svg"
	r.upstream = &upstreamResult{bins: upstreamBinaries{apiserverVersion: "Kubernetes v1.37.2", etcdVersion: "etcd Version: 3.7.2"}}
	return r
}

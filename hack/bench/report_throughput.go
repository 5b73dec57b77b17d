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
	"strings"
)

// writeThroughput is the throughput section: events/s one resource
// sustains, and the default server's heap per ConfigMap.
func (r report) writeThroughput(b *markdown) {
	t := r.throughput
	if len(t.runs) == 0 {
		return
	}
	b.paragraph("throughput", throughputProse{
		Namespace: namespace, Writers: r.cfg.throughputWriters, Watchers: r.cfg.throughputWatchers,
		Updates: r.cfg.throughputUpdates, Timeout: deliveryTimeout, Objects: t.heap.objects, Payload: payloadSize,
		OwnDataDir: t.heap.populatedFromOwn, Workers: r.cfg.workers, Populate: t.heap.populate.duration, HeapMetric: heapInuseBytes,
		Upstream: t.upstream != nil,
	})
	b.WriteString("| throughput, one resource | variant | writes/s (acknowledged) | events/s (delivered) | note |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, run := range t.runs {
		fmt.Fprintf(b, "| %s writers × %s updates → %s watchers | %s | %s | %s | %s |\n",
			fmtCount(run.writers), fmtCount(run.updates), fmtCount(run.watchers), run.path.name,
			fmtRate(run.writesPerSec()), fmtRate(run.eventsPerSec()), throughputNote(run))
	}
	b.WriteString("\n")
	r.writeUpstreamThroughput(b)
	h := t.heap
	b.WriteString("| heap per object (default server) | heap in use after GC | per ConfigMap | note |\n")
	b.WriteString("|---|---|---|---|\n")
	fmt.Fprintf(b, "| empty data dir | %s | – | baseline |\n", fmtBytes(h.empty))
	fmt.Fprintf(b, "| %s ConfigMaps, after start | %s | %s | no LIST served yet |\n",
		fmtCount(h.objects), fmtBytes(h.before), fmtBytes(h.perObject(h.before)))
	fmt.Fprintf(b, "| %s ConfigMaps, after a JSON and a protobuf LIST | %s | %s | growth over after start: %s |\n",
		fmtCount(h.objects), fmtBytes(h.after), fmtBytes(h.perObject(h.after)), fmtBytes(h.after-h.before))
	b.WriteString("\n")
}

// fmtRate is a per-second rate as a whole count: "12,000".
func fmtRate(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	return fmtCount(int(math.Round(x)))
}

func throughputNote(run throughputRun) string {
	return strings.Join(append(throughputNotes(run), fmt.Sprintf("`%s`", strings.Join(run.path.args, " "))), "; ")
}

// throughputNotes flags an incomplete run, then gives its events and
// durations.
func throughputNotes(run throughputRun) []string {
	want := int64(run.watchers) * int64(run.updates)
	var note []string
	if run.events < want || run.timedOut {
		note = append(note, "**incomplete**")
	}
	note = append(note, fmt.Sprintf("%s of %s events", fmtCount(int(run.events)), fmtCount(int(want))),
		fmt.Sprintf("updates took %s, deliveries %s", fmtDuration(run.writing), fmtDuration(run.delivered)))
	if run.resumed > 0 {
		note = append(note, fmt.Sprintf("**the server ended %d watch stream(s) early**; each was watched again from the last event's resourceVersion", run.resumed))
	}
	return note
}

// writeUpstreamThroughput is kube-apiserver's run and the ratios of
// miniapiserver's rates over its.
func (r report) writeUpstreamThroughput(b *markdown) {
	up := r.throughput.upstream
	if up == nil {
		return
	}
	b.WriteString("| vs kube-apiserver: throughput | server | writes/s (acknowledged) | events/s (delivered) | note |\n")
	b.WriteString("|---|---|---|---|---|\n")
	fmt.Fprintf(b, "| %s writers × %s updates → %s watchers | kube-apiserver + etcd | %s | %s | %s |\n",
		fmtCount(up.writers), fmtCount(up.updates), fmtCount(up.watchers), fmtRate(up.writesPerSec()), fmtRate(up.eventsPerSec()),
		strings.Join(append(throughputNotes(*up), "its defaults (watch cache on), etcd with fsync"), "; "))
	b.WriteString("\n| throughput: ours / upstream | writes/s | events/s | note |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, run := range r.throughput.runs {
		fmt.Fprintf(b, "| miniapiserver `%s` / kube-apiserver | %s | %s | rates: higher is better for miniapiserver |\n",
			strings.Join(run.path.args, " "), fmtRatio(run.writesPerSec()/up.writesPerSec()), fmtRatio(run.eventsPerSec()/up.eventsPerSec()))
	}
	b.WriteString("\n")
}

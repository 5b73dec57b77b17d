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
		Upstream: t.upstream != nil, UpstreamHeap: t.upstreamHeap != nil,
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
	writeHeapPerObject(b, t.heap, t.upstreamHeap)
}

// writeHeapPerObject is the heap table: ours, and with up kube-apiserver's
// plus its etcd's beside it.
func writeHeapPerObject(b *markdown, h heapPerObject, up *heapPerObject) {
	cells := func(h *heapPerObject, heap float64, baseline bool) string {
		if h == nil {
			return ""
		}
		if baseline {
			return fmt.Sprintf(" %s | – |", fmtBytes(heap))
		}
		return fmt.Sprintf(" %s | %s |", fmtBytes(heap), fmtBytes(h.perObject(heap)))
	}
	after := func(h *heapPerObject) float64 { return h.after }
	before := func(h *heapPerObject) float64 { return h.before }
	row := func(label string, heap func(*heapPerObject) float64, note string) {
		fmt.Fprintf(b, "| %s |%s", label, cells(&h, heap(&h), false))
		if up != nil {
			b.WriteString(cells(up, heap(up), false))
		}
		fmt.Fprintf(b, " %s |\n", note)
	}
	b.WriteString("| heap per object (default server) | heap in use after GC | per ConfigMap |")
	if up != nil {
		b.WriteString(" kube-apiserver + etcd heap in use after GC | per ConfigMap |")
	}
	b.WriteString(" note |\n|---|---|---|")
	if up != nil {
		b.WriteString("---|---|")
	}
	b.WriteString("---|\n")
	fmt.Fprintf(b, "| empty data dir |%s", cells(&h, h.empty, true))
	if up != nil {
		b.WriteString(cells(up, up.empty, true))
	}
	b.WriteString(" baseline |\n")
	row(fmtCount(h.objects)+" ConfigMaps, after start", before, "no LIST served yet")
	growth := "growth over after start: " + fmtBytes(h.after-h.before)
	if up != nil {
		growth += "; kube-apiserver + etcd: " + fmtBytes(up.after-up.before)
	}
	row(fmtCount(h.objects)+" ConfigMaps, after a JSON and a protobuf LIST", after, growth)
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

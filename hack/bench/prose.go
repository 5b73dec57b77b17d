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
	_ "embed"
	"regexp"
	"strings"
	"text/template"
	"time"
)

// proseSource holds the report's prose: the summary line and the paragraph
// that says what each section measures.
//
//go:embed prose.tmpl
var proseSource string

// prose is prose.tmpl parsed, its line breaks made spaces first.
var prose = template.Must(template.New("prose.tmpl").Funcs(template.FuncMap{
	"bytes":    fmtBytes,
	"count":    fmtCount,
	"counts":   fmtCounts,
	"duration": fmtDuration,
	"join":     strings.Join,
	"and":      joinAnd,
}).Parse(lineBreaks.ReplaceAllString(proseSource, " ")))

// lineBreaks are the line breaks of prose.tmpl with the blanks around them.
var lineBreaks = regexp.MustCompile(`[ \t]*\r?\n[ \t]*`)

// The data of each paragraph of prose.tmpl; report*.go fill them in.

// summaryProse is the "summary" line: what ran, where, and how long.
type summaryProse struct {
	Server     string   // -server as given
	ServerArgs []string // -server-args
	OS, Arch   string
	CPUs       int
	Sections   []string      // that ran, in order
	Starts     int           // start-to-ready samples per data dir; 0: neither starts nor crds ran
	Lists      int           // timed listings per LIST variant; 0: lists, rv0 and crds did not run
	Gzip       bool          // the client accepts gzip
	Elapsed    time.Duration // the whole run, rounded
}

// crdsProse is the "crds" paragraph.
type crdsProse struct {
	CRDs        int     // installed on start
	CRs         int     // custom resources in the section's data dir
	Payload     float64 // bytes of spec.payload per custom resource
	Namespace   string
	Workers     int           // clients that created them
	Populate    time.Duration // creating them
	Limit       int           // of the paged LISTs
	Runs        int           // timed listings per variant
	AllocMetric string
	RouteMetric string // counts the LISTs the watch cache served
	Gzip        bool
	NoCRD       bool // the starts section ran: its empty data dir starts are shown for comparison
}

// paginationProse is the "pagination" paragraph.
type paginationProse struct {
	Objects       int     // ConfigMaps in the section's data dir
	Payload       float64 // bytes of data per ConfigMap
	Namespace     string
	Workers       int           // clients that created them
	Populate      time.Duration // creating them
	Limit         int           // of the paged LISTs and the first pages
	ExactRVWrites int           // updates after the exact-RV LISTs' resourceVersion
	Runs          int           // timed listings per variant
	AllocMetric   string
	Gzip          bool
	HeapMetric    string
	FirstPages    int // issued during the memory measurement
	WriteRate     int // updates per second meanwhile
	// With -upstream: the paged and unpaginated listings ran side by side.
	Upstream         bool
	UpstreamPopulate time.Duration // creating the ConfigMaps through kube-apiserver
	RouteMetric      string        // counts the LISTs miniapiserver's watch cache served
	// UpstreamRouteMetric counts upstream's LISTs by storage.
	UpstreamRouteMetric string
}

// watchProse is the "watch" paragraph.
type watchProse struct {
	Namespace   string
	PerConn     int           // watch streams per HTTP/2 connection
	Events      int           // timed updates per run
	Interval    time.Duration // between the starts of two updates; 0: back to back
	AllocMetric string
	Watchers    []int // the watcher counts
	EtcdSkipped []int // the watcher counts that ran with the watch cache only
	EtcdMax     int   // -etcd-watchers-max
	Upstream    bool  // every count ran on kube-apiserver too
}

// throughputProse is the "throughput" paragraph.
type throughputProse struct {
	Namespace  string
	Writers    int           // concurrent clients updating
	Watchers   int           // that must each get every event
	Updates    int           // per run
	Timeout    time.Duration // for the deliveries after the last update
	Objects    int           // ConfigMaps of the heap measurement
	Payload    float64       // bytes of data per ConfigMap
	OwnDataDir bool          // populated for this section: starts, lists and rv0 did not run
	Workers    int           // clients that created them, then
	Populate   time.Duration // creating them, then
	HeapMetric string
	Upstream   bool // the run with the watch cache ran on kube-apiserver too
	// UpstreamHeap: kube-apiserver's heap per object was measured too.
	UpstreamHeap bool
}

// informersProse is the "informers" paragraph.
type informersProse struct {
	Informers  int     // per round
	Secrets    int     // that they sync
	SecretSize float64 // bytes of data per Secret
	Namespace  string
	Populate   time.Duration // creating the Secrets
	Gzip       bool
	Rounds     int // per variant
	HeapMetric string
	HeapSample time.Duration // sampling period
	// SamplerRuns are the samples that measure what one allocates.
	SamplerRuns int
	Gate        string // client-go's gate that picks the variant
	// RequestMetric counts the Secret LISTs and watches.
	RequestMetric    string
	Upstream         bool          // the rounds ran on kube-apiserver too
	UpstreamPopulate time.Duration // creating the Secrets through it
	Picture          bool          // the heap picture follows the tables
}

// stopsProse is the "stops" paragraph.
type stopsProse struct {
	Watches    int // open at SIGTERM
	Namespace  string
	PerConn    int // watch streams per HTTP/2 connection
	OpenMetric string
	Rounds     int           // per variant
	KillAfter  time.Duration // SIGTERM→SIGKILL
	Upstream   bool          // kube-apiserver stopped with as many watches too
	// UpstreamShutdownTimeout is how long kube-apiserver's HTTP server
	// waits for open requests on shutdown.
	UpstreamShutdownTimeout time.Duration
}

// restartsProse is the "restarts" paragraph.
type restartsProse struct {
	Objects   int // of each watched type
	Namespace string
	Leases    int // written before the restart
	Rounds    int // per variant
	Timeout   time.Duration
	Upstream  bool // kube-apiserver restarted under the same informers too
	// UpstreamShutdownTimeout is how long kube-apiserver's HTTP server
	// waits for open requests on shutdown.
	UpstreamShutdownTimeout time.Duration
}

// rv0UpstreamProse is the "rv0-upstream" paragraph.
type rv0UpstreamProse struct {
	FromLists   bool // the lists section's side-by-side LISTs, reused
	Objects     int
	Runs        int           // timed rounds
	Workers     int           // clients that populated upstream's etcd
	Populate    time.Duration // upstream's
	AllocMetric string
	RouteMetric string // counts the LISTs miniapiserver's watch cache served
	// UpstreamRouteMetric counts upstream's LISTs by storage.
	UpstreamRouteMetric string
	Gzip                bool
}

// crdsUpstreamProse is the "crds-upstream" paragraph.
type crdsUpstreamProse struct {
	CRDs        int
	Setup       time.Duration // creating the CRDs through kube-apiserver until in discovery
	Poll        time.Duration // between two polls of /readyz and of discovery
	CRs         int
	Workers     int
	Populate    time.Duration // creating the custom resources through kube-apiserver
	Runs        int           // timed rounds per LIST variant
	AllocMetric string
	RouteMetric string // counts the LISTs miniapiserver's watch cache served
	// UpstreamRouteMetric counts upstream's LISTs by storage.
	UpstreamRouteMetric string
}

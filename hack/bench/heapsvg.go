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
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// readmeHeapSVG is where -readme puts the informers section's heap
// picture, relative to the README's directory (and so as its link).
const readmeHeapSVG = "bench-informers-heap.svg"

// heapSeries is one line of a heap picture.
type heapSeries struct {
	label  string
	color  string // an SVG colour
	dashed bool
	points []heapPoint
}

// informersHeapSeries are the lines of the informers section's picture:
// per server and mode, the samples of its median round (medianRound).
func informersHeapSeries(res informersResult) []heapSeries {
	const ours, theirs = "#1f5fa8", "#d0541a"
	line := func(server, color string, st informerStats) heapSeries {
		return heapSeries{label: server + ", " + st.mode.name, color: color, dashed: st.mode.name == listMode.name,
			points: st.medianRound().series}
	}
	series := []heapSeries{line("miniapiserver", ours, res.list), line("miniapiserver", ours, res.watchList)}
	if u := res.upstream; u != nil {
		series = append(series, line("kube-apiserver + etcd", theirs, u.list), line("kube-apiserver + etcd", theirs, u.watchList))
	}
	return series
}

// writeInformersHeap writes the informers section's heap picture and sets
// res.heapSVG to the path the report links it by: with -readme,
// readmeHeapSVG next to the README; otherwise a new file in the temporary
// directory (not in the bench's root dir, which is removed when it ends).
func writeInformersHeap(cfg config, res *informersResult) error {
	if len(res.watchList.rounds) == 0 || len(res.list.rounds) == 0 {
		return nil
	}
	var svg bytes.Buffer
	title := fmt.Sprintf("Server heap in use while %d informers sync %d × %s Secrets (median round)",
		cfg.informers, cfg.secrets, fmtBytes(float64(cfg.secretSize)))
	if err := writeHeapSVG(&svg, title, informersHeapSeries(*res)); err != nil {
		return err
	}
	var path, link string
	if cfg.readme != "" {
		path, link = filepath.Join(filepath.Dir(cfg.readme), filepath.FromSlash(readmeHeapSVG)), readmeHeapSVG
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, svg.Bytes(), 0o644); err != nil {
			return err
		}
	} else {
		f, err := os.CreateTemp("", "miniapiserver-bench-informers-heap-*.svg")
		if err != nil {
			return err
		}
		_, err = f.Write(svg.Bytes())
		if err = errors.Join(err, f.Close()); err != nil {
			return fmt.Errorf("writing %s: %w", f.Name(), err)
		}
		path, link = f.Name(), f.Name()
	}
	res.heapSVG = link
	progress("informers: heap picture in %s", path)
	return nil
}

// The heap picture's layout, in SVG user units.
const (
	svgWidth, svgHeight = 860, 440
	plotLeft, plotTop   = 72, 44
	plotRight           = 560 // the legend is to its right
	plotBottom          = 380
	svgTicks            = 6 // about as many ticks per axis
)

// writeHeapSVG draws series as lines of heap in use (MiB) over the seconds
// since the samples' origin, with labelled axes and a legend: one <path>
// per series (whatever its samples), nothing else drawn with <path>.
func writeHeapSVG(w io.Writer, title string, series []heapSeries) error {
	var maxT, maxMiB float64
	for _, s := range series {
		for _, p := range s.points {
			maxT, maxMiB = max(maxT, p.at.Seconds()), max(maxMiB, p.bytes/(1<<20))
		}
	}
	xStep, yStep := niceStep(maxT/svgTicks), niceStep(maxMiB/svgTicks)
	// The axes end at the first step at or past the largest sample (a step
	// past nothing for no samples).
	xMax, yMax := xStep*math.Max(1, math.Ceil(maxT/xStep-1e-9)), yStep*math.Max(1, math.Ceil(maxMiB/yStep-1e-9))
	x := func(sec float64) float64 { return plotLeft + sec/xMax*(plotRight-plotLeft) }
	y := func(mib float64) float64 { return plotBottom - mib/yMax*(plotBottom-plotTop) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" `+
		`font-family="sans-serif" font-size="12">`+"\n", svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", svgWidth, svgHeight)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="14">%s</text>`+"\n", plotLeft, escapeXML(title))
	// Grid lines and tick labels.
	for i := range int(math.Round(yMax/yStep)) + 1 {
		v := float64(i) * yStep
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", plotLeft, y(v), plotRight, y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-6, y(v)+4, fmtTick(v, yStep))
	}
	for i := range int(math.Round(xMax/xStep)) + 1 {
		v := float64(i) * xStep
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x(v), plotTop, x(v), plotBottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(v), plotBottom+16, fmtTick(v, xStep))
	}
	// Axes and their labels.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", plotLeft, plotBottom, plotRight, plotBottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", plotLeft, plotTop, plotLeft, plotBottom)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">seconds since the informers started</text>`+"\n",
		(plotLeft+plotRight)/2, plotBottom+40)
	fmt.Fprintf(&b, `<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">heap in use (MiB)</text>`+"\n",
		(plotTop+plotBottom)/2, (plotTop+plotBottom)/2)
	// The lines, then the legend.
	for _, s := range series {
		var d strings.Builder
		for i, p := range s.points {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f,%.1f ", cmd, x(p.at.Seconds()), y(p.bytes/(1<<20)))
		}
		if len(s.points) == 1 {
			d.WriteString("l0,0") // a dot, with the round line caps
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"%s/>`+"\n",
			strings.TrimSpace(d.String()), escapeXML(s.color), dashArray(s.dashed))
	}
	for i, s := range series {
		ly := plotTop + 8 + 22*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n",
			plotRight+20, ly, plotRight+52, ly, escapeXML(s.color), dashArray(s.dashed))
		label := s.label
		if len(s.points) == 0 {
			label += " (no samples)"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", plotRight+60, ly+4, escapeXML(label))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func dashArray(dashed bool) string {
	if dashed {
		return ` stroke-dasharray="7 5"`
	}
	return ""
}

func escapeXML(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// niceStep is the smallest of 1, 2 and 5 times a power of ten that is at
// least x (1 for x ≤ 0).
func niceStep(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// fmtTick writes a tick value with as many decimals as its step needs.
func fmtTick(v, step float64) string {
	decimals := max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
	return fmt.Sprintf("%.*f", decimals, v)
}

// heapPictureNote is the line under the informers tables that shows the
// picture.
func heapPictureNote(link string, upstream bool) string {
	servers := "miniapiserver"
	if upstream {
		servers = "miniapiserver and kube-apiserver + etcd"
	}
	return fmt.Sprintf("![Server heap in use over time while the informers sync (as sampled: the sampler's scrapes included), %s, LIST and watch-list, median round](%s)",
		servers, link)
}

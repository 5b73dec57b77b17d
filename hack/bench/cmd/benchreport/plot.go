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
	"image/color"
	"regexp"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

var fanoutName = regexp.MustCompile(`^WatchFanout/watchers=(\d+)/cache=on$`)

// plotFanout writes an SVG of the fan-out's p50 and p99 delivery latency
// against the watcher count, for both servers, if the samples have any.
func plotFanout(s *samples, file string) (bool, error) {
	p := plot.New()
	p.Title.Text = "Watch fan-out: delivery latency by watcher count (watch cache on)"
	p.X.Label.Text = "watchers"
	p.Y.Label.Text = "latency (ms)"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	colors := map[string]color.Color{"mini": color.RGBA{B: 200, A: 255}, "upstream": color.RGBA{R: 200, A: 255}}
	any := false
	for _, server := range []string{"mini", "upstream"} {
		for i, unit := range []string{"p50-sec", "p99-sec"} {
			var xys plotter.XYs
			for k := range s.values {
				m := fanoutName.FindStringSubmatch(k.name)
				if m == nil || k.unit != unit {
					continue
				}
				st, ok := s.stat(k.name, unit, server)
				if !ok {
					continue
				}
				n, _ := strconv.Atoi(m[1])
				xys = append(xys, plotter.XY{X: float64(n), Y: st.Center * 1e3})
			}
			if len(xys) == 0 {
				continue
			}
			slices.SortFunc(xys, func(a, b plotter.XY) int { return int(a.X - b.X) })
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return false, err
			}
			line.Color, points.Color = colors[server], colors[server]
			if i == 1 {
				line.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
				points.Shape = draw.TriangleGlyph{}
			}
			p.Add(line, points)
			p.Legend.Add(fmt.Sprintf("%s %s", server, unit[:3]), line, points)
			any = true
		}
	}
	if !any {
		return false, nil
	}
	p.Legend.Top, p.Legend.Left = true, true
	return true, p.Save(6*vg.Inch, 4*vg.Inch, file)
}

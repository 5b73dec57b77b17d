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
	"io"
	"strings"
	"testing"
)

// svgElements decodes an SVG document, failing the test unless it is
// well-formed XML with an <svg> root, and returns its start elements and
// the text of its <text> elements.
func svgElements(t *testing.T, doc []byte) (elements []xml.StartElement, texts []string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var inText bool
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if len(elements) == 0 && (tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("root element is %v, want svg in the SVG namespace", tok.Name)
			}
			elements = append(elements, tok.Copy())
			if tok.Name.Local == "text" {
				inText = true
				text.Reset()
			}
		case xml.CharData:
			if inText {
				text.Write(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "text" {
				inText = false
				texts = append(texts, text.String())
			}
		}
	}
	if len(elements) == 0 {
		t.Fatal("no elements")
	}
	return elements, texts
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestWriteHeapSVG(t *testing.T) {
	mib := func(x float64) float64 { return x * (1 << 20) }
	series := []heapSeries{
		{label: "ours, LIST", color: "#1f5fa8", dashed: true,
			points: []heapPoint{{0, mib(300)}, {ms(500), mib(420)}, {ms(1200), mib(380)}}},
		{label: "ours, watch-list", color: "#1f5fa8",
			points: []heapPoint{{ms(10), mib(301)}, {ms(700), mib(450)}}},
		{label: "theirs & co, <LIST>", color: "#d0541a", dashed: true, points: []heapPoint{{ms(20), mib(510)}}},
		{label: "theirs, watch-list", color: "#d0541a"}, // no samples
	}
	var buf bytes.Buffer
	if err := writeHeapSVG(&buf, `heap "in use" & more`, series); err != nil {
		t.Fatal(err)
	}
	elements, texts := svgElements(t, buf.Bytes())

	var paths []xml.StartElement
	for _, e := range elements {
		if e.Name.Local == "path" {
			paths = append(paths, e)
		}
	}
	if len(paths) != len(series) {
		t.Fatalf("%d <path> elements, want one per series: %d", len(paths), len(series))
	}
	for i, p := range paths {
		d := attr(p, "d")
		if n := strings.Count(d, "M") + strings.Count(d, "L"); n != len(series[i].points) {
			t.Errorf("path %d (%s) has %d points, want %d: %q", i, series[i].label, n, len(series[i].points), d)
		}
		if got := attr(p, "stroke"); got != series[i].color {
			t.Errorf("path %d stroke %q, want %q", i, got, series[i].color)
		}
		if dashed := attr(p, "stroke-dasharray") != ""; dashed != series[i].dashed {
			t.Errorf("path %d dashed %v, want %v", i, dashed, series[i].dashed)
		}
	}

	all := strings.Join(texts, "\n")
	for _, want := range []string{
		`heap "in use" & more`,                // the title, unescaped by the decoder
		"seconds since the informers started", // x axis
		"heap in use (MiB)",                   // y axis
		// The legend.
		"ours, LIST", "ours, watch-list", "theirs & co, <LIST>", "theirs, watch-list (no samples)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q among:\n%s", want, all)
		}
	}
	// Ticks start at 0 and reach the largest sample on both axes: 510 MiB
	// in steps of 100, 1.2 s in steps of 0.2.
	for _, want := range []string{"0", "600", "0.0", "1.2"} {
		if !containsLine(texts, want) {
			t.Errorf("no tick label %q among %q", want, texts)
		}
	}
	if containsLine(texts, "700") || containsLine(texts, "1.4") {
		t.Errorf("a tick past the next step up: %q", texts)
	}
}

func containsLine(texts []string, want string) bool {
	for _, s := range texts {
		if s == want {
			return true
		}
	}
	return false
}

// TestWriteHeapSVGEmpty draws axes for series without samples, and nothing
// for no series.
func TestWriteHeapSVGEmpty(t *testing.T) {
	for _, series := range [][]heapSeries{nil, {{label: "empty", color: "black"}}} {
		var buf bytes.Buffer
		if err := writeHeapSVG(&buf, "empty", series); err != nil {
			t.Fatal(err)
		}
		elements, texts := svgElements(t, buf.Bytes())
		paths := 0
		for _, e := range elements {
			if e.Name.Local == "path" {
				paths++
			}
		}
		if paths != len(series) {
			t.Errorf("%d paths for %d series", paths, len(series))
		}
		if !containsLine(texts, "heap in use (MiB)") || !containsLine(texts, "seconds since the informers started") {
			t.Errorf("axis labels missing from %q", texts)
		}
	}
}

// TestInformersHeapSeries is a line per server and mode, ours only
// without -upstream, each from its round of median peak heap growth.
func TestInformersHeapSeries(t *testing.T) {
	res := informersFixture(0, 16)
	series := informersHeapSeries(res)
	if len(series) != 2 {
		t.Fatalf("%d series without upstream, want 2", len(series))
	}
	r := upstreamInformersReport()
	series = informersHeapSeries(r.informers)
	var labels []string
	for _, s := range series {
		labels = append(labels, s.label)
	}
	want := []string{"miniapiserver, LIST", "miniapiserver, watch-list", "kube-apiserver + etcd, LIST", "kube-apiserver + etcd, watch-list"}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Fatalf("labels %q, want %q", labels, want)
	}
	// The fixture's rounds grow 10 MiB more each: the median is the second.
	if got, want := len(series[0].points), r.informers.list.rounds[1].samples; got != want {
		t.Errorf("LIST line has %d points, want the median round's %d", got, want)
	}
}

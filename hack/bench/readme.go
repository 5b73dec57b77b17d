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
	"errors"
	"fmt"
	"os"
	"strings"
)

// The README's generated part is the lines between these two marker lines;
// -readme replaces them with the report's body (everything below its
// heading). Each marker must be a line of its own, once.
const (
	beginMarker = "<!-- bench:begin -->"
	endMarker   = "<!-- bench:end -->"
)

// updateReadme replaces the generated part of the Markdown file at path
// with body, keeping everything outside it byte for byte. The file is left
// as it was on any error, and not rewritten if nothing changes.
func updateReadme(path, body string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	updated, err := replaceBetweenMarkers(string(doc), body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if updated == string(doc) {
		return nil
	}
	return os.WriteFile(path, []byte(updated), info.Mode().Perm())
}

// checkReadme fails as updateReadme would, without writing.
func checkReadme(path string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if _, err := replaceBetweenMarkers(string(doc), ""); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// replaceBetweenMarkers returns doc with the lines between its begin and
// end marker lines replaced by body, which gets a final newline if it has
// none (and loses any blank lines at its end). The marker lines and
// everything outside them stay as they are.
func replaceBetweenMarkers(doc, body string) (string, error) {
	begin, err := markerLine(doc, beginMarker)
	if err != nil {
		return "", err
	}
	end, err := markerLine(doc, endMarker)
	if err != nil {
		return "", err
	}
	if end.start < begin.start {
		return "", fmt.Errorf("%s (line %d) comes before %s (line %d)", endMarker, end.number, beginMarker, begin.number)
	}
	if body = strings.TrimRight(body, "\n"); body != "" {
		body += "\n"
	}
	return doc[:begin.end] + body + doc[end.start:], nil
}

// marker is where a marker line is in a document.
type marker struct {
	number     int // line number, from 1
	start, end int // byte offsets of the line, its newline included
}

// markerLine finds the one line of doc that is text, blanks around it
// aside.
func markerLine(doc, text string) (marker, error) {
	var found []marker
	start := 0
	for i, line := range strings.SplitAfter(doc, "\n") {
		if strings.TrimSpace(line) == text {
			found = append(found, marker{number: i + 1, start: start, end: start + len(line)})
		}
		start += len(line)
	}
	switch len(found) {
	case 0:
		return marker{}, fmt.Errorf("no %s line", text)
	case 1:
		return found[0], nil
	}
	var lines []string
	for _, m := range found {
		lines = append(lines, fmt.Sprint(m.number))
	}
	return marker{}, errors.New(text + " appears on more than one line: " + strings.Join(lines, ", "))
}

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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceBetweenMarkers(t *testing.T) {
	const (
		begin = beginMarker + "\n"
		end   = endMarker + "\n"
	)
	tests := []struct {
		name    string
		doc     string
		body    string
		want    string
		wantErr string // a substring of the error; "": none
	}{
		{
			name: "replaces between the markers",
			doc:  "# Title\n\nintro\n" + begin + "old table\n| a |\n" + end + "\nafter\n",
			body: "new table\n| b |\n",
			want: "# Title\n\nintro\n" + begin + "new table\n| b |\n" + end + "\nafter\n",
		},
		{
			name: "keeps text outside byte for byte",
			doc:  "  odd  spacing\t\r\nno final newline before? " + beginMarker + " inline, not a marker\n" + begin + "x\n" + end + "tail without newline",
			body: "y\n",
			want: "  odd  spacing\t\r\nno final newline before? " + beginMarker + " inline, not a marker\n" + begin + "y\n" + end + "tail without newline",
		},
		{
			name: "adds the body's final newline and drops its trailing blank lines",
			doc:  begin + "x\n" + end,
			body: "para\n\n| t |\n\n\n",
			want: begin + "para\n\n| t |\n" + end,
		},
		{
			name: "body without a final newline",
			doc:  begin + end,
			body: "one line",
			want: begin + "one line\n" + end,
		},
		{
			name: "empty body empties the part",
			doc:  "a\n" + begin + "x\ny\n" + end + "b\n",
			body: "",
			want: "a\n" + begin + end + "b\n",
		},
		{
			name: "markers with blanks around them and CRLF",
			doc:  "a\r\n  " + beginMarker + " \r\nx\r\n" + endMarker + "\r\nb\r\n",
			body: "y\n",
			want: "a\r\n  " + beginMarker + " \r\ny\n" + endMarker + "\r\nb\r\n",
		},
		{
			name:    "no begin marker",
			doc:     "a\n" + end,
			wantErr: "no " + beginMarker + " line",
		},
		{
			name:    "no end marker",
			doc:     "a\n" + begin + "x\n",
			wantErr: "no " + endMarker + " line",
		},
		{
			name:    "a marker inside a line does not count",
			doc:     "see " + beginMarker + "\n" + end,
			wantErr: "no " + beginMarker + " line",
		},
		{
			name:    "out of order",
			doc:     "a\n" + end + "x\n" + begin + "b\n",
			wantErr: endMarker + " (line 2) comes before " + beginMarker + " (line 4)",
		},
		{
			name:    "two begin markers",
			doc:     begin + "x\n" + begin + "y\n" + end,
			wantErr: beginMarker + " appears on more than one line: 1, 3",
		},
		{
			name:    "two end markers",
			doc:     begin + end + end,
			wantErr: endMarker + " appears on more than one line: 2, 3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := replaceBetweenMarkers(tt.doc, tt.body)
			switch {
			case tt.wantErr != "" && err == nil:
				t.Fatalf("got no error and %q, want an error containing %q", got, tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("got error %q, want one containing %q", err, tt.wantErr)
			case tt.wantErr == "" && err != nil:
				t.Fatalf("got error %v, want none", err)
			case got != tt.want:
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if err == nil {
				again, err := replaceBetweenMarkers(got, tt.body)
				if err != nil || again != got {
					t.Errorf("replacing again: got %q, %v; want it unchanged", again, err)
				}
			}
		})
	}
}

func TestUpdateReadme(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    string // the file afterwards
		wantErr string
	}{
		{
			name: "writes the body",
			doc:  "# T\n" + beginMarker + "\nold\n" + endMarker + "\nrest\n",
			want: "# T\n" + beginMarker + "\nnew\n" + endMarker + "\nrest\n",
		},
		{
			name:    "leaves the file alone on an error, naming it",
			doc:     "# T\n" + endMarker + "\nold\n" + beginMarker + "\n",
			want:    "# T\n" + endMarker + "\nold\n" + beginMarker + "\n",
			wantErr: "README.md: " + endMarker + " (line 2) comes before",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "README.md")
			if err := os.WriteFile(path, []byte(tt.doc), 0o640); err != nil {
				t.Fatal(err)
			}
			err := updateReadme(path, "new\n")
			if tt.wantErr == "" && err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
			}
			if check := checkReadme(path); (check == nil) != (tt.wantErr == "") {
				t.Errorf("checkReadme: got %v, want an error: %t", check, tt.wantErr != "")
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("file: got %q, want %q", got, tt.want)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if mode := info.Mode().Perm(); mode != 0o640 {
				t.Errorf("mode: got %v, want %v", mode, os.FileMode(0o640))
			}
		})
	}
}

func TestUpdateReadmeMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	if err := updateReadme(path, "x\n"); !os.IsNotExist(err) {
		t.Errorf("got %v, want a does-not-exist error", err)
	}
}

// TestRepoReadmeHasMarkers checks that `make bench-readme` can find the
// generated part of the repository's benchmark report, docs/benchmarks.md.
func TestRepoReadmeHasMarkers(t *testing.T) {
	if err := checkReadme(filepath.Join("..", "..", "docs", "benchmarks.md")); err != nil {
		t.Error(err)
	}
}

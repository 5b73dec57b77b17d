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

package controllers

import "testing"

func TestEnabled(t *testing.T) {
	tests := []struct {
		name string
		list []string
		want map[string]bool
	}{
		{name: "none", list: nil, want: map[string]bool{Namespace: false, GarbageCollector: false}},
		{name: "star", list: []string{"*"}, want: map[string]bool{Namespace: true, GarbageCollector: false}},
		{name: "star, garbage collector", list: []string{"garbage-collector", "*"}, want: map[string]bool{Namespace: true, GarbageCollector: true}},
		{name: "first decides", list: []string{"-namespace-controller", "namespace", "*"}, want: map[string]bool{Namespace: false, CSRSigning: true}},
		{name: "short name", list: []string{"-csrsigning", "*"}, want: map[string]bool{CSRSigning: false, ResourceQuota: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, want := range tt.want {
				if got := Enabled(tt.list, name); got != want {
					t.Errorf("Enabled(%q, %s): got %v, want %v", tt.list, name, got, want)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		list []string
		want int
	}{
		{name: "known", list: []string{"*", "-namespace", "garbage-collector-controller", "csrsigning"}, want: 0},
		{name: "unknown", list: []string{"*", "deployment", "-replicaset-controller"}, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Validate(tt.list); len(got) != tt.want {
				t.Errorf("Validate(%q): got %v, want %d errors", tt.list, got, tt.want)
			}
		})
	}
}

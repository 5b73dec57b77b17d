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

package api

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestPodStreamOptionsFromQuery: the query parameters of pods/exec,
// pods/attach, pods/portforward and of the proxies decode as upstream's
// generated conversions decode them (a flag is true unless "0" or
// "false"; ports comma-separated, repeatable, 16-bit; a proxy's first
// path), with upstream's error.
func TestPodStreamOptionsFromQuery(t *testing.T) {
	for _, tc := range []struct {
		name    string
		query   string
		into    runtime.Object
		want    runtime.Object
		wantErr string
	}{
		{"exec as kubectl asks", "command=ls&command=-l&container=app&stderr=true&stdout=true", &corev1.PodExecOptions{},
			&corev1.PodExecOptions{Container: "app", Stdout: true, Stderr: true, Command: []string{"ls", "-l"}}, ""},
		{"exec flags", "stdin=yes&stdout=0&stderr=FALSE&tty=", &corev1.PodExecOptions{}, &corev1.PodExecOptions{Stdin: true, TTY: true}, ""},
		{"exec without command", "stdout=1", &corev1.PodExecOptions{}, &corev1.PodExecOptions{Stdout: true}, ""},
		{"attach", "container=b&stdin=1&tty=true&command=ignored", &corev1.PodAttachOptions{}, &corev1.PodAttachOptions{Container: "b", Stdin: true, TTY: true}, ""},
		{"ports", "ports=80,443&ports=8080", &corev1.PodPortForwardOptions{}, &corev1.PodPortForwardOptions{Ports: []int32{80, 443, 8080}}, ""},
		{"no ports", "", &corev1.PodPortForwardOptions{}, &corev1.PodPortForwardOptions{}, ""},
		{"port not a number", "ports=abc", &corev1.PodPortForwardOptions{}, nil, `cannot convert to []int32: strconv.ParseUint: parsing "abc": invalid syntax`},
		{"port out of range", "ports=70000", &corev1.PodPortForwardOptions{}, nil, `cannot convert to []int32: strconv.ParseUint: parsing "70000": value out of range`},
		{"node proxy", "path=/a/b&path=/c", &corev1.NodeProxyOptions{}, &corev1.NodeProxyOptions{Path: "/a/b"}, ""},
		{"pod proxy", "path=/a/b&path=/c&x=y", &corev1.PodProxyOptions{}, &corev1.PodProxyOptions{Path: "/a/b"}, ""},
		{"pod proxy, no path", "x=y", &corev1.PodProxyOptions{Path: "/stale"}, &corev1.PodProxyOptions{}, ""},
		{"service proxy", "path=/a/b&path=/c", &corev1.ServiceProxyOptions{}, &corev1.ServiceProxyOptions{Path: "/a/b"}, ""},
		{"service proxy, no path", "x=1", &corev1.ServiceProxyOptions{Path: "/stale"}, &corev1.ServiceProxyOptions{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			err = ParameterCodec.DecodeParameters(q, corev1.SchemeGroupVersion, tc.into)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("got error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if diff := cmp.Diff(tc.want, tc.into); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

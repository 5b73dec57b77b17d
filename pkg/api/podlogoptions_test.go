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
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestPodLogOptionsFromQuery: pods/log's query parameters decode as
// upstream's generated conversion decodes them, errors included.
func TestPodLogOptionsFromQuery(t *testing.T) {
	since := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Local())
	for _, tc := range []struct {
		name    string
		query   string
		want    *corev1.PodLogOptions
		wantErr string
	}{
		{"everything", "container=app&follow=true&previous=1&timestamps=yes&insecureSkipTLSVerifyBackend=&sinceSeconds=10&tailLines=5&limitBytes=100&stream=All",
			&corev1.PodLogOptions{Container: "app", Follow: true, Previous: true, Timestamps: true, InsecureSkipTLSVerifyBackend: true,
				SinceSeconds: ptr.To[int64](10), TailLines: ptr.To[int64](5), LimitBytes: ptr.To[int64](100), Stream: ptr.To("All")}, ""},
		{"flags off", "follow=0&previous=False&timestamps=false", &corev1.PodLogOptions{}, ""},
		{"since a time", "sinceTime=2026-01-02T03:04:05Z", &corev1.PodLogOptions{SinceTime: &since}, ""},
		{"since no time", "sinceTime=", &corev1.PodLogOptions{SinceTime: &metav1.Time{}}, ""},
		{"tail not a number", "tailLines=abc", nil, `strconv.ParseInt: parsing "abc": invalid syntax`},
		{"first bad one named", "limitBytes=x&sinceSeconds=y", nil, `strconv.ParseInt: parsing "y": invalid syntax`},
		{"since not a time", "sinceTime=yesterday", nil, `parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got := &corev1.PodLogOptions{}
			err = ParameterCodec.DecodeParameters(q, corev1.SchemeGroupVersion, got)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("got error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

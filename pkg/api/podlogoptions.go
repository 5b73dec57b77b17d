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
	"fmt"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// addPodLogOptionsConversion decodes pods/log's query parameters into
// PodLogOptions (upstream's generated Convert_url_Values_To_v1_PodLogOptions
// lives in k8s.io/kubernetes).
func addPodLogOptionsConversion(s *runtime.Scheme) error {
	return s.AddConversionFunc((*url.Values)(nil), (*corev1.PodLogOptions)(nil), func(a, b any, _ conversion.Scope) error {
		return podLogOptionsFrom(*a.(*url.Values), b.(*corev1.PodLogOptions))
	})
}

func podLogOptionsFrom(q url.Values, o *corev1.PodLogOptions) error {
	var err error
	boolean := func(key string, into *bool) {
		if v, ok := q[key]; ok && err == nil && len(v) > 0 {
			*into, err = strconv.ParseBool(v[0])
			if err != nil {
				err = fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	integer := func(key string, into **int64) {
		if v, ok := q[key]; ok && err == nil && len(v) > 0 {
			var n int64
			if n, err = strconv.ParseInt(v[0], 10, 64); err != nil {
				err = fmt.Errorf("%s: %w", key, err)
				return
			}
			*into = &n
		}
	}
	if v := q["container"]; len(v) > 0 {
		o.Container = v[0]
	}
	if v := q["stream"]; len(v) > 0 {
		o.Stream = &v[0]
	}
	boolean("follow", &o.Follow)
	boolean("previous", &o.Previous)
	boolean("timestamps", &o.Timestamps)
	boolean("insecureSkipTLSVerifyBackend", &o.InsecureSkipTLSVerifyBackend)
	integer("sinceSeconds", &o.SinceSeconds)
	integer("tailLines", &o.TailLines)
	integer("limitBytes", &o.LimitBytes)
	if v := q["sinceTime"]; len(v) > 0 && err == nil {
		t, parseErr := time.Parse(time.RFC3339, v[0])
		if parseErr != nil {
			return fmt.Errorf("sinceTime: %w", parseErr)
		}
		o.SinceTime = &metav1.Time{Time: t}
	}
	return err
}

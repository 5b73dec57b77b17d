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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// addPodLogOptionsConversion decodes pods/log's query parameters into
// PodLogOptions as upstream's generated
// Convert_url_Values_To_v1_PodLogOptions (k8s.io/kubernetes) does: a flag
// is true unless "0" or "false", a number or time that does not parse is
// the parser's error as it is.
func addPodLogOptionsConversion(s *runtime.Scheme) error {
	return s.AddConversionFunc((*url.Values)(nil), (*corev1.PodLogOptions)(nil), func(a, b any, _ conversion.Scope) error {
		return podLogOptionsFrom(*a.(*url.Values), b.(*corev1.PodLogOptions))
	})
}

// podLogOptionsFrom reads q's parameters in upstream's order, so that the
// first bad one is the one upstream names.
func podLogOptionsFrom(q url.Values, o *corev1.PodLogOptions) error {
	o.Container = first(q, "container")
	boolFrom(q, "follow", &o.Follow)
	boolFrom(q, "previous", &o.Previous)
	if err := int64From(q, "sinceSeconds", &o.SinceSeconds); err != nil {
		return err
	}
	if v := q["sinceTime"]; len(v) > 0 {
		if err := metav1.Convert_Slice_string_To_Pointer_v1_Time(&v, &o.SinceTime, nil); err != nil {
			return err
		}
	}
	boolFrom(q, "timestamps", &o.Timestamps)
	if err := int64From(q, "tailLines", &o.TailLines); err != nil {
		return err
	}
	if err := int64From(q, "limitBytes", &o.LimitBytes); err != nil {
		return err
	}
	boolFrom(q, "insecureSkipTLSVerifyBackend", &o.InsecureSkipTLSVerifyBackend)
	if v := q["stream"]; len(v) > 0 {
		o.Stream = &v[0]
	}
	return nil
}

// int64From reads key of q as runtime.Convert_Slice_string_To_Pointer_int64.
func int64From(q url.Values, key string, into **int64) error {
	v := q[key]
	return runtime.Convert_Slice_string_To_Pointer_int64(&v, into, nil)
}

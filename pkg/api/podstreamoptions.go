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

// addPodStreamOptionsConversions decodes the query parameters of
// pods/exec, pods/attach, pods/portforward, and nodes/proxy, pods/proxy and
// services/proxy into their options, as upstream's generated
// Convert_url_Values_To_v1_PodExecOptions, _PodAttachOptions,
// _PodPortForwardOptions, _NodeProxyOptions, _PodProxyOptions and
// _ServiceProxyOptions
// (k8s.io/kubernetes pkg/apis/core/v1) do: a flag is true unless absent, "0" or "false";
// ports are comma-separated and may be repeated.
func addPodStreamOptionsConversions(s *runtime.Scheme) error {
	for _, c := range []struct {
		out     any
		convert func(url.Values, any) error
	}{
		{(*corev1.PodExecOptions)(nil), func(q url.Values, out any) error { return podExecOptionsFrom(q, out.(*corev1.PodExecOptions)) }},
		{(*corev1.PodAttachOptions)(nil), func(q url.Values, out any) error { return podAttachOptionsFrom(q, out.(*corev1.PodAttachOptions)) }},
		{(*corev1.PodPortForwardOptions)(nil), func(q url.Values, out any) error {
			return podPortForwardOptionsFrom(q, out.(*corev1.PodPortForwardOptions))
		}},
		{(*corev1.NodeProxyOptions)(nil), func(q url.Values, out any) error { out.(*corev1.NodeProxyOptions).Path = first(q, "path"); return nil }},
		{(*corev1.PodProxyOptions)(nil), func(q url.Values, out any) error { out.(*corev1.PodProxyOptions).Path = first(q, "path"); return nil }},
		{(*corev1.ServiceProxyOptions)(nil), func(q url.Values, out any) error {
			out.(*corev1.ServiceProxyOptions).Path = first(q, "path")
			return nil
		}},
	} {
		if err := s.AddConversionFunc((*url.Values)(nil), c.out, func(a, b any, _ conversion.Scope) error {
			return c.convert(*a.(*url.Values), b)
		}); err != nil {
			return err
		}
	}
	return nil
}

func podExecOptionsFrom(q url.Values, o *corev1.PodExecOptions) error {
	streamFlagsFrom(q, &o.Stdin, &o.Stdout, &o.Stderr, &o.TTY)
	o.Container = first(q, "container")
	o.Command = nil
	if v := q["command"]; len(v) > 0 {
		o.Command = v
	}
	return nil
}

func podAttachOptionsFrom(q url.Values, o *corev1.PodAttachOptions) error {
	streamFlagsFrom(q, &o.Stdin, &o.Stdout, &o.Stderr, &o.TTY)
	o.Container = first(q, "container")
	return nil
}

func podPortForwardOptionsFrom(q url.Values, o *corev1.PodPortForwardOptions) error {
	o.Ports = nil
	if v := q["ports"]; len(v) > 0 {
		return metav1.Convert_Slice_string_To_Slice_int32(&v, &o.Ports, nil)
	}
	return nil
}

// streamFlagsFrom reads stdin, stdout, stderr and tty (boolFrom).
func streamFlagsFrom(q url.Values, stdin, stdout, stderr, tty *bool) {
	for key, into := range map[string]*bool{"stdin": stdin, "stdout": stdout, "stderr": stderr, "tty": tty} {
		boolFrom(q, key, into)
	}
}

// boolFrom reads key of q as upstream's runtime.Convert_Slice_string_To_bool:
// absent, "0" or "false" (in any case) is false, anything else true.
func boolFrom(q url.Values, key string, into *bool) {
	v := q[key]
	_ = runtime.Convert_Slice_string_To_bool(&v, into, nil) // never fails
}

// first is the first value of key in q, or "".
func first(q url.Values, key string) string {
	if v := q[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

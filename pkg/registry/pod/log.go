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

package pod

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrest "k8s.io/apiserver/pkg/registry/generic/rest"
	"k8s.io/apiserver/pkg/registry/rest"
)

// LogREST is pods/log, upstream's (k8s.io/kubernetes
// pkg/registry/core/pod/rest/log.go and LogLocation): a container's log,
// streamed from the kubelet endpoint its pod's node reports; an empty
// answer for a pod on no node.
type LogREST struct {
	// Pods reads the pod.
	Pods rest.Getter
	// Kubelets finds the pod's kubelet and carries the request to it.
	Kubelets *Kubelets
}

var (
	_ rest.GetterWithOptions = (*LogREST)(nil)
	_ rest.StorageMetadata   = (*LogREST)(nil)
)

func (r *LogREST) New() runtime.Object { return &corev1.Pod{} }
func (r *LogREST) Destroy()            {} // the pods' and nodes' stores own their storage

// ProducesMIMETypes and ProducesObject are upstream's: text.
func (r *LogREST) ProducesMIMETypes(string) []string { return []string{"text/plain"} }
func (r *LogREST) ProducesObject(string) any         { return "" }

// NewGetOptions implements rest.GetterWithOptions.
func (r *LogREST) NewGetOptions() (runtime.Object, bool, string) {
	return &corev1.PodLogOptions{}, false, ""
}

// OverrideMetricsVerb counts pods/log GETs as CONNECT, as upstream.
func (r *LogREST) OverrideMetricsVerb(verb string) string {
	if verb == "GET" {
		return "CONNECT"
	}
	return verb
}

// Get streams the log of the pod name's container as opts says.
func (r *LogREST) Get(ctx context.Context, name string, opts runtime.Object) (runtime.Object, error) {
	o, ok := opts.(*corev1.PodLogOptions)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %#v", opts)
	}
	if errs := validateLogOptions(o); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "PodLogOptions"}, name, errs)
	}
	pod, err := getPod(ctx, r.Pods, name)
	if err != nil {
		return nil, err
	}
	container, err := validateContainer(o.Container, pod)
	if err != nil {
		return nil, err
	}
	if pod.Spec.NodeName == "" { // not scheduled: an empty log
		return &genericrest.LocationStreamer{}, nil
	}
	k, err := r.Kubelets.kubelet(ctx, pod.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	transport := r.Kubelets.transport
	if o.InsecureSkipTLSVerifyBackend {
		transport = r.Kubelets.insecure
	}
	return &genericrest.LocationStreamer{
		Location: &url.URL{Scheme: "https", Host: k.host, Path: fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container),
			RawQuery: logQuery(o).Encode()},
		Transport:       transport,
		ContentType:     "text/plain",
		Flush:           o.Follow,
		ResponseChecker: genericrest.NewGenericHttpResponseChecker(schema.GroupResource{Resource: "pods/log"}, name),
		RedirectChecker: genericrest.PreventRedirects,
	}, nil
}

// logQuery is what the kubelet is asked for, as upstream's LogLocation.
func logQuery(o *corev1.PodLogOptions) url.Values {
	q := url.Values{}
	if o.Follow {
		q.Add("follow", "true")
	}
	if o.Previous {
		q.Add("previous", "true")
	}
	if o.Timestamps {
		q.Add("timestamps", "true")
	}
	if o.SinceSeconds != nil {
		q.Add("sinceSeconds", strconv.FormatInt(*o.SinceSeconds, 10))
	}
	if o.SinceTime != nil {
		q.Add("sinceTime", o.SinceTime.Format(time.RFC3339))
	}
	if o.TailLines != nil {
		q.Add("tailLines", strconv.FormatInt(*o.TailLines, 10))
	}
	if o.LimitBytes != nil {
		q.Add("limitBytes", strconv.FormatInt(*o.LimitBytes, 10))
	}
	return q
}

// validateLogOptions is upstream's ValidatePodLogOptions with
// PodLogsQuerySplitStreams off (alpha in 1.37).
func validateLogOptions(o *corev1.PodLogOptions) field.ErrorList {
	var errs field.ErrorList
	if o.TailLines != nil && *o.TailLines < 0 {
		errs = append(errs, field.Invalid(field.NewPath("tailLines"), *o.TailLines, "must be greater than or equal to 0"))
	}
	if o.LimitBytes != nil && *o.LimitBytes < 1 {
		errs = append(errs, field.Invalid(field.NewPath("limitBytes"), *o.LimitBytes, "must be greater than 0"))
	}
	switch {
	case o.SinceSeconds != nil && o.SinceTime != nil:
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	case o.SinceSeconds != nil && *o.SinceSeconds < 1:
		errs = append(errs, field.Invalid(field.NewPath("sinceSeconds"), *o.SinceSeconds, "must be greater than 0"))
	}
	if o.Stream != nil {
		errs = append(errs, field.Forbidden(field.NewPath("stream"), "may not be specified"))
	}
	return errs
}

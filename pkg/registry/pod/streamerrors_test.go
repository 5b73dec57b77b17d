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
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
)

// TestStreamErrors: exec, attach and port forwarding answer as upstream
// when the pod, its container, its node or the node's address is
// missing; port forwarding names no container.
func TestStreamErrors(t *testing.T) {
	kubelet := newStandIn(t)
	s := newStreams(t, kubelet)
	const (
		noPod        = `pods "nosuch" not found`
		noNode       = `pods "ghost" not found` // upstream's node store names the request's resource
		noHost       = "pod pending does not have a host assigned"
		noAddress    = "no preferred addresses found; known addresses: []"
		choose       = "a container name must be specified for pod two, choose one of: [init a b]"
		notValid     = "container nope is not valid for pod web"
		noContainers = "a container name must be specified for pod empty"
	)
	exec := func(container string) runtime.Object {
		return &corev1.PodExecOptions{Container: container, Command: []string{"ls"}}
	}
	attach := func(container string) runtime.Object {
		return &corev1.PodAttachOptions{Container: container, Stdout: true}
	}
	for _, tc := range []struct {
		name, pod string
		rest      rest.Connecter
		opts      runtime.Object
		code      int32 // 0: not an API status (upstream's 500)
		want      string
	}{
		{"exec in no pod", "nosuch", &ExecREST{s}, exec(""), http.StatusNotFound, noPod},
		{"exec choosing no container", "two", &ExecREST{s}, exec(""), http.StatusBadRequest, choose},
		{"exec in a pod with no containers", "empty", &ExecREST{s}, exec(""), http.StatusBadRequest, noContainers},
		{"exec in no such container", "web", &ExecREST{s}, exec("nope"), http.StatusBadRequest, notValid},
		{"exec in a pod on no node", "pending", &ExecREST{s}, exec(""), http.StatusBadRequest, noHost},
		{"exec in a pod on no such node", "lost", &ExecREST{s}, exec(""), http.StatusNotFound, noNode},
		{"exec on a node with no address", "stray", &ExecREST{s}, exec(""), 0, noAddress},
		{"attach to no pod", "nosuch", &AttachREST{s}, attach(""), http.StatusNotFound, noPod},
		{"attach choosing no container", "two", &AttachREST{s}, attach(""), http.StatusBadRequest, choose},
		{"attach to no such container", "web", &AttachREST{s}, attach("nope"), http.StatusBadRequest, notValid},
		{"attach to a pod on no node", "pending", &AttachREST{s}, attach("app"), http.StatusBadRequest, noHost},
		{"attach to a pod on no such node", "lost", &AttachREST{s}, attach(""), http.StatusNotFound, noNode},
		{"attach on a node with no address", "stray", &AttachREST{s}, attach(""), 0, noAddress},
		{"forward to no pod", "nosuch", &PortForwardREST{s}, &corev1.PodPortForwardOptions{}, http.StatusNotFound, noPod},
		{"forward to a pod on no node", "pending", &PortForwardREST{s}, &corev1.PodPortForwardOptions{Ports: []int32{80}}, http.StatusBadRequest, noHost},
		{"forward to a pod on no such node", "lost", &PortForwardREST{s}, &corev1.PodPortForwardOptions{}, http.StatusNotFound, noNode},
		{"forward on a node with no address", "stray", &PortForwardREST{s}, &corev1.PodPortForwardOptions{}, 0, noAddress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := tc.rest.Connect(requestContext(t.Context(), "create", "exec", tc.pod), tc.pod, tc.opts, responder{})
			if err == nil {
				t.Fatalf("got a %T, want error %q", h, tc.want)
			}
			var code int32
			if status, ok := err.(apierrors.APIStatus); ok {
				code = status.Status().Code
			}
			if code != tc.code || err.Error() != tc.want {
				t.Errorf("got %d %q, want %d %q", code, err, tc.code, tc.want)
			}
		})
	}
	if got := kubelet.takeAsked(); len(got) != 0 {
		t.Errorf("the kubelet was asked %q, want nothing", got)
	}
}

// TestStreamOptionsType: options of another type are refused, as
// upstream refuses them.
func TestStreamOptionsType(t *testing.T) {
	s := newStreams(t, newStandIn(t))
	ctx := requestContext(t.Context(), "create", "exec", "web")
	for _, c := range []rest.Connecter{&ExecREST{s}, &AttachREST{s}, &PortForwardREST{s}} {
		if _, err := c.Connect(ctx, "web", &corev1.PodLogOptions{}, responder{}); err == nil {
			t.Errorf("%T: got no error, want one for PodLogOptions", c)
		}
	}
}

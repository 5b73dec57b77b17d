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
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
)

// The kubelet URLs of a pod's streams, as upstream's ExecLocation,
// AttachLocation and PortForwardLocation (k8s.io/kubernetes
// pkg/registry/core/pod/strategy.go) build them.

// streamLocation is the kubelet URL of path (exec or attach) of the
// container of pod name, with the query q: the pod's node must be set.
func streamLocation(ctx context.Context, pods rest.Getter, kubelets *Kubelets, name, container, path string, q url.Values) (*url.URL, kubelet, error) {
	pod, err := getPod(ctx, pods, name)
	if err != nil {
		return nil, kubelet{}, err
	}
	if container, err = validateContainer(container, pod); err != nil {
		return nil, kubelet{}, err
	}
	return nodeLocation(ctx, kubelets, pod, fmt.Sprintf("/%s/%s/%s/%s", path, pod.Namespace, pod.Name, container), q)
}

// portForwardLocation is the kubelet URL of the port forwarding of pod
// name to ports (any container's).
func portForwardLocation(ctx context.Context, pods rest.Getter, kubelets *Kubelets, name string, ports []int32) (*url.URL, kubelet, error) {
	pod, err := getPod(ctx, pods, name)
	if err != nil {
		return nil, kubelet{}, err
	}
	q := url.Values{}
	if len(ports) > 0 {
		s := make([]string, len(ports))
		for i, p := range ports {
			s[i] = strconv.FormatInt(int64(p), 10)
		}
		q.Add(corev1.PortHeader, strings.Join(s, ","))
	}
	return nodeLocation(ctx, kubelets, pod, fmt.Sprintf("/portForward/%s/%s", pod.Namespace, pod.Name), q)
}

// nodeLocation is path?q at the kubelet of pod's node.
func nodeLocation(ctx context.Context, kubelets *Kubelets, pod *corev1.Pod, path string, q url.Values) (*url.URL, kubelet, error) {
	if pod.Spec.NodeName == "" {
		return nil, kubelet{}, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	k, err := kubelets.kubelet(ctx, pod.Spec.NodeName)
	if err != nil {
		return nil, kubelet{}, err
	}
	return &url.URL{Scheme: "https", Host: k.host, Path: path, RawQuery: q.Encode()}, k, nil
}

// streamQuery is what the kubelet is asked for: the streams as upstream's
// streamParams names them ("input", "output", "error", "tty"), then the
// command's words.
func streamQuery(stdin, stdout, stderr, tty bool, command []string) url.Values {
	q := url.Values{}
	for _, f := range []struct {
		on  bool
		key string
	}{{stdin, corev1.ExecStdinParam}, {stdout, corev1.ExecStdoutParam}, {stderr, corev1.ExecStderrParam}, {tty, corev1.ExecTTYParam}} {
		if f.on {
			q.Add(f.key, "1")
		}
	}
	for _, c := range command {
		q.Add("command", c)
	}
	return q
}

// getPod reads pod name.
func getPod(ctx context.Context, pods rest.Getter, name string) (*corev1.Pod, error) {
	obj, err := pods.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("unexpected object type: %#v", obj)
	}
	return pod, nil
}

// validateContainer returns the container a log or stream is of: the one
// named, which the pod must have, or the pod's only container; upstream's
// messages otherwise.
func validateContainer(name string, pod *corev1.Pod) (string, error) {
	var names []string // init, regular, then ephemeral, as upstream visits them
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	if name != "" {
		for _, n := range names {
			if n == name {
				return name, nil
			}
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
	}
	switch len(pod.Spec.Containers) {
	case 1:
		return pod.Spec.Containers[0].Name, nil
	case 0:
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", pod.Name, names))
}

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

// Package podupdate is what kube-apiserver's PodResizeValidator and
// NodeDeclaredFeatureValidator admission plugins share, as upstream writes
// it twice (k8s.io/kubernetes plugin/pkg/admission/podresize and
// nodedeclaredfeatures): the pods updates they check, those of a pod on a
// node that change its generation, and the node lister they check them
// against.
package podupdate

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// Nodes is a plugin's admission handler and node lister; a plugin embeds
// it, for its informer and readiness.
type Nodes struct {
	*admission.Handler
	plugin string
	lister corelisters.NodeLister
}

// NewNodes returns the Nodes of the plugin named plugin, which handles ops.
func NewNodes(plugin string, ops ...admission.Operation) Nodes {
	return Nodes{Handler: admission.NewHandler(ops...), plugin: plugin}
}

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (n *Nodes) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	i := f.Core().V1().Nodes()
	n.lister = i.Lister()
	n.SetReadyFunc(i.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (n *Nodes) ValidateInitialization() error {
	if n.lister == nil {
		return fmt.Errorf("missing node lister for %s", n.plugin)
	}
	return nil
}

// Update returns the pod and old pod of a, a pods update, if the update
// is one to check: its pod is on a node, and it changed the pod's
// generation; otherwise nil pods. Objects that are not pods are upstream's
// 400, a check before the node lister has synced its 403.
func (n *Nodes) Update(a admission.Attributes) (pod, old *corev1.Pod, err error) {
	pod, ok := a.GetObject().(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("expected a pod but got a %T", a.GetObject()))
	}
	if pod.Spec.NodeName == "" {
		return nil, nil, nil
	}
	old, ok = a.GetOldObject().(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("expected an old pod but got a %T", a.GetOldObject()))
	}
	if old.Generation == pod.Generation {
		return nil, nil, nil
	}
	if !n.WaitForReady() {
		return nil, nil, admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	return pod, old, nil
}

// Node returns pod's node, or upstream's 403 for a of a node that is not
// there.
func (n *Nodes) Node(a admission.Attributes, pod *corev1.Pod) (*corev1.Node, error) {
	node, err := n.lister.Get(pod.Spec.NodeName)
	switch {
	case apierrors.IsNotFound(err):
		return nil, admission.NewForbidden(a, fmt.Errorf("node %q not found", pod.Spec.NodeName))
	case err != nil:
		return nil, admission.NewForbidden(a, fmt.Errorf("failed to get node %q: %w", pod.Spec.NodeName, err))
	}
	return node, nil
}

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

package podtopologylabels

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// PluginName is upstream's.
const PluginName = "PodTopologyLabels"

// topologyLabels are the node labels copied, upstream's default.
var topologyLabels = []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion}

// Register registers the plugin in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin copies a node's topology labels to the pods put on it.
type Plugin struct {
	*admission.Handler
	nodes corelisters.NodeLister
}

var (
	_ admission.MutationInterface                  = (*Plugin)(nil)
	_ admission.InitializationValidator            = (*Plugin)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// New returns the plugin; it needs a node lister.
func New() *Plugin { return &Plugin{Handler: admission.NewHandler(admission.Create)} }

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	i := f.Core().V1().Nodes()
	p.nodes = i.Lister()
	p.SetReadyFunc(i.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.nodes == nil {
		return errors.New("nodeLister not set")
	}
	return nil
}

// Admit adds the node's topology labels to a pod created with a node, or
// to a binding of a pod to a node (which the binding copies to the pod).
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("pods") {
		return nil
	}
	var node string
	var labels *map[string]string
	switch a.GetSubresource() {
	case "":
		pod, ok := a.GetObject().(*corev1.Pod)
		if !ok {
			return fmt.Errorf("expected Pod but got %T", a.GetObject())
		}
		node, labels = pod.Spec.NodeName, &pod.Labels
	case "binding":
		binding, ok := a.GetObject().(*corev1.Binding)
		if !ok {
			return fmt.Errorf("expected Binding but got %s", a.GetKind().Kind)
		}
		if binding.Target.Kind != "Node" {
			return nil
		}
		node, labels = binding.Target.Name, &binding.Labels
	default:
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	if node == "" {
		return nil
	}
	copied, err := p.labelsOf(node)
	if err != nil || len(copied) == 0 {
		return err
	}
	if *labels == nil {
		*labels = map[string]string{}
	}
	maps.Copy(*labels, copied)
	return nil
}

// labelsOf returns node's topology labels (none if there is no node).
func (p *Plugin) labelsOf(name string) (map[string]string, error) {
	node, err := p.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	for _, k := range topologyLabels {
		if v, ok := node.Labels[k]; ok {
			labels[k] = v
		}
	}
	return labels, nil
}

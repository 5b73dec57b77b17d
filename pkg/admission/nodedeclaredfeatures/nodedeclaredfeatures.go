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

package nodedeclaredfeatures

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	baseversion "k8s.io/component-base/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
)

// PluginName is upstream's.
const PluginName = "NodeDeclaredFeatureValidator"

// Register registers the plugin in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin checks a pod's update against the features its node declares.
type Plugin struct {
	*admission.Handler
	nodes corelisters.NodeLister
	// version is the version the requirements are inferred for: this
	// server's minor, as upstream's is its binary's.
	version *version.Version
}

var (
	_ admission.ValidationInterface                = (*Plugin)(nil)
	_ admission.InitializationValidator            = (*Plugin)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// New returns the plugin; it needs a node lister.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update),
		version: version.MustParse(baseversion.DefaultKubeBinaryVersion)}
}

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	i := f.Core().V1().Nodes()
	p.nodes = i.Lister()
	p.SetReadyFunc(i.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.nodes == nil {
		return fmt.Errorf("missing node lister for %s", PluginName)
	}
	return nil
}

// Validate refuses an update (or resize) of a pod on a node, one that
// changed its generation, if it needs features the node does not declare.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetOperation() != admission.Update {
		return nil
	}
	if sub := a.GetSubresource(); sub != "" && sub != "resize" {
		return nil
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected a pod but got a %T", a.GetObject()))
	}
	if pod.Spec.NodeName == "" {
		return nil
	}
	old, ok := a.GetOldObject().(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected an old pod but got a %T", a.GetOldObject()))
	}
	if old.Generation == pod.Generation {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	framework := ndf.DefaultFramework
	reqs, err := framework.InferForPodUpdate(&ndf.PodInfo{Spec: &old.Spec, Status: &old.Status}, &ndf.PodInfo{Spec: &pod.Spec, Status: &pod.Status}, p.version)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to infer pod capability requirements: %w", err))
	}
	if reqs.IsEmpty() {
		return nil
	}
	node, err := p.nodes.Get(pod.Spec.NodeName)
	switch {
	case apierrors.IsNotFound(err):
		return admission.NewForbidden(a, fmt.Errorf("node %q not found", pod.Spec.NodeName))
	case err != nil:
		return admission.NewForbidden(a, fmt.Errorf("failed to get node %q: %w", pod.Spec.NodeName, err))
	}
	result, err := framework.MatchNode(reqs, node)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to match pod requirements against node %q: %w", node.Name, err))
	}
	if !result.IsMatch {
		return admission.NewForbidden(a, fmt.Errorf("pod update requires features %s which are not available on node %q", strings.Join(result.UnsatisfiedRequirements, ", "), node.Name))
	}
	return nil
}

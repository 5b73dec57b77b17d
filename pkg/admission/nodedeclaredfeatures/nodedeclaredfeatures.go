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
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	baseversion "k8s.io/component-base/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/miniapiserver/miniapiserver/pkg/admission/internal/podupdate"
)

// PluginName is upstream's.
const PluginName = "NodeDeclaredFeatureValidator"

// Register registers the plugin in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin checks a pod's update against the features its node declares.
type Plugin struct {
	podupdate.Nodes
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
	return &Plugin{Nodes: podupdate.NewNodes(PluginName, admission.Create, admission.Update),
		version: version.MustParse(baseversion.DefaultKubeBinaryVersion)}
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
	pod, old, err := p.Update(a)
	if pod == nil {
		return err
	}
	framework := ndf.DefaultFramework
	reqs, err := framework.InferForPodUpdate(&ndf.PodInfo{Spec: &old.Spec, Status: &old.Status}, &ndf.PodInfo{Spec: &pod.Spec, Status: &pod.Status}, p.version)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to infer pod capability requirements: %w", err))
	}
	if reqs.IsEmpty() {
		return nil
	}
	node, err := p.Node(a, pod)
	if err != nil {
		return err
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

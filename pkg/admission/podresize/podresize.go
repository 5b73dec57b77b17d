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

package podresize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/component-helpers/resource"

	"github.com/miniapiserver/miniapiserver/pkg/admission/internal/podupdate"
)

// PluginName is upstream's.
const PluginName = "PodResizeValidator"

// The causes upstream's refusals carry.
const (
	ReasonNodeCapacity        metav1.CauseType = "NodeCapacity"
	ReasonUnsupportedPlatform metav1.CauseType = "UnsupportedPlatform"
)

// Register registers the plugin in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin checks a resize against the pod's node.
type Plugin struct {
	podupdate.Nodes
}

var (
	_ admission.ValidationInterface                = (*Plugin)(nil)
	_ admission.InitializationValidator            = (*Plugin)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// New returns the plugin; it needs a node lister.
func New() *Plugin { return &Plugin{Nodes: podupdate.NewNodes(PluginName, admission.Update)} }

// Validate refuses a resize (one that changed the pod's generation) of a
// pod on a node that is not Linux, or that cannot hold its new requests.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetOperation() != admission.Update || a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "resize" {
		return nil
	}
	pod, _, err := p.Update(a)
	if pod == nil {
		return err
	}
	node, err := p.Node(a, pod)
	if err != nil {
		return err
	}
	if os, ok := node.Labels[corev1.LabelOSStable]; ok && os != "linux" {
		return refused(a, fmt.Errorf("pod resize is only supported on linux nodes, node %q is %q", node.Name, os), ReasonUnsupportedPlatform)
	}
	if err := withinAllocatable(pod, node.Status.Allocatable); err != nil {
		return refused(a, err, ReasonNodeCapacity)
	}
	return nil
}

// refused is upstream's resizeValidationError: a 403 with reason among
// its causes.
func refused(a admission.Attributes, err error, reason metav1.CauseType) error {
	forbidden := admission.NewForbidden(a, err)
	var status *apierrors.StatusError
	if errors.As(forbidden, &status) {
		status.ErrStatus.Details.Causes = append(status.ErrStatus.Details.Causes, metav1.StatusCause{Type: reason})
		return status
	}
	return forbidden
}

// withinAllocatable is upstream's validateRequestsWithinAllocatable.
func withinAllocatable(pod *corev1.Pod, allocatable corev1.ResourceList) error {
	requests := resource.PodRequests(pod, resource.PodResourcesOptions{})
	cpu, memory := requests[corev1.ResourceCPU], requests[corev1.ResourceMemory]
	var msg []string
	if cpu.Cmp(*allocatable.Cpu()) > 0 {
		msg = append(msg, fmt.Sprintf("cpu, requested: %d, allocatable: %d", cpu.MilliValue(), allocatable.Cpu().MilliValue()))
	}
	if memory.Cmp(*allocatable.Memory()) > 0 {
		msg = append(msg, fmt.Sprintf("memory, requested: %d, allocatable: %d", memory.Value(), allocatable.Memory().Value()))
	}
	if len(msg) > 0 {
		return fmt.Errorf("node didn't have enough allocatable resources: %s", strings.Join(msg, "; "))
	}
	return nil
}

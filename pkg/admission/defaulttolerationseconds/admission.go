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

package defaulttolerationseconds

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"
)

// PluginName is the plugin's name, as upstream's.
const PluginName = "DefaultTolerationSeconds"

// DefaultSeconds is how long a pod tolerates each taint unless set.
const DefaultSeconds = 300

// Register registers the plugin in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin adds the default tolerations. Its seconds are DefaultSeconds
// unless SetDefaultTolerationSeconds sets them.
type Plugin struct {
	*admission.Handler
	notReady, unreachable int64
}

var _ admission.MutationInterface = (*Plugin)(nil)

// New returns the plugin with the default seconds.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), notReady: DefaultSeconds, unreachable: DefaultSeconds}
}

// SetDefaultTolerationSeconds sets how long pods tolerate a node not
// ready and a node unreachable.
func (p *Plugin) SetDefaultTolerationSeconds(notReady, unreachable int64) {
	p.notReady, p.unreachable = notReady, unreachable
}

// Admit adds to a Pod the tolerations it lacks, as upstream's: a
// toleration with an empty key or effect counts for either taint.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "" {
		return nil
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected *api.Pod but got %T", a.GetObject()))
	}
	tolerates := func(key string) bool {
		for _, t := range pod.Spec.Tolerations {
			if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") {
				return true
			}
		}
		return false
	}
	notReady, unreachable := tolerates(corev1.TaintNodeNotReady), tolerates(corev1.TaintNodeUnreachable)
	if !notReady {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeNotReady, p.notReady))
	}
	if !unreachable {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeUnreachable, p.unreachable))
	}
	return nil
}

func toleration(key string, seconds int64) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds}
}

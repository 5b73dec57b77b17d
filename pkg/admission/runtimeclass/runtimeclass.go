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

package runtimeclass

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	nodelisters "k8s.io/client-go/listers/node/v1"
)

// PluginName is the plugin's name, as upstream's.
const PluginName = "RuntimeClass"

// Register registers the plugin in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin applies pods' RuntimeClasses, from a lister, else (an informer
// that lags) a live lookup.
type Plugin struct {
	*admission.Handler
	lister nodelisters.RuntimeClassLister
	client kubernetes.Interface
}

var (
	_ admission.MutationInterface                  = (*Plugin)(nil)
	_ admission.ValidationInterface                = (*Plugin)(nil)
	_ admission.InitializationValidator            = (*Plugin)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
	_ initializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
)

// New returns the plugin; it needs a lister and a client.
func New() *Plugin { return &Plugin{Handler: admission.NewHandler(admission.Create)} }

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	i := f.Node().V1().RuntimeClasses()
	p.lister = i.Lister()
	p.SetReadyFunc(i.Informer().HasSynced)
}

// SetExternalKubeClientSet implements initializer.WantsExternalKubeClientSet.
func (p *Plugin) SetExternalKubeClientSet(c kubernetes.Interface) { p.client = c }

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.lister == nil {
		return fmt.Errorf("missing RuntimeClass lister")
	}
	if p.client == nil {
		return fmt.Errorf("missing RuntimeClass client")
	}
	return nil
}

var (
	errOverheadMismatch = fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
	errOverheadUnset    = fmt.Errorf("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
)

// Admit sets a created pod's overhead, node selector and tolerations from its class.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, class, err := p.prepare(ctx, a)
	if pod == nil || class == nil || err != nil {
		return err
	}
	if class.Overhead != nil {
		if len(pod.Spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(class.Overhead.PodFixed, pod.Spec.Overhead) {
			return admission.NewForbidden(a, errOverheadMismatch)
		}
		pod.Spec.Overhead = class.Overhead.PodFixed.DeepCopy()
	}
	if s := class.Scheduling; s != nil {
		if pod.Spec.NodeSelector == nil {
			pod.Spec.NodeSelector = maps.Clone(s.NodeSelector)
		} else {
			for _, key := range slices.Sorted(maps.Keys(s.NodeSelector)) {
				classValue := s.NodeSelector[key]
				if podValue, ok := pod.Spec.NodeSelector[key]; ok && podValue != classValue {
					return admission.NewForbidden(a, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", key, classValue, key, podValue))
				}
				pod.Spec.NodeSelector[key] = classValue
			}
		}
		pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, s.Tolerations)
	}
	return nil
}

// Validate refuses a created pod whose overhead is not its class's.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, class, err := p.prepare(ctx, a)
	if pod == nil || err != nil {
		return err
	}
	if class != nil && class.Overhead != nil {
		if !apiequality.Semantic.DeepEqual(class.Overhead.PodFixed, pod.Spec.Overhead) {
			return admission.NewForbidden(a, errOverheadMismatch)
		}
	} else if pod.Spec.Overhead != nil {
		return admission.NewForbidden(a, errOverheadUnset)
	}
	return nil
}

// prepare returns a created pod (nil for anything else) and the class it
// names (nil if none).
func (p *Plugin) prepare(ctx context.Context, a admission.Attributes) (*corev1.Pod, *nodev1.RuntimeClass, error) {
	if a.GetSubresource() != "" || a.GetResource().GroupResource() != corev1.Resource("pods") {
		return nil, nil, nil
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if pod.Spec.RuntimeClassName == nil {
		return pod, nil, nil
	}
	name := *pod.Spec.RuntimeClassName
	class, err := p.lister.Get(name)
	if apierrors.IsNotFound(err) {
		class, err = p.client.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return pod, nil, admission.NewForbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", name))
		}
	}
	return pod, class, err
}

// mergeTolerations is upstream's MergeTolerations: first's and second's
// tolerations, less each one another tolerates a superset of (of equal
// ones, the first).
func mergeTolerations(first, second []corev1.Toleration) []corev1.Toleration {
	all := append(slices.Clone(first), second...)
	var merged []corev1.Toleration
next:
	for i, t := range all {
		for _, t2 := range merged {
			if isSuperset(t2, t) {
				continue next
			}
		}
		for _, t2 := range all[i+1:] {
			if !apiequality.Semantic.DeepEqual(&t, &t2) && isSuperset(t2, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// isSuperset is whether ss tolerates a superset of what t tolerates.
func isSuperset(ss, t corev1.Toleration) bool {
	if apiequality.Semantic.DeepEqual(&t, &ss) {
		return true
	}
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false // an empty key with Exists matches every key
	}
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false // an empty effect matches every effect
	}
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil &&
		(t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds) {
		return false
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "":
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}

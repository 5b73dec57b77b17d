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

package priority

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1"
)

// PluginName is the plugin's name, as upstream's.
const PluginName = "Priority"

// Register registers the plugin in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin resolves pods' priorities from the PriorityClasses it lists.
type Plugin struct {
	*admission.Handler
	lister schedulinglisters.PriorityClassLister
}

var (
	_ admission.MutationInterface                  = (*Plugin)(nil)
	_ admission.ValidationInterface                = (*Plugin)(nil)
	_ admission.InitializationValidator            = (*Plugin)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// New returns the plugin; it needs a lister (SetExternalKubeInformerFactory).
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update, admission.Delete)}
}

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	i := f.Scheduling().V1().PriorityClasses()
	p.lister = i.Lister()
	p.SetReadyFunc(i.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.lister == nil {
		return fmt.Errorf("%s requires a lister", PluginName)
	}
	return nil
}

var (
	pods            = corev1.Resource("pods")
	priorityClasses = schedulingv1.Resource("priorityclasses")
)

// Admit sets a created pod's priority and preemption policy, and keeps an
// updated pod's when the update leaves them out.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	op := a.GetOperation()
	if a.GetSubresource() != "" || a.GetResource().GroupResource() != pods || (op != admission.Create && op != admission.Update) {
		return nil
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
	}
	switch op {
	case admission.Update:
		old, ok := a.GetOldObject().(*corev1.Pod)
		if !ok {
			return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
		}
		if pod.Spec.Priority == nil {
			pod.Spec.Priority = old.Spec.Priority
		}
		if pod.Spec.PreemptionPolicy == nil {
			pod.Spec.PreemptionPolicy = old.Spec.PreemptionPolicy
		}
	case admission.Create:
		name, priority, policy, err := p.establish(a, pod.Spec.PriorityClassName)
		if err != nil {
			return err
		}
		pod.Spec.PriorityClassName = name
		if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
			return admission.NewForbidden(a, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
		}
		pod.Spec.Priority = &priority
		if policy != nil {
			if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
				return admission.NewForbidden(a, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
			}
			pod.Spec.PreemptionPolicy = policy
		}
	}
	return nil
}

// Validate refuses a second global default PriorityClass.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" || a.GetResource().GroupResource() != priorityClasses {
		return nil
	}
	op := a.GetOperation()
	if op != admission.Create && op != admission.Update {
		return nil
	}
	pc, ok := a.GetObject().(*schedulingv1.PriorityClass)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind PriorityClass but was unable to be converted")
	}
	if !pc.GlobalDefault {
		return nil
	}
	dpc, err := p.defaultClass()
	if err != nil {
		return fmt.Errorf("failed to get default priority class: %v", err)
	}
	if dpc != nil && (op == admission.Create || dpc.Name != pc.Name) {
		return admission.NewForbidden(a, fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", dpc.Name))
	}
	return nil
}

// establish returns the class a pod gets, its priority and its preemption
// policy: those of the named class, else of the default class, else 0 and
// PreemptLowerPriority.
func (p *Plugin) establish(a admission.Attributes, name string) (string, int32, *corev1.PreemptionPolicy, error) {
	if name == "" {
		dpc, err := p.defaultClass()
		if err != nil {
			return "", 0, nil, fmt.Errorf("error occurred while retrieving default priority class: %w", err)
		}
		if dpc != nil {
			return dpc.Name, dpc.Value, dpc.PreemptionPolicy, nil
		}
		policy := corev1.PreemptLowerPriority
		return "", 0, &policy, nil
	}
	pc, err := p.lister.Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return "", 0, nil, admission.NewForbidden(a, fmt.Errorf("no PriorityClass with name %v was found", name))
	case err != nil:
		return "", 0, nil, fmt.Errorf("failed to resolve PriorityClass with name %s: %w", name, err)
	}
	return name, pc.Value, pc.PreemptionPolicy, nil
}

// defaultClass is the global default class of lowest value, if any.
func (p *Plugin) defaultClass() (*schedulingv1.PriorityClass, error) {
	list, err := p.lister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var found *schedulingv1.PriorityClass
	for _, pc := range list {
		if pc.GlobalDefault && (found == nil || found.Value > pc.Value) {
			found = pc
		}
	}
	return found, nil
}

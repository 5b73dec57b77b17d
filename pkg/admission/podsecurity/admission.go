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

package podsecurity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/component-base/compatibility"
	"k8s.io/component-base/metrics/legacyregistry"
	podsecurityadmission "k8s.io/pod-security-admission/admission"
	podsecurityconfigloader "k8s.io/pod-security-admission/admission/api/load"
	podsecurityadmissionapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/metrics"
	"k8s.io/pod-security-admission/policy"
)

// PluginName is the plugin's name, as upstream's.
const PluginName = "PodSecurity"

// Register registers the plugin in plugins; its configuration is a
// PodSecurityConfiguration (none: enforce privileged, the default).
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(reader io.Reader) (admission.Interface, error) { return newPlugin(reader) })
}

// Plugin is upstream's PodSecurity plugin: it validates creates and
// updates of pods, of namespaces (their labels) and of the workloads with
// a pod template (warnings and audit annotations only).
type Plugin struct {
	*admission.Handler

	inspectedEffectiveVersion bool
	emulationVersion          *podsecurityadmissionapi.Version

	client          kubernetes.Interface
	namespaceLister corev1listers.NamespaceLister
	podLister       corev1listers.PodLister

	delegate *podsecurityadmission.Admission
}

var (
	_ admission.ValidationInterface                = (*Plugin)(nil)
	_ admission.InitializationValidator            = (*Plugin)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
	_ initializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ initializer.WantsEffectiveVersion            = (*Plugin)(nil)
)

// The metrics are the process's: one recorder, registered once, whatever
// number of servers run in it.
var (
	recorder     metrics.Recorder
	recorderOnce sync.Once
)

func defaultRecorder() metrics.Recorder {
	recorderOnce.Do(func() {
		r := metrics.NewPrometheusRecorder(podsecurityadmissionapi.GetAPIVersion())
		r.MustRegister(legacyregistry.MustRegister)
		recorder = r
	})
	return recorder
}

func newPlugin(reader io.Reader) (*Plugin, error) {
	config, err := podsecurityconfigloader.LoadFromReader(reader)
	if err != nil {
		return nil, err
	}
	return &Plugin{
		Handler: admission.NewHandler(admission.Create, admission.Update),
		delegate: &podsecurityadmission.Admission{
			Configuration:    config,
			Metrics:          defaultRecorder(),
			PodSpecExtractor: podsecurityadmission.DefaultPodSpecExtractor{},
		},
	}, nil
}

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	namespaces := f.Core().V1().Namespaces()
	p.namespaceLister = namespaces.Lister()
	p.podLister = f.Core().V1().Pods().Lister()
	p.SetReadyFunc(namespaces.Informer().HasSynced)
	p.updateDelegate()
}

// SetExternalKubeClientSet implements initializer.WantsExternalKubeClientSet.
func (p *Plugin) SetExternalKubeClientSet(client kubernetes.Interface) {
	p.client = client
	p.updateDelegate()
}

// InspectEffectiveVersion implements initializer.WantsEffectiveVersion: a
// server that emulates an older version checks that version's policies.
func (p *Plugin) InspectEffectiveVersion(version compatibility.EffectiveVersion) {
	p.inspectedEffectiveVersion = true
	binary, emulation := version.BinaryVersion(), version.EmulationVersion()
	if b, e := podsecurityadmissionapi.MajorMinorVersion(int(binary.Major()), int(binary.Minor())),
		podsecurityadmissionapi.MajorMinorVersion(int(emulation.Major()), int(emulation.Minor())); b != e {
		p.emulationVersion = &e
	}
	p.updateDelegate()
}

// updateDelegate completes the delegate once the listers, the client and
// the version are all in.
func (p *Plugin) updateDelegate() {
	if p.namespaceLister == nil || p.podLister == nil || p.client == nil || !p.inspectedEffectiveVersion {
		return
	}
	if p.delegate.PodLister == nil {
		p.delegate.PodLister = podsecurityadmission.PodListerFromInformer(p.podLister)
	}
	if p.delegate.NamespaceGetter == nil {
		p.delegate.NamespaceGetter = podsecurityadmission.NamespaceGetterFromListerAndClient(p.namespaceLister, p.client)
	}
	if p.delegate.Evaluator == nil {
		evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), p.emulationVersion)
		if err != nil {
			panic(fmt.Errorf("the Pod Security Standards' checks: %w", err)) // they are compiled in
		}
		p.delegate.Evaluator = evaluator
	}
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if !p.inspectedEffectiveVersion {
		return fmt.Errorf("%s did not see the effective version", PluginName)
	}
	if err := p.delegate.CompleteConfiguration(); err != nil {
		return fmt.Errorf("%s configuration error: %w", PluginName, err)
	}
	if err := p.delegate.ValidateConfiguration(); err != nil {
		return fmt.Errorf("%s invalid: %w", PluginName, err)
	}
	return nil
}

var applicable = map[schema.GroupResource]bool{
	corev1.Resource("pods"):       true,
	corev1.Resource("namespaces"): true,
}

// Validate implements admission.ValidationInterface, as upstream's.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	gr := a.GetResource().GroupResource()
	if !applicable[gr] && !p.delegate.PodSpecExtractor.HasPodSpec(gr) {
		return nil
	}
	result := p.delegate.Validate(ctx, attributes{a})
	for _, w := range result.Warnings {
		warning.AddWarning(ctx, "", w)
	}
	if len(result.AuditAnnotations) > 0 {
		annotations := make([]string, 0, 2*len(result.AuditAnnotations))
		for k, v := range result.AuditAnnotations {
			annotations = append(annotations, podsecurityadmissionapi.AuditAnnotationPrefix+k, v)
		}
		audit.AddAuditAnnotations(ctx, annotations...)
	}
	if result.Allowed {
		return nil
	}
	forbidden := admission.NewForbidden(a, errors.New("Not allowed by PodSecurity")).(*apierrors.StatusError)
	if r := result.Result; r != nil {
		if r.Message != "" {
			forbidden.ErrStatus.Message = r.Message
		}
		if r.Reason != "" {
			forbidden.ErrStatus.Reason = r.Reason
		}
		if r.Details != nil {
			forbidden.ErrStatus.Details = r.Details
		}
		if r.Code != 0 {
			forbidden.ErrStatus.Code = r.Code
		}
	}
	return forbidden
}

// attributes are admission's attributes as k8s.io/pod-security-admission
// reads them. The objects here are of the v1 API already: upstream's
// plugin converts its internal ones.
type attributes struct{ admission.Attributes }

func (a attributes) GetOperation() admissionv1.Operation {
	return admissionv1.Operation(a.Attributes.GetOperation())
}

func (a attributes) GetUserName() string { return a.GetUserInfo().GetName() }

func (a attributes) GetObject() (runtime.Object, error) { return a.Attributes.GetObject(), nil }

func (a attributes) GetOldObject() (runtime.Object, error) { return a.Attributes.GetOldObject(), nil }

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

package admissionchain

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	genericoptions "k8s.io/apiserver/pkg/server/options"

	"github.com/miniapiserver/miniapiserver/pkg/admission/certificates"
	"github.com/miniapiserver/miniapiserver/pkg/admission/defaultclass"
	"github.com/miniapiserver/miniapiserver/pkg/admission/defaulttolerationseconds"
	"github.com/miniapiserver/miniapiserver/pkg/admission/limitranger"
	"github.com/miniapiserver/miniapiserver/pkg/admission/nodedeclaredfeatures"
	"github.com/miniapiserver/miniapiserver/pkg/admission/podresize"
	"github.com/miniapiserver/miniapiserver/pkg/admission/podsecurity"
	"github.com/miniapiserver/miniapiserver/pkg/admission/podtopologylabels"
	"github.com/miniapiserver/miniapiserver/pkg/admission/priority"
	"github.com/miniapiserver/miniapiserver/pkg/admission/pvcresize"
	"github.com/miniapiserver/miniapiserver/pkg/admission/resourcequota"
	"github.com/miniapiserver/miniapiserver/pkg/admission/runtimeclass"
	"github.com/miniapiserver/miniapiserver/pkg/admission/serviceaccount"
	"github.com/miniapiserver/miniapiserver/pkg/admission/storageprotection"
	"github.com/miniapiserver/miniapiserver/pkg/registry/admissionregistration"
)

// NewOptions returns the admission plugins this server has, in
// kube-apiserver's order: k8s.io/apiserver's NamespaceLifecycle, then
// LimitRanger and ServiceAccount (ours, ported from k8s.io/kubernetes), then PodSecurity
// (k8s.io/pod-security-admission's, as kube-apiserver wraps it), then
// Priority, DefaultTolerationSeconds, DefaultStorageClass,
// StorageObjectInUseProtection, PersistentVolumeClaimResize, RuntimeClass, the certificates.k8s.io plugins
// (CertificateApproval, CertificateSigning, ClusterTrustBundleAttest,
// CertificateSubjectRestriction), DefaultIngressClass, PodTopologyLabels,
// NodeDeclaredFeatureValidator and PodResizeValidator (ours, ported), then
// k8s.io/apiserver's MutatingAdmissionPolicy, MutatingAdmissionWebhook,
// ValidatingAdmissionPolicy and ValidatingAdmissionWebhook (the mutating
// ones run before the validating ones), then k8s.io/apiserver's
// ResourceQuota with our ports of upstream's evaluators, all on by default, with enable
// and disable as kube-apiserver's --enable-admission-plugins and
// --disable-admission-plugins.
func NewOptions(enable, disable []string) *genericoptions.AdmissionOptions {
	o := genericoptions.NewAdmissionOptions()
	limitranger.Register(o.Plugins)
	serviceaccount.Register(o.Plugins)
	podsecurity.Register(o.Plugins)
	priority.Register(o.Plugins)
	defaulttolerationseconds.Register(o.Plugins)
	defaultclass.Register(o.Plugins)
	storageprotection.Register(o.Plugins)
	pvcresize.Register(o.Plugins)
	runtimeclass.Register(o.Plugins)
	certificates.Register(o.Plugins)
	podtopologylabels.Register(o.Plugins)
	nodedeclaredfeatures.Register(o.Plugins)
	podresize.Register(o.Plugins)
	resourcequota.Register(o.Plugins)
	ours := []string{limitranger.PluginName, serviceaccount.PluginName, podsecurity.PluginName, priority.PluginName, defaulttolerationseconds.PluginName,
		defaultclass.StorageClassPluginName, storageprotection.PluginName, pvcresize.PluginName, runtimeclass.PluginName}
	ours = append(append(ours, certificates.PluginNames...), defaultclass.IngressClassPluginName, podtopologylabels.PluginName,
		nodedeclaredfeatures.PluginName, podresize.PluginName)
	o.RecommendedPluginOrder = slices.Insert(o.RecommendedPluginOrder, slices.Index(o.RecommendedPluginOrder, lifecycle.PluginName)+1, ours...)
	o.RecommendedPluginOrder = append(o.RecommendedPluginOrder, resourcequota.PluginName)
	o.EnablePlugins, o.DisablePlugins = enable, disable
	return o
}

// pluginSettings are what the plugins get here and not from
// k8s.io/apiserver's initializer (which runs first): their stop channel,
// the quota configuration (kube-apiserver's initializer gives it),
// kube-apiserver's list of resources the policy plugins leave alone
// (the reviews, which are not stored and which a policy could use to lock
// everyone out), and the default tolerations' seconds.
type pluginSettings struct {
	done <-chan struct{}
	// drained closes once the server has answered the requests in flight
	// at its stop (the generic config's DrainedNotify).
	drained               <-chan struct{}
	notReady, unreachable int64
	// quota is what the quota configuration's ResourceClaim evaluator reads.
	quota *resourcequota.ExtendedResources
}

var _ admission.PluginInitializer = pluginSettings{}

// Initialize gives plugin the settings it wants.
func (s pluginSettings) Initialize(plugin admission.Interface) {
	if p, ok := plugin.(*defaulttolerationseconds.Plugin); ok {
		p.SetDefaultTolerationSeconds(s.notReady, s.unreachable)
	}
	if p, ok := plugin.(initializer.WantsDrainedNotification); ok {
		stop := s.done
		if _, quota := plugin.(initializer.WantsQuotaConfiguration); quota && s.drained != nil {
			// Its workers evaluate the requests in flight: they stop once
			// those are answered (upstream's drained notification), not
			// with the informers, else a create in flight at the stop
			// would fail with "resource quota evaluation timed out".
			stop = s.drained
		}
		p.SetDrainedNotification(stop)
	}
	// After the stop channel, which the quota plugin's evaluator needs.
	resourcequota.Initialize(plugin, s.quota)
	if p, ok := plugin.(interface {
		SetExcludedAdmissionResources([]schema.GroupResource)
	}); ok {
		p.SetExcludedAdmissionResources(admissionregistration.ExcludedResources())
	}
}

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

package resourcequota

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/utils/clock"
)

// PluginName is the plugin's name, k8s.io/apiserver's.
const PluginName = resourcequota.PluginName

// Register registers k8s.io/apiserver's plugin in plugins.
func Register(plugins *admission.Plugins) { resourcequota.Register(plugins) }

// legacyObjectCountAliases are the resources counted under a name of
// their own as well as count/<resource>, as upstream's.
var legacyObjectCountAliases = map[schema.GroupVersionResource]corev1.ResourceName{
	corev1.SchemeGroupVersion.WithResource("configmaps"):             corev1.ResourceConfigMaps,
	corev1.SchemeGroupVersion.WithResource("resourcequotas"):         corev1.ResourceQuotas,
	corev1.SchemeGroupVersion.WithResource("replicationcontrollers"): corev1.ResourceReplicationControllers,
	corev1.SchemeGroupVersion.WithResource("secrets"):                corev1.ResourceSecrets,
}

// ignoredResources are never counted, as upstream's: the reviews and
// bindings, which are not stored, and events.
var ignoredResources = map[schema.GroupResource]struct{}{
	{Group: "", Resource: "bindings"}:                                      {},
	{Group: "", Resource: "componentstatuses"}:                             {},
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             {},
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       {},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      {},
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  {},
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: {},
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   {},
	{Group: "", Resource: "events"}:                                        {},
	{Group: eventsv1.GroupName, Resource: "events"}:                        {},
}

// NewConfiguration returns the evaluators, listing through f (which
// admission never does: nil is fine there), as upstream's
// NewQuotaConfigurationForAdmission and ForControllers. The
// ResourceClaim evaluator reads x (from NewExtendedResources); with a
// nil x, no device class maps to an extended resource and no claim's
// pod is found.
func NewConfiguration(f quota.ListerForResourceFunc, c clock.Clock, x *ExtendedResources) quota.Configuration {
	evaluators := []quota.Evaluator{newPodEvaluator(f, c), newServiceEvaluator(f), newClaimEvaluator(f), newResourceClaimEvaluator(f, x, c)}
	for gvr, alias := range legacyObjectCountAliases {
		evaluators = append(evaluators, generic.NewObjectCountEvaluator(gvr.GroupResource(), generic.ListResourceUsingListerFunc(f, gvr), alias))
	}
	return generic.NewConfiguration(evaluators, ignoredResources)
}

// Initialize gives plugin, if it is the ResourceQuota plugin, the
// configuration. The plugin must already have its stop channel (it makes
// its evaluator when given the configuration).
func Initialize(plugin admission.Interface, x *ExtendedResources) {
	if p, ok := plugin.(initializer.WantsQuotaConfiguration); ok {
		p.SetQuotaConfiguration(NewConfiguration(nil, clock.RealClock{}, x))
	}
}

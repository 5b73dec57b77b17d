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

package admissionregistration

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// excludedResources are the resources kube-apiserver keeps from admission
// webhooks and policies: intercepting these reviews may break the cluster
// (k8s.io/kubernetes' pkg/kubeapiserver/admission/exclusion).
var excludedResources = []schema.GroupResource{
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"},
	{Group: "authentication.k8s.io", Resource: "tokenreviews"},
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"},
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"},
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
}

// ExcludedResources returns the resources admission webhooks and policies
// are not called for, as kube-apiserver's.
func ExcludedResources() []schema.GroupResource { return slices.Clone(excludedResources) }

// staticSuffixWarnings is kube-apiserver's warning of a configuration named
// as the manifest-based ones are: on every update and, while the
// ManifestBasedAdmissionControlConfig gate is off (which then does not
// refuse the name), on create.
func staticSuffixWarnings(obj, old runtime.Object) []string {
	m, err := meta.Accessor(obj)
	if err != nil || !strings.HasSuffix(m.GetName(), staticConfigSuffix) ||
		(old == nil && utilfeature.DefaultFeatureGate.Enabled(genericfeatures.ManifestBasedAdmissionControlConfig)) {
		return nil
	}
	return []string{fmt.Sprintf("metadata.name: names ending with %q are reserved for static manifest-based configurations and cannot be managed via the API", staticConfigSuffix)}
}

// webhookWarnings are a webhook configuration's: its name's, and each rule
// that names an excluded resource (one with a wildcard is not flagged) while
// the ExcludeAdmissionWebhookVirtualResources gate is on (its 1.37 default).
func webhookWarnings(obj, old runtime.Object, hooks []webhook) []string {
	warnings := staticSuffixWarnings(obj, old)
	if !utilfeature.DefaultFeatureGate.Enabled(genericfeatures.ExcludeAdmissionWebhookVirtualResources) {
		return warnings
	}
	excluded := sets.New(excludedResources...)
	for i, hook := range hooks {
		rulesPath := field.NewPath("webhooks").Index(i).Child("rules")
		for j, rule := range hook.rules {
			if slices.Contains(rule.APIGroups, "*") || slices.Contains(rule.Resources, "*") {
				continue
			}
			seen := sets.New[schema.GroupResource]()
			for _, group := range rule.APIGroups {
				for _, resource := range rule.Resources {
					gr := schema.GroupResource{Group: group, Resource: resource}
					if excluded.Has(gr) && !seen.Has(gr) {
						seen.Insert(gr)
						warnings = append(warnings, fmt.Sprintf("%s: %s is excluded from admission webhooks; this rule will have no effect", rulesPath.Index(j), gr))
					}
				}
			}
		}
	}
	return warnings
}

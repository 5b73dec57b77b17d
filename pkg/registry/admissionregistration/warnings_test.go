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
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37 (its ManifestBasedAdmissionControlConfig
// and ExcludeAdmissionWebhookVirtualResources gates on): a name reserved
// for manifests on update (a create refuses it), and a webhook rule that
// names a resource webhooks are never called for.
func TestWarnings(t *testing.T) {
	const static = "hooks.static.k8s.io"
	suffix := []string{`metadata.name: names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`}
	reviews := withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.Rules = []admissionregistrationv1.RuleWithOperations{validRule(), validRule(), validRule()}
		h.Rules[1].APIGroups, h.Rules[1].Resources = []string{"authorization.k8s.io", "authentication.k8s.io"}, []string{"subjectaccessreviews", "tokenreviews", "subjectaccessreviews"}
		h.Rules[2].APIGroups, h.Rules[2].Resources = []string{"*"}, []string{"tokenreviews"}
	})
	excluded := []string{
		"webhooks[0].rules[1]: subjectaccessreviews.authorization.k8s.io is excluded from admission webhooks; this rule will have no effect",
		"webhooks[0].rules[1]: tokenreviews.authentication.k8s.io is excluded from admission webhooks; this rule will have no effect",
	}
	named := func(obj runtime.Object) runtime.Object {
		obj = obj.DeepCopyObject()
		obj.(interface{ SetName(string) }).SetName(static)
		return obj
	}
	for resource, cases := range map[string][]registrytest.WarningCase{
		"validatingwebhookconfigurations": {
			{Name: "excluded rules", Obj: validatingConfiguration(reviews), Want: excluded},
			{Name: "static name, create", Obj: named(validatingConfiguration(validWebhook()))},
			{Name: "static name, update", Obj: named(validatingConfiguration(reviews)), Old: named(validatingConfiguration(reviews)), Want: append(suffix, excluded...)},
		},
		"mutatingwebhookconfigurations": {
			{Name: "excluded rules", Obj: mutatingConfiguration(reviews), Want: excluded},
		},
		"validatingadmissionpolicies": {
			{Name: "static name, update", Obj: named(validPolicy()), Old: named(validPolicy()), Want: suffix},
			{Name: "none", Obj: validPolicy(), Old: validPolicy()},
		},
		"mutatingadmissionpolicies":         {{Name: "static name, update", Obj: named(validMutatingPolicy()), Old: named(validMutatingPolicy()), Want: suffix}},
		"validatingadmissionpolicybindings": {{Name: "static name, update", Obj: named(validBinding()), Old: named(validBinding()), Want: suffix}},
		"mutatingadmissionpolicybindings":   {{Name: "static name, update", Obj: named(validMutatingBinding()), Old: named(validMutatingBinding()), Want: suffix}},
	} {
		t.Run(resource, func(t *testing.T) { registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, resource), cases) })
	}
}

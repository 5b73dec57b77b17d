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

package networkpolicy

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func port(p intstr.IntOrString) networkingv1.NetworkPolicyPort {
	return networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolTCP), Port: &p}
}

func validPolicy() *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "allow-web", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(80)), port(intstr.FromString("https"))},
				From: []networkingv1.NetworkPolicyPeer{
					{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "frontend"}}, NamespaceSelector: &metav1.LabelSelector{}},
					{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/16", Except: []string{"10.0.1.0/24"}}},
				},
			}},
			Egress: []networkingv1.NetworkPolicyEgressRule{{
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To(intstr.FromInt32(5000)), EndPort: ptr.To[int32](6000)}},
			}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
}

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "networkpolicies")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: networkingv1.Resource("networkpolicies"), Singular: "networkpolicy", Namespaced: true, ShortNames: []string{"netpol"}})
}

func TestValidate(t *testing.T) {
	from := func(np *networkingv1.NetworkPolicy) *networkingv1.NetworkPolicyPeer {
		return &np.Spec.Ingress[0].From[1]
	}
	tests := []registrytest.Mutation[*networkingv1.NetworkPolicy]{
		{Name: "valid", Mutate: func(*networkingv1.NetworkPolicy) {}, Want: []string{}},
		{Name: "empty spec", Mutate: func(np *networkingv1.NetworkPolicy) { np.Spec = networkingv1.NetworkPolicySpec{} }, Want: []string{}},
		{
			Name: "bad pod selector",
			Mutate: func(np *networkingv1.NetworkPolicy) {
				np.Spec.PodSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn}}
			},
			Want: []string{"spec.podSelector.matchExpressions[0].values: Required value"},
		},
		{
			Name: "bad protocol, port number and port name",
			Mutate: func(np *networkingv1.NetworkPolicy) {
				np.Spec.Ingress[0].Ports = []networkingv1.NetworkPolicyPort{
					{Protocol: ptr.To(corev1.Protocol("ICMP"))}, port(intstr.FromInt32(70000)), port(intstr.FromString("not_a_name")),
				}
			},
			Want: []string{"spec.ingress[0].ports[0].protocol: Unsupported value", "spec.ingress[0].ports[1].port: Invalid value", "spec.ingress[0].ports[2].port: Invalid value"},
		},
		{
			Name: "endPort below port, with a named port, without a port",
			Mutate: func(np *networkingv1.NetworkPolicy) {
				np.Spec.Egress[0].Ports = []networkingv1.NetworkPolicyPort{
					{Port: ptr.To(intstr.FromInt32(6000)), EndPort: ptr.To[int32](5000)},
					{Port: ptr.To(intstr.FromString("http")), EndPort: ptr.To[int32](5000)},
					{EndPort: ptr.To[int32](5000)},
				}
			},
			Want: []string{"spec.egress[0].ports[0].endPort: Invalid value", "spec.egress[0].ports[1].endPort: Invalid value", "spec.egress[0].ports[2].endPort: Invalid value"},
		},
		{
			Name:   "empty peer",
			Mutate: func(np *networkingv1.NetworkPolicy) { np.Spec.Ingress[0].From[0] = networkingv1.NetworkPolicyPeer{} },
			Want:   []string{"spec.ingress[0].from[0]: Required value"},
		},
		{
			Name:   "ipBlock with a selector",
			Mutate: func(np *networkingv1.NetworkPolicy) { from(np).PodSelector = &metav1.LabelSelector{} },
			Want:   []string{"spec.ingress[0].from[1]: Forbidden"},
		},
		{
			Name:   "ipBlock without cidr",
			Mutate: func(np *networkingv1.NetworkPolicy) { from(np).IPBlock = &networkingv1.IPBlock{} },
			Want:   []string{"spec.ingress[0].from[1].ipBlock.cidr: Required value"},
		},
		{
			Name:   "bad cidr",
			Mutate: func(np *networkingv1.NetworkPolicy) { from(np).IPBlock = &networkingv1.IPBlock{CIDR: "10.0.0.0/33"} },
			Want:   []string{"spec.ingress[0].from[1].ipBlock.cidr: Invalid value"},
		},
		{
			Name:   "non-canonical cidr (strict validation)",
			Mutate: func(np *networkingv1.NetworkPolicy) { from(np).IPBlock = &networkingv1.IPBlock{CIDR: "10.0.0.1/16"} },
			Want:   []string{"spec.ingress[0].from[1].ipBlock.cidr: Invalid value"},
		},
		{
			Name: "except not a strict subset",
			Mutate: func(np *networkingv1.NetworkPolicy) {
				from(np).IPBlock.Except = []string{"10.0.0.0/16", "192.168.0.0/24"}
			},
			Want: []string{"spec.ingress[0].from[1].ipBlock.except[0]: Invalid value", "spec.ingress[0].from[1].ipBlock.except[1]: Invalid value"},
		},
		{
			Name:   "unknown policy type",
			Mutate: func(np *networkingv1.NetworkPolicy) { np.Spec.PolicyTypes = []networkingv1.PolicyType{"Sideways"} },
			Want:   []string{"spec.policyTypes[0]: Unsupported value"},
		},
		{
			Name:   "three policy types",
			Mutate: func(np *networkingv1.NetworkPolicy) { np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, "Sideways") },
			Want:   []string{"spec.policyTypes: Invalid value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "networkpolicies")
	registrytest.ValidateMutationsCreateAndUpdate(t, store, registrytest.ErrorPaths, validPolicy, tests)
}

// TestValidateUpdateKeepsStoredValues: as upstream, an update may keep an
// invalid CIDR or pod selector label value the stored policy already has.
func TestValidateUpdateKeepsStoredValues(t *testing.T) {
	old := registrytest.Modified(validPolicy(), func(np *networkingv1.NetworkPolicy) {
		np.Spec.Ingress[0].From[1].IPBlock = &networkingv1.IPBlock{CIDR: "010.0.0.0/16"}
		np.Spec.PodSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"bad value!"}}}
	})
	store := registrytest.REST(t, NewStorage, "networkpolicies")
	if got := store.CreateStrategy.Validate(context.Background(), old); len(got) != 2 {
		t.Errorf("create: got %v, want two errors", got)
	}
	update := registrytest.Modified(old, func(np *networkingv1.NetworkPolicy) { np.Labels = map[string]string{"a": "b"} })
	if got := registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), update, old)); len(got) != 0 {
		t.Errorf("update keeping the stored values: got %v, want none", got)
	}
	newBad := registrytest.Modified(old, func(np *networkingv1.NetworkPolicy) { np.Spec.Ingress[0].From[1].IPBlock.CIDR = "011.0.0.0/16" })
	if diff := cmp.Diff([]string{"spec.ingress[0].from[1].ipBlock.cidr: Invalid value"}, registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), newBad, old))); diff != "" {
		t.Errorf("update to another invalid CIDR (-want +got):\n%s", diff)
	}
}

func TestPrepareForCreateAndUpdate(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "networkpolicies")
	np := registrytest.Modified(validPolicy(), func(np *networkingv1.NetworkPolicy) { np.Generation = 5 })
	store.CreateStrategy.PrepareForCreate(context.Background(), np)
	if np.Generation != 1 {
		t.Errorf("generation after PrepareForCreate: got %d, want 1", np.Generation)
	}
	tests := []registrytest.Generation[*networkingv1.NetworkPolicy]{
		{Name: "labels", Mutate: func(np *networkingv1.NetworkPolicy) { np.Labels = map[string]string{"a": "b"} }, Want: 1},
		{Name: "spec", Mutate: func(np *networkingv1.NetworkPolicy) { np.Spec.Egress = nil }, Want: 2},
	}
	registrytest.CheckGenerations(t, store.UpdateStrategy, np, tests, nil)
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "networkpolicies")
	registrytest.CheckFields(t, store, validPolicy(), fields.Set{"metadata.name": "allow-web", "metadata.namespace": "default"})
}

func TestTable(t *testing.T) {
	tests := []registrytest.Row{
		{Name: "selector", Obj: validPolicy(), Want: []any{"allow-web", "app=web", "<unknown>"}},
		{Name: "every pod", Obj: registrytest.Modified(validPolicy(), func(np *networkingv1.NetworkPolicy) { np.Spec.PodSelector = metav1.LabelSelector{} }), Want: []any{"allow-web", "<none>", "<unknown>"}},
	}
	store := registrytest.REST(t, NewStorage, "networkpolicies")
	registrytest.CheckTable(t, store, []string{"Name", "Pod-Selector", "Age"}, tests...)
}

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

package bootstrap

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
)

func serviceCIDR(cidrs []string, ready metav1.ConditionStatus) *networkingv1.ServiceCIDR {
	c := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	if ready != "" {
		c.Status.Conditions = []metav1.Condition{{Type: networkingv1.ServiceCIDRConditionReady, Status: ready, Reason: "Set", Message: "by someone"}}
	}
	return c
}

// TestNeedsReady: the default ServiceCIDR gets the Ready condition in
// upstream's cases only.
func TestNeedsReady(t *testing.T) {
	ours := []string{"10.0.0.0/24"}
	deleting := serviceCIDR(ours, "")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	for _, tt := range []struct {
		name string
		cidr *networkingv1.ServiceCIDR
		want bool
	}{
		{name: "no condition", cidr: serviceCIDR(ours, ""), want: true},
		{name: "Unknown", cidr: serviceCIDR(ours, metav1.ConditionUnknown), want: true},
		{name: "True", cidr: serviceCIDR(ours, metav1.ConditionTrue), want: false},
		{name: "False: the administrator's to clear", cidr: serviceCIDR(ours, metav1.ConditionFalse), want: false},
		{name: "another range", cidr: serviceCIDR([]string{"10.96.0.0/16"}, ""), want: false},
		{name: "dual stack", cidr: serviceCIDR([]string{"10.0.0.0/24", "fd00::/108"}, ""), want: false},
		{name: "being deleted", cidr: deleting, want: false},
	} {
		if got := needsReady(tt.cidr, ours); got != tt.want {
			t.Errorf("%s: needsReady got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestBootstrapServiceCIDR: a missing default ServiceCIDR is made with the
// service range and marked Ready; an existing one keeps its spec, and a
// condition other than Unknown is left as it is.
func TestBootstrapServiceCIDR(t *testing.T) {
	ready := metav1.Condition{Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue, Message: "Kubernetes default Service CIDR is ready"}
	ignoreTime := cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")
	for _, tt := range []struct {
		name     string
		existing *networkingv1.ServiceCIDR
		want     *networkingv1.ServiceCIDR
	}{
		{name: "missing", want: &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"},
			Spec:   networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24"}},
			Status: networkingv1.ServiceCIDRStatus{Conditions: []metav1.Condition{ready}}}},
		// The applied condition has no reason: the old one stays, as
		// server-side apply merges it (upstream's apply too).
		{name: "Unknown", existing: serviceCIDR([]string{"10.0.0.0/24"}, metav1.ConditionUnknown), want: &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"},
			Spec:   networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24"}},
			Status: networkingv1.ServiceCIDRStatus{Conditions: []metav1.Condition{{Type: ready.Type, Status: ready.Status, Reason: "Set", Message: ready.Message}}}}},
		{name: "False", existing: serviceCIDR([]string{"10.0.0.0/24"}, metav1.ConditionFalse), want: serviceCIDR([]string{"10.0.0.0/24"}, metav1.ConditionFalse)},
		{name: "another range", existing: serviceCIDR([]string{"10.96.0.0/16"}, ""), want: serviceCIDR([]string{"10.96.0.0/16"}, "")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			if tt.existing != nil {
				if _, err := client.NetworkingV1().ServiceCIDRs().Create(t.Context(), tt.existing, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := ServiceCIDR(t.Context(), client, service.DefaultRanges); err != nil {
				t.Fatalf("ServiceCIDR: %v", err)
			}
			got, err := client.NetworkingV1().ServiceCIDRs().Get(t.Context(), "kubernetes", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, ignoreTime, cmpopts.IgnoreFields(networkingv1.ServiceCIDR{}, "TypeMeta"), cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion", "ManagedFields")); diff != "" {
				t.Errorf("the default ServiceCIDR (-want +got):\n%s", diff)
			}
		})
	}
}

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

package ipaddress

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestValidate(t *testing.T) {
	service := &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}
	for _, tc := range []struct {
		name, ip string
		parent   *networkingv1.ParentReference
		want     []string
	}{
		{name: "a service's", ip: "10.0.0.7", parent: service, want: []string{}},
		{name: "not an IP", ip: "web", parent: service, want: []string{"metadata.name: Invalid value"}},
		{name: "not canonical", ip: "10.000.0.7", parent: service, want: []string{"metadata.name: Invalid value"}},
		{name: "no parent", ip: "10.0.0.7", want: []string{"spec.parentRef: Required value"}},
		{name: "a parent without resource or name", ip: "10.0.0.7", parent: &networkingv1.ParentReference{}, want: []string{"spec.parentRef.name: Required value", "spec.parentRef.resource: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rest := registrytest.REST(t, NewStorage, "ipaddresses")
			ip := &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: tc.ip}, Spec: networkingv1.IPAddressSpec{ParentRef: tc.parent}}
			if diff := cmp.Diff(tc.want, registrytest.ErrorPaths(rest.CreateStrategy.Validate(context.Background(), ip))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParentRefIsImmutable(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "ipaddresses")
	old := &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.0.0.7", ResourceVersion: "1"},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}}}
	moved := old.DeepCopy()
	moved.Spec.ParentRef.Name = "other"
	if diff := cmp.Diff([]string{"spec.parentRef: Invalid value"}, registrytest.ErrorPaths(rest.UpdateStrategy.ValidateUpdate(context.Background(), moved, old))); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

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

package service

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/ipaddress"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestRepairClusterIPs: a repair gives a Service's cluster IP back its
// IPAddress, deletes the allocator's IPAddresses no Service holds once
// they are older than the grace (not before, nor while a write of the
// server's holds the address), and leaves alone what others made.
func TestRepairClusterIPs(t *testing.T) {
	mem := registrytest.NewMemStorage()
	ips, err := ipaddress.New(mem.Options("ipaddresses"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(mem.Options("services"), ips.IPAddresses, DefaultRanges)
	if err != nil {
		t.Fatal(err)
	}
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	cluster := genericapirequest.WithNamespace(context.Background(), "")
	create := func(svc corev1.Service) *corev1.Service {
		t.Helper()
		svc.Spec.Ports = []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)}}
		api.Scheme.Default(&svc)
		obj, err := s.Services.Create(ctx, &svc, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*corev1.Service)
	}
	record := func(ip *networkingv1.IPAddress) {
		t.Helper()
		if _, err := ips.IPAddresses.Create(cluster, ip, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	recorded := func() map[string]string {
		t.Helper()
		list, err := ips.IPAddresses.List(cluster, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, ip := range list.(*networkingv1.IPAddressList).Items {
			out[ip.Name] = ip.Spec.ParentRef.Namespace + "/" + ip.Spec.ParentRef.Name
		}
		return out
	}

	// Fixed addresses: one allocated at random could be one recorded below.
	kept := create(holding("kept", "10.0.0.40"))
	lost := create(holding("lost", "10.0.0.41"))
	// Its IPAddress deleted behind the allocator's back.
	if _, _, err := ips.IPAddresses.Delete(cluster, lost.Spec.ClusterIP, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The IPAddress of a Service whose create never ended, and one a
	// user made (no managed-by label).
	orphan := holding("never-stored", "10.0.0.50")
	record(ipAddressOf(&orphan))
	users := ipAddressOf(&orphan)
	users.Name, users.Labels = "10.0.0.51", nil
	record(users)
	// The IPAddress of a Service this server is writing.
	writing := holding("being-written", "10.0.0.52")
	record(ipAddressOf(&writing))
	s.allocator.mu.Lock()
	unhold := s.allocator.hold(&writing)
	s.allocator.mu.Unlock()

	if err := s.RepairClusterIPs(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{kept.Spec.ClusterIP: "default/kept", lost.Spec.ClusterIP: "default/lost",
		"10.0.0.50": "default/never-stored", "10.0.0.51": "default/never-stored", "10.0.0.52": "default/being-written"}
	if got := recorded(); !maps.Equal(got, want) {
		t.Errorf("after a repair now: %v, want %v (the lost IPAddress back, the young orphan kept)", got, want)
	}

	later := time.Now().Add(ipLeakGrace + time.Second)
	if err := s.RepairClusterIPs(context.Background(), later); err != nil {
		t.Fatal(err)
	}
	delete(want, "10.0.0.50")
	if got := recorded(); !maps.Equal(got, want) {
		t.Errorf("after a repair past the grace: %v, want %v (only the allocator's orphan gone)", got, want)
	}

	s.allocator.mu.Lock()
	unhold()
	s.allocator.mu.Unlock()
	if err := s.RepairClusterIPs(context.Background(), later); err != nil {
		t.Fatal(err)
	}
	delete(want, "10.0.0.52")
	if got := recorded(); !maps.Equal(got, want) {
		t.Errorf("once the write ended without its Service: %v, want %v", got, want)
	}
}

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
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestKeepAllocated(t *testing.T) {
	nodePort := func(nodePorts ...int32) *corev1.Service {
		return modified(validService(), func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
			s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
			s.Spec.Ports = []corev1.ServicePort{
				{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, NodePort: nodePorts[0]},
				{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, NodePort: nodePorts[1]},
			}
		})
	}
	withoutIP := func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies, s.Spec.IPFamilyPolicy = "", nil, nil, nil
	}
	tests := []struct {
		name     string
		old, obj *corev1.Service
		want     *corev1.Service
	}{
		{
			name: "clusterIP, families and policy kept",
			old:  nodePort(30080, 30443),
			obj:  modified(nodePort(30080, 30443), withoutIP),
			want: nodePort(30080, 30443),
		},
		{
			name: "an explicit ipFamilyPolicy is not overwritten",
			old:  nodePort(30080, 30443),
			obj: modified(nodePort(30080, 30443), func(s *corev1.Service) {
				withoutIP(s)
				s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
			}),
			want: modified(nodePort(30080, 30443), func(s *corev1.Service) {
				s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
			}),
		},
		{
			name: "an explicit clusterIP is not overwritten",
			old:  nodePort(30080, 30443),
			obj:  modified(nodePort(30080, 30443), func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.99", []string{"10.0.0.99"} }),
			want: modified(nodePort(30080, 30443), func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.99", []string{"10.0.0.99"} }),
		},
		{
			name: "nodePorts kept by port and protocol, whatever the order",
			old:  nodePort(30080, 30443),
			obj: modified(nodePort(0, 0), func(s *corev1.Service) {
				s.Spec.Ports[0], s.Spec.Ports[1] = s.Spec.Ports[1], s.Spec.Ports[0]
				s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
			}),
			want: modified(nodePort(30080, 30443), func(s *corev1.Service) {
				s.Spec.Ports[0], s.Spec.Ports[1] = s.Spec.Ports[1], s.Spec.Ports[0]
				s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
			}),
		},
		{
			name: "a port that changed protocol gets none",
			old:  nodePort(30080, 30443),
			obj:  modified(nodePort(0, 0), func(s *corev1.Service) { s.Spec.Ports[0].Protocol = corev1.ProtocolUDP }),
			want: modified(nodePort(0, 30443), func(s *corev1.Service) { s.Spec.Ports[0].Protocol = corev1.ProtocolUDP }),
		},
		{
			name: "an explicit nodePort is not overwritten",
			old:  nodePort(30080, 30443),
			obj:  nodePort(31000, 0),
			want: nodePort(31000, 30443),
		},
		{
			name: "NodePort to ClusterIP: no nodePorts carried over",
			old:  nodePort(30080, 30443),
			obj:  modified(nodePort(0, 0), func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP }),
			want: modified(nodePort(0, 0), func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP }),
		},
		{
			name: "ClusterIP to NodePort: none to carry over",
			old:  modified(nodePort(0, 0), func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP }),
			obj:  nodePort(0, 0),
			want: nodePort(0, 0),
		},
		{
			name: "to ExternalName: no clusterIP carried over",
			old:  validService(),
			obj:  modified(validService(), asExternalName),
			want: modified(validService(), asExternalName),
		},
		{
			name: "from ExternalName: none to carry over",
			old:  modified(validService(), asExternalName),
			obj:  modified(validService(), withoutIP),
			want: modified(validService(), withoutIP),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := tt.old.DeepCopy()
			keepAllocated(tt.obj, tt.old)
			if diff := cmp.Diff(tt.want, tt.obj); diff != "" {
				t.Errorf("service after keepAllocated (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(old, tt.old); diff != "" {
				t.Errorf("old service after keepAllocated (-want +got):\n%s", diff)
			}
		})
	}
}

// services are the stores of services and services/status on one MemStorage.
type services struct {
	mem    *registrytest.MemStorage
	store  *registry.REST
	status *registry.StatusREST
}

func newServices(t *testing.T) services {
	t.Helper()
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options("services"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	return services{mem: mem, store: storages["services"].(*registry.REST), status: storages["services/status"].(*registry.StatusREST)}
}

var nsContext = genericapirequest.WithNamespace(context.Background(), "default")

func (s services) seed(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	key, err := s.store.KeyFunc(nsContext, svc.Name)
	if err != nil {
		t.Fatalf("KeyFunc: %v", err)
	}
	return s.mem.Seed(t, key, svc).(*corev1.Service)
}

// TestUpdateKeepsAllocations runs updates through the stores: an update
// that leaves out the cluster IP and node ports keeps them (the MemStorage
// lists nothing, so an update that allocated would fail).
func TestUpdateKeepsAllocations(t *testing.T) {
	stored := modified(validService(), func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.AllocateLoadBalancerNodePorts = ptr.To(true)
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
		s.Spec.Ports[0].NodePort = 30080
	})
	for _, viaStatus := range []bool{false, true} {
		t.Run(map[bool]string{false: "services", true: "services/status"}[viaStatus], func(t *testing.T) {
			s := newServices(t)
			current := s.seed(t, stored)
			update := modified(current, func(svc *corev1.Service) {
				svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = "", nil, nil, nil
				svc.Spec.Ports[0].NodePort = 0
				svc.Spec.Selector = map[string]string{"app": "web2"}
				svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7", IPMode: ptr.To(corev1.LoadBalancerIPModeVIP)}}
			})
			var updater rest.Updater = s.store
			if viaStatus {
				updater = s.status
			}
			out, _, err := updater.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			got := out.(*corev1.Service)
			if got.Spec.ClusterIP != "10.0.0.10" || !slices.Equal(got.Spec.ClusterIPs, []string{"10.0.0.10"}) {
				t.Errorf("clusterIP, clusterIPs: got %q, %v, want the stored 10.0.0.10", got.Spec.ClusterIP, got.Spec.ClusterIPs)
			}
			if got.Spec.Ports[0].NodePort != 30080 {
				t.Errorf("nodePort: got %d, want the stored 30080", got.Spec.Ports[0].NodePort)
			}
			wantSelector, wantStatus := map[string]string{"app": "web2"}, current.Status
			if viaStatus {
				wantSelector, wantStatus = current.Spec.Selector, update.Status
			}
			if diff := cmp.Diff(wantSelector, got.Spec.Selector); diff != "" {
				t.Errorf("selector (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateFromAnOldClient: a client that knows spec.clusterIP but not
// spec.clusterIPs (before 1.20) sends the unchanged clusterIP alone.
// Upstream's strategy fills clusterIPs in from the old object
// (normalizeClusterIPs in pkg/registry/core/service/strategy.go), so the
// update is valid.
func TestUpdateFromAnOldClient(t *testing.T) {
	s := newServices(t)
	current := s.seed(t, validService())
	update := modified(current, func(svc *corev1.Service) {
		svc.Spec.ClusterIPs = nil
		svc.Spec.Ports[0].Port = 8000
	})
	out, _, err := s.store.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update with clusterIP but no clusterIPs: got error %v, want none", err)
	}
	if got := out.(*corev1.Service).Spec.ClusterIPs; !slices.Equal(got, []string{"10.0.0.10"}) {
		t.Errorf("clusterIPs: got %v, want [10.0.0.10]", got)
	}
}

// TestUpdateCannotChangeTheClusterIP: a new clusterIP with clusterIPs as
// they were (a merge patch of clusterIP alone) is refused as upstream
// refuses it, on clusterIPs[0], and the stored service keeps both.
func TestUpdateCannotChangeTheClusterIP(t *testing.T) {
	s := newServices(t)
	current := s.seed(t, validService())
	update := modified(current, func(svc *corev1.Service) { svc.Spec.ClusterIP = "10.0.0.99" })
	_, _, err := s.store.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	want := `Service "web" is invalid: spec.clusterIPs[0]: Invalid value: ["10.0.0.99"]: may not change once set`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Fatalf("Update of clusterIP alone: got %v, want %s", err, want)
	}
	stored, err := s.store.Get(nsContext, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if spec := stored.(*corev1.Service).Spec; spec.ClusterIP != "10.0.0.10" || !slices.Equal(spec.ClusterIPs, []string{"10.0.0.10"}) {
		t.Errorf("stored: clusterIP %s, clusterIPs %v; want 10.0.0.10 in both", spec.ClusterIP, spec.ClusterIPs)
	}
}

// TestClusterIPsMustFollowClusterIP: clusterIPs that disagree with
// clusterIP are refused with upstream's errors, on a create before
// anything is allocated, and on an update of clusterIPs alone.
func TestClusterIPsMustFollowClusterIP(t *testing.T) {
	s := newServices(t)
	for name, tt := range map[string]struct {
		clusterIP  string
		clusterIPs []string
		want       string
	}{
		"disagreeing":      {"10.0.0.50", []string{"10.0.0.51"}, `Service "web" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.51"]: first value must match ` + "`clusterIP`"},
		"clusterIPs alone": {"", []string{"10.0.0.51"}, `Service "web" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.51"]: must be empty when ` + "`clusterIP`" + ` is not specified`},
	} {
		svc := modified(validService(), func(svc *corev1.Service) { svc.Spec.ClusterIP, svc.Spec.ClusterIPs = tt.clusterIP, tt.clusterIPs })
		if _, err := s.store.Create(nsContext, svc, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err == nil || err.Error() != tt.want {
			t.Errorf("%s: create got %v, want %s", name, err, tt.want)
		}
	}
	current := s.seed(t, validService())
	update := modified(current, func(svc *corev1.Service) { svc.Spec.ClusterIPs = []string{"10.0.0.77"} })
	_, _, err := s.store.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if want := `Service "web" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.77"]: first value must match ` + "`clusterIP`"; err == nil || err.Error() != want {
		t.Errorf("update of clusterIPs alone: got %v, want %s", err, want)
	}
}

// TestUpdateTypeChangeDropsAllocations: a client that changes only
// spec.type (kubectl patch -p '{"spec":{"type":"ClusterIP"}}' sends the
// rest of the stored spec back) leaves the old node ports or cluster IP in
// place. Upstream's strategy drops the values the new type does not use
// when they are unchanged from the old object (dropTypeDependentFields in
// pkg/registry/core/service/strategy.go), so the update is valid.
func TestUpdateTypeChangeDropsAllocations(t *testing.T) {
	tests := []struct {
		name   string
		stored *corev1.Service
		mutate func(*corev1.Service)
		check  func(*corev1.Service) (got, want any)
	}{
		{
			name:   "NodePort to ClusterIP: node ports dropped",
			stored: modified(validService(), asNodePort),
			mutate: func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP },
			check: func(s *corev1.Service) (any, any) {
				return []any{s.Spec.Ports[0].NodePort, s.Spec.ClusterIP}, []any{int32(0), "10.0.0.10"}
			},
		},
		{
			name:   "ClusterIP to ExternalName: cluster IP dropped",
			stored: validService(),
			mutate: func(s *corev1.Service) {
				s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "db.example.com"
			},
			check: func(s *corev1.Service) (any, any) {
				return []any{s.Spec.ClusterIP, len(s.Spec.ClusterIPs)}, []any{"", 0}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServices(t)
			current := s.seed(t, tt.stored)
			update := modified(current, tt.mutate)
			out, _, err := s.store.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			got, want := tt.check(out.(*corev1.Service))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("updated service (-want +got):\n%s", diff)
			}
		})
	}
}

// timingOut is a MemStorage whose creates fail as one that times out
// does: stored or not (lands), the caller gets an error.
type timingOut struct {
	*registrytest.MemStorage
	lands bool
}

func (s timingOut) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	if s.lands {
		if err := s.MemStorage.Create(ctx, key, obj, out, ttl); err != nil {
			return err
		}
	}
	return context.DeadlineExceeded
}

// TestAFailedCreateReleasesItsAddressUnlessStored: a create whose write
// fails deletes the IPAddress it recorded, unless the Service was stored
// after all (a write that times out may yet be committed): that Service
// holds the address, which must stay recorded.
func TestAFailedCreateReleasesItsAddressUnlessStored(t *testing.T) {
	for _, lands := range []bool{false, true} {
		t.Run(map[bool]string{false: "lost", true: "stored"}[lands], func(t *testing.T) {
			records := &ipRecords{held: map[string]bool{}}
			storages, err := New(registrytest.Options(timingOut{registrytest.NewMemStorage(), lands}, "services"), records, DefaultRanges)
			if err != nil {
				t.Fatal(err)
			}
			store := storages.Services
			svc := modified(validService(), func(s *corev1.Service) {
				s.ResourceVersion, s.CreationTimestamp = "", metav1.Now()
				s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
			})
			if _, err := store.Create(nsContext, svc, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err == nil {
				t.Fatal("Create: got no error, want the write's")
			}
			if len(records.created) != 1 {
				t.Fatalf("IPAddresses created: %v, want one", records.created)
			}
			if released := slices.Equal(records.deleted, records.created); released == lands {
				t.Errorf("Service stored: %v; its IPAddress %s released: %v, want %v", lands, records.created[0], released, !lands)
			}
			if got, err := store.Get(nsContext, "web", &metav1.GetOptions{}); lands && (err != nil || got.(*corev1.Service).Spec.ClusterIP != records.created[0]) {
				t.Errorf("the stored Service: got %v, %v; want it holding %s", got, err, records.created[0])
			}
		})
	}
}

// TestDryRunsRecordAndReleaseNothing: as upstream's allocator, a dry-run
// create shows the address a create would get but records none, and a
// dry-run delete (the generic store runs AfterDelete for it too) leaves
// the Service's address recorded.
func TestDryRunsRecordAndReleaseNothing(t *testing.T) {
	records := &ipRecords{held: map[string]bool{}}
	storages, err := New(registrytest.NewMemStorage().Options("services"), records, DefaultRanges)
	if err != nil {
		t.Fatal(err)
	}
	store := storages.Services
	newService := func() *corev1.Service {
		return modified(validService(), func(s *corev1.Service) {
			s.ResourceVersion, s.CreationTimestamp = "", metav1.Now()
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
		})
	}
	dryRun := []string{metav1.DryRunAll}
	out, err := store.Create(nsContext, newService(), rest.ValidateAllObjectFunc, &metav1.CreateOptions{DryRun: dryRun})
	if err != nil || out.(*corev1.Service).Spec.ClusterIP == "" {
		t.Fatalf("dry-run Create: got %v, %v; want a Service with a cluster IP", out, err)
	}
	if len(records.created) != 0 {
		t.Errorf("a dry-run create recorded %v, want nothing", records.created)
	}
	if _, err := store.Create(nsContext, newService(), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Delete(nsContext, "web", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{DryRun: dryRun}); err != nil {
		t.Fatal(err)
	}
	if len(records.deleted) != 0 {
		t.Errorf("a dry-run delete released %v, want nothing", records.deleted)
	}
	if _, _, err := store.Delete(nsContext, "web", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(records.deleted, records.created) || len(records.created) != 1 {
		t.Errorf("a delete released %v, want what the create recorded, %v", records.deleted, records.created)
	}
}

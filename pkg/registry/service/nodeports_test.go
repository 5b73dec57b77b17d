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
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestRecordIsUpstreamsBitmap: the record is upstream's RangeAllocation:
// bit i of a big-endian big.Int is port Base+i, and it reads back.
func TestRecordIsUpstreamsBitmap(t *testing.T) {
	held := map[int32]bool{30000: true, 30008: true, 40000: true} // 40000 is outside
	data := DefaultRanges.NodePorts.bitmap(held)
	if want := []byte{0x01, 0x01}; !slices.Equal(data, want) {
		t.Errorf("bitmap: got %#v, want %#v", data, want)
	}
	got, err := portsOf(&corev1.RangeAllocation{Range: "30000-32767", Data: data})
	if want := map[int32]bool{30000: true, 30008: true}; err != nil || !maps.Equal(got, want) {
		t.Errorf("portsOf: got %v, %v; want %v", got, err, want)
	}
	// Another range's record is read in its range.
	got, err = portsOf(&corev1.RangeAllocation{Range: "31000-31009", Data: []byte{0x02}})
	if want := map[int32]bool{31001: true}; err != nil || !maps.Equal(got, want) {
		t.Errorf("portsOf in 31000-31009: got %v, %v; want %v", got, err, want)
	}
	if _, err := portsOf(&corev1.RangeAllocation{Range: "nope"}); err == nil {
		t.Error("portsOf a bad range: got no error")
	}
}

// TestRepairNodePorts: a repair records the ports Services hold, makes
// the record if absent, and releases a port no Service holds on the
// leakRounds-th repair in a row that finds it so (at once when alone),
// but never one a write of this server's is about to store.
func TestRepairNodePorts(t *testing.T) {
	services := []corev1.Service{holding("a", "", 30200), holding("b", "", 30300)}
	for _, alone := range []bool{false, true} {
		t.Run(fmt.Sprint("alone=", alone), func(t *testing.T) {
			record := &memPorts{}
			a := &allocator{ranges: DefaultRanges, ports: record, list: func(context.Context, bool) ([]corev1.Service, error) { return services, nil }}
			repair := func() map[int32]bool {
				t.Helper()
				if err := (&Storage{allocator: a}).RepairNodePorts(context.Background(), alone); err != nil {
					t.Fatal(err)
				}
				held, _ := record.held(context.Background())
				return held
			}
			if got, want := repair(), map[int32]bool{30200: true, 30300: true}; !maps.Equal(got, want) {
				t.Errorf("the record made: got %v, want %v", got, want)
			}
			record.ports[30100] = true // leaked
			record.ports[30400] = true // being written
			unhold := a.hold(&corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{NodePort: 30400}}}})
			rounds := 1
			for repair()[30100] {
				rounds++
			}
			if want := map[bool]int{false: leakRounds, true: 1}[alone]; rounds != want {
				t.Errorf("the leaked port was released by repair %d, want %d", rounds, want)
			}
			if got := repair(); !got[30400] || !got[30200] {
				t.Errorf("the record: got %v, want it holding 30200 (a Service's) and 30400 (being written)", got)
			}
			unhold()
		})
	}
}

// TestALeakHeldAgainStartsOver: a port found leaked, then held again,
// counts its rounds from the start when it leaks again.
func TestALeakHeldAgainStartsOver(t *testing.T) {
	var services []corev1.Service
	record := &memPorts{ports: map[int32]bool{30100: true}}
	a := &allocator{ranges: DefaultRanges, ports: record, list: func(context.Context, bool) ([]corev1.Service, error) { return services, nil }}
	s := &Storage{allocator: a}
	for range leakRounds - 1 {
		_ = s.RepairNodePorts(context.Background(), false)
	}
	services = []corev1.Service{holding("a", "", 30100)}
	_ = s.RepairNodePorts(context.Background(), false)
	services = nil
	for range leakRounds - 1 {
		_ = s.RepairNodePorts(context.Background(), false)
	}
	if !record.ports[30100] {
		t.Errorf("released after %d rounds leaked since it was held, want %d", leakRounds-1, leakRounds)
	}
}

// newRecordedServices returns the stores of services on mem, with the
// record of node ports beside them.
func newRecordedServices(t *testing.T, mem *registrytest.MemStorage) *Storage {
	t.Helper()
	s, err := New(mem.Options("services"), nil, Ranges{ClusterIPs: DefaultRanges.ClusterIPs, NodePorts: PortRange{Base: 30000, Size: 40}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// recordOf returns the ports mem's record holds.
func recordOf(t *testing.T, mem *registrytest.MemStorage) []int32 {
	t.Helper()
	obj, ok := mem.Stored(nodePortsKey)
	if !ok {
		return nil
	}
	held, err := portsOf(obj.(*corev1.RangeAllocation))
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(held))
}

func nodePortCreate(name string, nodePort int32) *corev1.Service {
	svc := holding(name, "", nodePort)
	svc.Spec.Ports[0].Name, svc.Spec.Ports[0].TargetPort = "", intstr.FromInt32(8080)
	api.Scheme.Default(&svc)
	return &svc
}

// TestTheRecordFollowsTheServices: through the stores, a create records
// its node port; an update records the one it gains and releases the one
// it gives up once stored; an update refused after recording releases
// it; a dry run records nothing, nor a status update asking for another
// (the spec stays); a delete releases its port.
func TestTheRecordFollowsTheServices(t *testing.T) {
	mem := registrytest.NewMemStorage()
	s := newRecordedServices(t, mem)
	if _, err := s.Services.Create(nsContext, nodePortCreate("web", 30001), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := recordOf(t, mem); !slices.Equal(got, []int32{30001}) {
		t.Errorf("after the create: recorded %v, want [30001]", got)
	}
	update := func(nodePort int32, validate rest.ValidateObjectUpdateFunc, dryRun []string) error {
		_, _, err := s.Services.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			svc := old.(*corev1.Service).DeepCopy()
			svc.Spec.Ports[0].NodePort = nodePort
			return svc, nil
		}), rest.ValidateAllObjectFunc, validate, false, &metav1.UpdateOptions{DryRun: dryRun})
		return err
	}
	refuse := func(context.Context, runtime.Object, runtime.Object) error {
		return apierrors.NewForbidden(corev1.Resource("services"), "web", fmt.Errorf("no"))
	}
	if err := update(30002, refuse, nil); !apierrors.IsForbidden(err) {
		t.Fatalf("a refused update: got %v, want 403", err)
	}
	if got := recordOf(t, mem); !slices.Equal(got, []int32{30001}) {
		t.Errorf("after a refused update: recorded %v, want [30001]", got)
	}
	if err := update(30003, rest.ValidateAllObjectUpdateFunc, []string{metav1.DryRunAll}); err != nil {
		t.Fatal(err)
	}
	if got := recordOf(t, mem); !slices.Equal(got, []int32{30001}) {
		t.Errorf("after a dry-run update: recorded %v, want [30001]", got)
	}
	if err := update(30004, rest.ValidateAllObjectUpdateFunc, nil); err != nil {
		t.Fatal(err)
	}
	if got := recordOf(t, mem); !slices.Equal(got, []int32{30004}) {
		t.Errorf("after an update to 30004: recorded %v, want [30004]", got)
	}
	// Through status, the spec stays as it was: so does the record.
	_, _, err := s.Status.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		svc := old.(*corev1.Service).DeepCopy()
		svc.Spec.Ports[0].NodePort = 30005
		return svc, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := recordOf(t, mem); !slices.Equal(got, []int32{30004}) {
		t.Errorf("after a status update asking for 30005: recorded %v, want [30004]", got)
	}
	if _, _, err := s.Services.Delete(nsContext, "web", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := recordOf(t, mem); len(got) != 0 {
		t.Errorf("after the delete: recorded %v, want none", got)
	}
}

// TestTwoAllocatorsOnOneRecord: two servers' stores on one storage (the
// MemStorage swaps as etcd does) create Services at once, half asking
// for a port the other also asks for: no port is handed out twice, and a
// port asked for is refused only when another Service holds it.
func TestTwoAllocatorsOnOneRecord(t *testing.T) {
	mem := registrytest.NewMemStorage()
	servers := []*Storage{newRecordedServices(t, mem), newRecordedServices(t, mem)}
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := map[string]int32{} // Service -> the port it asked for
	for i, s := range servers {
		for j := range 18 {
			var asked int32
			if j%2 == 0 {
				asked = 30000 + int32(j) // the other server asks for it too
			}
			name := fmt.Sprintf("s%d-%02d", i, j)
			wg.Go(func() {
				_, err := s.Services.Create(nsContext, nodePortCreate(name, asked), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
				switch {
				case err == nil:
				case asked != 0 && apierrors.IsInvalid(err) && strings.Contains(err.Error(), "provided port is already allocated"):
					mu.Lock()
					refused[name] = asked
					mu.Unlock()
				default:
					t.Errorf("create %s: %v", name, err)
				}
			})
		}
	}
	wg.Wait()
	list, err := servers[0].Services.List(nsContext, nil)
	if err != nil {
		t.Fatal(err)
	}
	holder := map[int32]string{}
	for _, svc := range list.(*corev1.ServiceList).Items {
		p := svc.Spec.Ports[0].NodePort
		if other, ok := holder[p]; ok {
			t.Errorf("Services %s and %s share node port %d", other, svc.Name, p)
		}
		holder[p] = svc.Name
	}
	for name, port := range refused {
		if holder[port] == "" {
			t.Errorf("%s was refused node port %d, which no Service holds", name, port)
		}
	}
	if len(refused) < 9 {
		t.Errorf("refused %d creates, want at least 9 (one of each pair asking for a port)", len(refused))
	}
	if got, want := recordOf(t, mem), slices.Sorted(maps.Keys(holder)); !slices.Equal(got, want) {
		t.Errorf("recorded %v, want the ports the Services hold, %v", got, want)
	}
}

// memPorts is a record of node ports in memory.
type memPorts struct {
	mu    sync.Mutex
	ports map[int32]bool // guarded by mu; nil until made
}

var _ portRecord = (*memPorts)(nil)

func (r *memPorts) held(context.Context) (map[int32]bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	held := map[int32]bool{}
	maps.Copy(held, r.ports)
	return held, nil
}

func (r *memPorts) update(_ context.Context, create bool, fn func(held map[int32]bool) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ports == nil && !create {
		return errNoRecord
	}
	held := map[int32]bool{}
	maps.Copy(held, r.ports)
	if err := fn(held); err != nil {
		return err
	}
	r.ports = held
	return nil
}

// allocateNew allocates for a new svc (no old, nothing taken), with a
// record of node ports in memory if a has none: the first allocation
// makes it from the services a lists.
func (a *allocator) allocateNew(ctx context.Context, svc *corev1.Service, dryRun bool) error {
	if a.ports == nil {
		a.ports = &memPorts{}
	}
	_, err := a.allocate(ctx, svc, nil, nil, dryRun)
	return err
}

// TestHealthCheckNodePort: a LoadBalancer whose external traffic stays
// local gets a health check node port, recorded with its node ports, as
// upstream's allocator gives one; one asked for and held is refused with
// upstream's 500; an update that leaves it out keeps it, one to traffic
// policy Cluster releases it, and the delete releases the rest.
func TestHealthCheckNodePort(t *testing.T) {
	mem := registrytest.NewMemStorage()
	s := newRecordedServices(t, mem)
	local := func(name string, nodePort, healthCheck int32) *corev1.Service {
		svc := nodePortCreate(name, nodePort)
		svc.Spec.Type, svc.Spec.ExternalTrafficPolicy = corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyLocal
		svc.Spec.HealthCheckNodePort = healthCheck
		api.Scheme.Default(svc)
		return svc
	}
	obj, err := s.Services.Create(nsContext, local("web", 30001, 0), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := obj.(*corev1.Service).Spec.HealthCheckNodePort
	if hc < 30000 || hc >= 30040 || hc == 30001 {
		t.Fatalf("healthCheckNodePort: got %d, want a free port of 30000-30039", hc)
	}
	if got, want := recordOf(t, mem), slices.Sorted(slices.Values([]int32{30001, hc})); !slices.Equal(got, want) {
		t.Errorf("after the create: recorded %v, want %v", got, want)
	}
	free := int32(30002)
	if hc == free {
		free++
	}
	_, err = s.Services.Create(nsContext, local("other", free, 30001), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if want := "Internal error occurred: failed to allocate requested HealthCheck NodePort 30001: provided port is already allocated"; err == nil || err.Error() != want || !apierrors.IsInternalError(err) {
		t.Errorf("a held health check port asked for: got %v, want 500 %q", err, want)
	}
	update := func(mutate func(*corev1.Service)) *corev1.Service {
		t.Helper()
		out, _, err := s.Services.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			svc := old.(*corev1.Service).DeepCopy()
			mutate(svc)
			return svc, nil
		}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out.(*corev1.Service)
	}
	if got := update(func(svc *corev1.Service) { svc.Spec.HealthCheckNodePort = 0 }).Spec.HealthCheckNodePort; got != hc {
		t.Errorf("an update that leaves it out: healthCheckNodePort %d, want %d kept", got, hc)
	}
	if got := update(func(svc *corev1.Service) { svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster }).Spec.HealthCheckNodePort; got != 0 {
		t.Errorf("to traffic policy Cluster: healthCheckNodePort %d, want 0", got)
	}
	if got := recordOf(t, mem); !slices.Equal(got, []int32{30001}) {
		t.Errorf("to traffic policy Cluster: recorded %v, want [30001]", got)
	}
	update(func(svc *corev1.Service) {
		svc.Spec.ExternalTrafficPolicy, svc.Spec.HealthCheckNodePort = corev1.ServiceExternalTrafficPolicyLocal, 30010
	})
	if got := recordOf(t, mem); !slices.Equal(got, []int32{30001, 30010}) {
		t.Errorf("back to Local, asking for 30010: recorded %v, want [30001 30010]", got)
	}
	if _, _, err := s.Services.Delete(nsContext, "web", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := recordOf(t, mem); len(got) != 0 {
		t.Errorf("after the delete: recorded %v, want none", got)
	}
}

func TestGainsNodePorts(t *testing.T) {
	oldPorts := []corev1.ServicePort{{NodePort: 30001}, {NodePort: 30002}}
	old := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: oldPorts,
		ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, HealthCheckNodePort: 30100}}
	tests := []struct {
		name        string
		ports       []corev1.ServicePort
		healthCheck int32 // with externalTrafficPolicy Local, else 0 and Cluster
		want        bool
	}{
		{name: "no ports"},
		{name: "the same", ports: oldPorts, healthCheck: 30100},
		{name: "fewer", ports: oldPorts[:1]},
		{name: "one missing", ports: []corev1.ServicePort{{NodePort: 30001}, {}}, want: true},
		{name: "one new", ports: []corev1.ServicePort{{NodePort: 30001}, {NodePort: 30003}}, want: true},
		{name: "a health check port missing", ports: oldPorts, healthCheck: -1, want: true},
		{name: "a new health check port", ports: oldPorts, healthCheck: 30101, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: tt.ports,
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster}}
			if tt.healthCheck != 0 {
				svc.Spec.ExternalTrafficPolicy, svc.Spec.HealthCheckNodePort = corev1.ServiceExternalTrafficPolicyLocal, max(tt.healthCheck, 0)
			}
			if got := gainsNodePorts(svc, old); got != tt.want {
				t.Errorf("gainsNodePorts: got %v, want %v", got, tt.want)
			}
		})
	}
}

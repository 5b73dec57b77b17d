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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// validService returns a defaulted ClusterIP service with an allocated IP.
func validService() *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Spec: corev1.ServiceSpec{
			ClusterIP:  "10.0.0.10",
			ClusterIPs: []string{"10.0.0.10"},
			Selector:   map[string]string{"app": "web"},
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	api.Scheme.Default(svc)
	return svc
}

func modified(svc *corev1.Service, mutate func(*corev1.Service)) *corev1.Service {
	svc = svc.DeepCopy()
	mutate(svc)
	return svc
}

func asExternalName(s *corev1.Service) {
	s.Spec.Type = corev1.ServiceTypeExternalName
	s.Spec.ExternalName = "db.example.com"
	s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.Selector = "", nil, nil
}

func asNodePort(s *corev1.Service) {
	s.Spec.Type = corev1.ServiceTypeNodePort
	s.Spec.Ports[0].NodePort = 30080
}

func TestStorage(t *testing.T) {
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	storages, err := NewStorage(registrytest.NewMemStorage().Options("services"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	var names []string
	for name := range storages {
		names = append(names, name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"services", "services/status"}, names); diff != "" {
		t.Fatalf("storage keys (-want +got):\n%s", diff)
	}
	store, ok := storages["services"].(*registry.REST)
	if !ok {
		t.Fatalf("services: got %T, want *registry.REST", storages["services"])
	}
	status, ok := storages["services/status"].(*registry.StatusREST)
	if !ok {
		t.Fatalf("services/status: got %T, want *registry.StatusREST", storages["services/status"])
	}
	if diff := cmp.Diff([]string{"svc"}, store.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"all"}, store.Categories()); diff != "" {
		t.Errorf("Categories (-want +got):\n%s", diff)
	}
	if !store.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got false, want true")
	}
	if store.BeginCreate == nil || store.BeginUpdate == nil {
		t.Errorf("BeginCreate/BeginUpdate: got nil, want the allocator's hooks")
	}
	if diff := cmp.Diff(registry.Fieldpaths("v1", "status"), store.GetResetFields(), equal); diff != "" {
		t.Errorf("reset fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(registry.Fieldpaths("v1", "spec"), status.GetResetFields(), equal); diff != "" {
		t.Errorf("status reset fields (-want +got):\n%s", diff)
	}
}

// TestPrepare: services keep no generation; a create clears status, an
// update keeps it, but for the load balancer's of a service that is no
// LoadBalancer (upstream's dropTypeDependentFields).
func TestPrepare(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "services")
	lb := corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.1"}}}}
	lbService := func() *corev1.Service {
		return modified(validService(), func(s *corev1.Service) { s.Spec.Type, s.Status = corev1.ServiceTypeLoadBalancer, lb })
	}
	svc := lbService()
	store.CreateStrategy.PrepareForCreate(context.Background(), svc)
	if diff := cmp.Diff(corev1.ServiceStatus{}, svc.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if svc.Generation != 0 {
		t.Errorf("generation after PrepareForCreate: got %d, want 0", svc.Generation)
	}
	old := lbService()
	obj := modified(old, func(s *corev1.Service) { s.Spec.Ports[0].Port = 81; s.Status = corev1.ServiceStatus{} })
	store.UpdateStrategy.PrepareForUpdate(context.Background(), obj, old)
	if diff := cmp.Diff(lb, obj.Status); diff != "" {
		t.Errorf("status after PrepareForUpdate (-want +got):\n%s", diff)
	}
	clusterIP := modified(old, func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP })
	store.UpdateStrategy.PrepareForUpdate(context.Background(), clusterIP, old)
	if diff := cmp.Diff(corev1.ServiceStatus{}, clusterIP.Status); diff != "" {
		t.Errorf("status after PrepareForUpdate to a ClusterIP service (-want +got):\n%s", diff)
	}
	if obj.Generation != 0 {
		t.Errorf("generation after PrepareForUpdate: got %d, want 0", obj.Generation)
	}
}

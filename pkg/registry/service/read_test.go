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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"
)

// TestExternalNameReadsWithoutTrafficPolicy: a Service made ExternalName
// keeps the internalTrafficPolicy defaulting gave it in storage, as
// upstream's does, and is read (get, list, the update's answer) without
// it; a ClusterIP Service is read with it.
func TestExternalNameReadsWithoutTrafficPolicy(t *testing.T) {
	s := newServices(t)
	withPolicy := modified(validService(), func(svc *corev1.Service) {
		svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	})
	current := s.seed(t, withPolicy)
	if got, err := s.store.Get(nsContext, current.Name, &metav1.GetOptions{}); err != nil || got.(*corev1.Service).Spec.InternalTrafficPolicy == nil {
		t.Fatalf("a ClusterIP Service read: %v, %v; want its internalTrafficPolicy", got, err)
	}
	update := modified(current, func(svc *corev1.Service) {
		svc.Spec.Type, svc.Spec.ExternalName = corev1.ServiceTypeExternalName, "db.example.com"
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = "", nil, nil, nil
	})
	updated, _, err := s.store.Update(nsContext, update.Name, rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update to ExternalName: %v", err)
	}
	got, err := s.store.Get(nsContext, current.Name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.store.List(nsContext, nil)
	if err != nil {
		t.Fatal(err)
	}
	for what, svc := range map[string]*corev1.Service{"the update's answer": updated.(*corev1.Service), "a get": got.(*corev1.Service), "a list": &list.(*corev1.ServiceList).Items[0]} {
		if svc.Spec.InternalTrafficPolicy != nil {
			t.Errorf("%s: internalTrafficPolicy %s, want none", what, *svc.Spec.InternalTrafficPolicy)
		}
	}
	key, _ := s.store.KeyFunc(nsContext, current.Name)
	if stored, _ := s.mem.Stored(key); stored.(*corev1.Service).Spec.InternalTrafficPolicy == nil {
		t.Errorf("stored: internalTrafficPolicy dropped, want it kept as upstream keeps it")
	}
}

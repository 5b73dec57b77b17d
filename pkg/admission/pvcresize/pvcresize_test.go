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

package pvcresize

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func claim(class string, size string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: phase},
	}
}

// TestResize: growing a claim needs it bound and its class to allow
// expansion; shrinking or keeping its size is left to validation.
func TestResize(t *testing.T) {
	factory := informers.NewSharedInformerFactory(fake.NewClientset(
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "grows"}, AllowVolumeExpansion: ptr.To(true)},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fixed"}},
	), 0)
	p := New()
	p.SetExternalKubeInformerFactory(factory)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	const fixedErr = `persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`
	tests := []struct {
		name     string
		old, pvc *corev1.PersistentVolumeClaim
		wantErr  string
	}{
		{"grows", claim("grows", "1Gi", corev1.ClaimBound), claim("grows", "2Gi", corev1.ClaimBound), ""},
		{"not bound", claim("grows", "1Gi", corev1.ClaimPending), claim("grows", "2Gi", corev1.ClaimPending),
			`persistentvolumeclaims "data" is forbidden: Only bound persistent volume claims can be expanded`},
		{"a class that does not allow it", claim("fixed", "1Gi", corev1.ClaimBound), claim("fixed", "2Gi", corev1.ClaimBound), fixedErr},
		{"an unknown class", claim("gone", "1Gi", corev1.ClaimBound), claim("gone", "2Gi", corev1.ClaimBound), fixedErr},
		{"shrinks", claim("fixed", "2Gi", corev1.ClaimPending), claim("fixed", "1Gi", corev1.ClaimPending), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admission.NewAttributesRecord(tt.pvc, tt.old, corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), "default", "data",
				corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), "", admission.Update, &metav1.UpdateOptions{}, false, &user.DefaultInfo{Name: "alice"})
			err := p.Validate(t.Context(), a, nil)
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Errorf("got error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

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

package namespace

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestFinalizeTakesUpdatesOnly: as upstream's, namespaces/finalize
// serves updates, not gets or patches.
func TestFinalizeTakesUpdatesOnly(t *testing.T) {
	var finalize any = newNamespaces(t).finalize
	if _, ok := finalize.(rest.Getter); ok {
		t.Error("namespaces/finalize serves get")
	}
	if _, ok := finalize.(rest.Patcher); ok {
		t.Error("namespaces/finalize serves patch")
	}
}

func TestFinalizeValidatesFinalizers(t *testing.T) {
	n := newNamespaces(t)
	current := n.seed(t, activeNamespace())
	update := registrytest.Modified(current, func(ns *corev1.Namespace) { ns.Spec.Finalizers = []corev1.FinalizerName{"bad finalizer!"} })
	_, _, err := n.finalize.Update(ctx(), "prod", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	// upstream's finalize, unlike its create and update, names the item
	registrytest.CheckInvalid(t, err, []string{"spec.finalizers[0]: FieldValueInvalid", "spec.finalizers[0]: FieldValueInvalid"})
	if got, _ := n.stored(t); !slices.Equal(got.Spec.Finalizers, current.Spec.Finalizers) {
		t.Errorf("stored finalizers: got %v, want %v (unchanged)", got.Spec.Finalizers, current.Spec.Finalizers)
	}
}

// TestUpdateThatEmptiesFinalizers checks when an update that leaves no
// spec.finalizers removes the namespace: only a deleted one, as upstream.
func TestUpdateThatEmptiesFinalizers(t *testing.T) {
	deleted := metav1.Now()
	tests := []struct {
		name        string
		terminating bool
		updater     func(namespaces) rest.Updater
		wantStored  bool
	}{
		{name: "finalize of a terminating namespace", terminating: true, updater: func(n namespaces) rest.Updater { return n.finalize }, wantStored: false},
		{name: "finalize of an active namespace", terminating: false, updater: func(n namespaces) rest.Updater { return n.finalize }, wantStored: true},
		{name: "status of a terminating namespace keeps its finalizers", terminating: true, updater: func(n namespaces) rest.Updater { return n.status }, wantStored: true},
		{name: "update of a terminating namespace keeps its finalizers", terminating: true, updater: func(n namespaces) rest.Updater { return n.store }, wantStored: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newNamespaces(t)
			ns := activeNamespace()
			if tt.terminating {
				ns.DeletionTimestamp = &deleted
				ns.Status.Phase = corev1.NamespaceTerminating
			}
			current := n.seed(t, ns)
			update := registrytest.Modified(current, func(ns *corev1.Namespace) { ns.Spec.Finalizers = nil })
			if _, _, err := tt.updater(n).Update(ctx(), "prod", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			if _, ok := n.stored(t); ok != tt.wantStored {
				t.Errorf("namespace stored after the update: got %v, want %v", ok, tt.wantStored)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	deleted := metav1.Now()
	errRefused := errors.New("refused")
	tests := []struct {
		name     string
		seed     *corev1.Namespace // nil: nothing stored
		options  *metav1.DeleteOptions
		validate rest.ValidateObjectFunc
		// wantErr checks the error; nil: no error.
		wantErr     func(error) bool
		wantDeleted bool
		// wantStoredPhase is the stored namespace's phase after, "" if it is gone.
		wantStoredPhase corev1.NamespacePhase
	}{
		{
			name:            "active with finalizers: marked Terminating",
			seed:            activeNamespace(),
			wantStoredPhase: corev1.NamespaceTerminating,
		},
		{
			name: "terminating with finalizers: conflict",
			seed: registrytest.Modified(activeNamespace(), func(ns *corev1.Namespace) {
				ns.DeletionTimestamp = &deleted
				ns.Status.Phase = corev1.NamespaceTerminating
			}),
			wantErr:         apierrors.IsConflict,
			wantStoredPhase: corev1.NamespaceTerminating,
		},
		{
			name:        "active without finalizers: removed at once",
			seed:        registrytest.Modified(activeNamespace(), func(ns *corev1.Namespace) { ns.Spec.Finalizers = nil }),
			wantDeleted: true,
		},
		{
			name: "terminating without finalizers: removed",
			seed: registrytest.Modified(activeNamespace(), func(ns *corev1.Namespace) {
				ns.DeletionTimestamp = &deleted
				ns.Status.Phase = corev1.NamespaceTerminating
				ns.Spec.Finalizers = nil
			}),
			wantDeleted: true,
		},
		{
			name:            "UID precondition that does not match: conflict",
			seed:            activeNamespace(),
			options:         &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("other"))}},
			wantErr:         apierrors.IsConflict,
			wantStoredPhase: corev1.NamespaceActive,
		},
		{
			name:            "resourceVersion precondition that does not match: conflict",
			seed:            activeNamespace(),
			options:         &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To("999")}},
			wantErr:         apierrors.IsConflict,
			wantStoredPhase: corev1.NamespaceActive,
		},
		{
			name:            "matching UID precondition",
			seed:            activeNamespace(),
			options:         &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("uid-1"))}},
			wantStoredPhase: corev1.NamespaceTerminating,
		},
		{
			name:            "deleteValidation refuses: unchanged",
			seed:            activeNamespace(),
			validate:        func(context.Context, runtime.Object) error { return errRefused },
			wantErr:         func(err error) bool { return errors.Is(err, errRefused) },
			wantStoredPhase: corev1.NamespaceActive,
		},
		{
			name:    "missing: not found",
			wantErr: apierrors.IsNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newNamespaces(t)
			if tt.seed != nil {
				n.seed(t, tt.seed)
			}
			validate := tt.validate
			if validate == nil {
				validate = rest.ValidateAllObjectFunc
			}
			out, gotDeleted, err := n.store.Delete(ctx(), "prod", validate, tt.options)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("Delete: got error %v, want none", err)
			case tt.wantErr != nil && (err == nil || !tt.wantErr(err)):
				t.Fatalf("Delete: got error %v, want a different one", err)
			}
			if gotDeleted != tt.wantDeleted {
				t.Errorf("Delete deleted: got %v, want %v", gotDeleted, tt.wantDeleted)
			}
			stored, ok := n.stored(t)
			switch {
			case tt.wantStoredPhase == "" && ok:
				t.Errorf("stored after Delete: got %v, want none", stored.Status.Phase)
			case tt.wantStoredPhase != "" && !ok:
				t.Errorf("stored after Delete: got none, want phase %q", tt.wantStoredPhase)
			case ok && stored.Status.Phase != tt.wantStoredPhase:
				t.Errorf("stored phase after Delete: got %q, want %q", stored.Status.Phase, tt.wantStoredPhase)
			}
			if err == nil && !tt.wantDeleted {
				ns := out.(*corev1.Namespace)
				if ns.DeletionTimestamp == nil || ns.Status.Phase != corev1.NamespaceTerminating {
					t.Errorf("returned namespace: got deletionTimestamp %v and phase %q, want set and Terminating", ns.DeletionTimestamp, ns.Status.Phase)
				}
			}
		})
	}
}

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

package garbagecollector

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var (
	configMaps   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	clusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
)

// object is an object's metadata for the tests: namespace "ns", named and
// with the UID name.
func object(name string, owners ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: name, UID: types.UID(name), OwnerReferences: owners}}
}

func clusterObject(name string, owners ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
	obj := object(name, owners...)
	obj.Namespace = ""
	return obj
}

// deleting returns obj being deleted with finalizer.
func deleting(obj *metav1.PartialObjectMetadata, finalizer string) *metav1.PartialObjectMetadata {
	obj = obj.DeepCopy()
	obj.DeletionTimestamp = new(metav1.Now())
	obj.Finalizers = append(obj.Finalizers, finalizer)
	return obj
}

// ownedBy is a reference to the ConfigMap name (UID name).
func ownedBy(name string, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: types.UID(name), BlockOwnerDeletion: new(block)}
}

// event is an informer event: an add (old nil), an update, or a delete (obj nil).
type event struct {
	resource schema.GroupVersionResource
	kind     string
	old, obj *metav1.PartialObjectMetadata
}

func add(obj *metav1.PartialObjectMetadata) event { return event{configMaps, "ConfigMap", nil, obj} }
func update(old, obj *metav1.PartialObjectMetadata) event {
	return event{configMaps, "ConfigMap", old, obj}
}
func remove(obj *metav1.PartialObjectMetadata) event { return event{configMaps, "ConfigMap", obj, nil} }

func (e event) apply(g *graph) (toDelete, toOrphan []types.UID) {
	if e.obj == nil {
		return g.remove(e.old.UID), nil
	}
	return g.observe(newNode(e.resource, e.kind, e.obj), e.old, e.obj)
}

func TestGraph(t *testing.T) {
	tests := []struct {
		name string
		// before sets the graph up; what the last event returns is checked.
		before       []event
		last         event
		wantDelete   []types.UID
		wantOrphan   []types.UID
		wantBlocking map[types.UID][]types.UID
	}{{
		name:       "a dependent of an owner not observed is looked at",
		last:       add(object("dep", ownedBy("owner", false))),
		wantDelete: []types.UID{"dep"},
	}, {
		name:         "a dependent of an observed owner is not",
		before:       []event{add(object("owner"))},
		last:         add(object("dep", ownedBy("owner", true))),
		wantBlocking: map[types.UID][]types.UID{"owner": {"dep"}},
	}, {
		name:       "a dependent naming its observed owner by another name is looked at",
		before:     []event{add(object("owner"))},
		last:       add(object("dep", metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "owner"})),
		wantDelete: []types.UID{"dep"},
	}, {
		name: "a dependent in another namespace than its namespaced owner is looked at",
		before: []event{add(func() *metav1.PartialObjectMetadata {
			o := object("owner")
			o.Namespace = "elsewhere"
			return o
		}())},
		last:       add(object("dep", ownedBy("owner", false))),
		wantDelete: []types.UID{"dep"},
	}, {
		name:   "a namespaced dependent of an observed cluster-scoped owner is not",
		before: []event{{clusterRoles, "ClusterRole", nil, clusterObject("owner")}},
		last: add(object("dep", metav1.OwnerReference{
			APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "owner", UID: "owner"})),
	}, {
		name:       "a dependent seen before its owner, by another name, is looked at when the owner is",
		before:     []event{add(object("dep", metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "owner"}))},
		last:       add(object("owner")),
		wantDelete: []types.UID{"dep"},
	}, {
		name:       "an owner deleted: its dependents are looked at",
		before:     []event{add(object("owner")), add(object("dep", ownedBy("owner", false)))},
		last:       remove(object("owner")),
		wantDelete: []types.UID{"dep"},
	}, {
		name: "a dependent deleted: its owner deleting its dependents is looked at",
		before: []event{
			add(deleting(object("owner"), metav1.FinalizerDeleteDependents)),
			add(object("dep", ownedBy("owner", true))),
		},
		last:       remove(object("dep", ownedBy("owner", true))),
		wantDelete: []types.UID{"owner"},
	}, {
		name:         "a foreground deletion starts: the owner and its dependents are looked at",
		before:       []event{add(object("owner")), add(object("dep", ownedBy("owner", true))), add(object("other", ownedBy("owner", false)))},
		last:         update(object("owner"), deleting(object("owner"), metav1.FinalizerDeleteDependents)),
		wantDelete:   []types.UID{"dep", "other", "owner"},
		wantBlocking: map[types.UID][]types.UID{"owner": {"dep"}},
	}, {
		name: "an update of an owner deleting its dependents does not start it again",
		before: []event{
			add(object("owner")),
			update(object("owner"), deleting(object("owner"), metav1.FinalizerDeleteDependents)),
		},
		last: update(deleting(object("owner"), metav1.FinalizerDeleteDependents), deleting(object("owner"), metav1.FinalizerDeleteDependents)),
	}, {
		name:       "an orphan deletion starts: the owner is orphaned",
		before:     []event{add(object("owner")), add(object("dep", ownedBy("owner", true)))},
		last:       update(object("owner"), deleting(object("owner"), metav1.FinalizerOrphanDependents)),
		wantOrphan: []types.UID{"owner"},
	}, {
		name: "a dependent unblocking its owner deleting its dependents: the owner is looked at",
		before: []event{
			add(deleting(object("owner"), metav1.FinalizerDeleteDependents)),
			add(object("dep", ownedBy("owner", true))),
		},
		last:         update(object("dep", ownedBy("owner", true)), object("dep", ownedBy("owner", false))),
		wantDelete:   []types.UID{"owner"},
		wantBlocking: map[types.UID][]types.UID{"owner": nil},
	}, {
		name:         "a dependent dropping its reference leaves the index",
		before:       []event{add(object("owner")), add(object("dep", ownedBy("owner", true)))},
		last:         update(object("dep", ownedBy("owner", true)), object("dep")),
		wantBlocking: map[types.UID][]types.UID{"owner": nil},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph()
			for _, e := range tt.before {
				e.apply(g)
			}
			toDelete, toOrphan := tt.last.apply(g)
			slices.Sort(toDelete)
			if diff := cmp.Diff(tt.wantDelete, toDelete); diff != "" {
				t.Errorf("to delete (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOrphan, toOrphan); diff != "" {
				t.Errorf("to orphan (-want +got):\n%s", diff)
			}
			for owner, want := range tt.wantBlocking {
				var got []types.UID
				for _, dep := range g.blockingDependents(owner) {
					got = append(got, dep.uid)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("blocking dependents of %s (-want +got):\n%s", owner, diff)
				}
			}
		})
	}
}

// TestGraphIndexHoldsOnlyObservedObjects checks that removing objects leaves
// no index entry behind.
func TestGraphIndexHoldsOnlyObservedObjects(t *testing.T) {
	g := newGraph()
	for _, e := range []event{
		add(object("owner")), add(object("a", ownedBy("owner", true))), add(object("b", ownedBy("owner", false), ownedBy("a", true))),
		remove(object("owner")), remove(object("a", ownedBy("owner", true))), remove(object("b")),
	} {
		e.apply(g)
	}
	if len(g.objects) != 0 || len(g.dependents) != 0 {
		t.Errorf("got objects %v, dependents %v; want none", g.objects, g.dependents)
	}
}

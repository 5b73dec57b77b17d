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
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// node is an object as a monitor last observed it. Nodes are never changed
// once in the graph (an update replaces the node), so workers read them
// without the graph's lock.
type node struct {
	resource  schema.GroupVersionResource
	kind      string
	namespace string
	name      string
	uid       types.UID
	owners    []metav1.OwnerReference
	// deletingDependents: the object is being deleted in the foreground (it
	// has a deletionTimestamp and the foregroundDeletion finalizer).
	deletingDependents bool
}

func newNode(resource schema.GroupVersionResource, kind string, obj *metav1.PartialObjectMetadata) *node {
	return &node{
		resource:           resource,
		kind:               kind,
		namespace:          obj.Namespace,
		name:               obj.Name,
		uid:                obj.UID,
		owners:             obj.OwnerReferences,
		deletingDependents: deletingWith(obj, metav1.FinalizerDeleteDependents),
	}
}

// ownerReference returns n's reference to the owner uid, if n (which may be
// nil) has one.
func (n *node) ownerReference(uid types.UID) (metav1.OwnerReference, bool) {
	if n == nil {
		return metav1.OwnerReference{}, false
	}
	i := slices.IndexFunc(n.owners, func(ref metav1.OwnerReference) bool { return ref.UID == uid })
	if i < 0 {
		return metav1.OwnerReference{}, false
	}
	return n.owners[i], true
}

// graph is what the monitors have observed: the objects, and which objects
// refer to each owner UID (upstream's uidToNode and node.dependents). Its
// methods return the UIDs that their change sends to the workers.
type graph struct {
	mu sync.Mutex
	// objects and dependents are guarded by mu. dependents maps an owner's
	// UID, observed or not, to the UIDs of the observed objects that refer
	// to it: every UID in it is in objects.
	objects    map[types.UID]*node
	dependents map[types.UID]sets.Set[types.UID]
}

func newGraph() *graph {
	return &graph{objects: map[types.UID]*node{}, dependents: map[types.UID]sets.Set[types.UID]{}}
}

// observe records n, seen by an informer as obj (old is what the informer
// had before, nil on an add). It returns the objects to attempt to delete
// and the owners whose dependents to orphan.
func (g *graph) observe(n *node, old, obj *metav1.PartialObjectMetadata) (toDelete, toOrphan []types.UID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	prev := g.objects[n.uid]
	g.objects[n.uid] = n
	var prevOwners []metav1.OwnerReference
	if prev != nil {
		prevOwners = prev.owners
	} else {
		// Dependents seen before n that name it by other coordinates (kind,
		// name or namespace): their references may be dangling.
		for dep := range g.dependents[n.uid] {
			if ref, _ := g.objects[dep].ownerReference(n.uid); !refersTo(ref, g.objects[dep], n) {
				toDelete = append(toDelete, dep)
			}
		}
	}

	for _, ref := range prevOwners {
		if _, ok := n.ownerReference(ref.UID); !ok {
			g.unindexLocked(ref.UID, n.uid)
		}
	}
	verify := false
	for _, ref := range n.owners {
		if prevRef, ok := prev.ownerReference(ref.UID); ok && sameCoordinates(prevRef, ref) {
			continue
		}
		g.indexLocked(ref.UID, n.uid)
		// An owner not observed (yet?), or not the one observed: a worker
		// looks it up.
		owner := g.objects[ref.UID]
		if owner == nil || !refersTo(ref, n, owner) || owner.deletingDependents {
			verify = true
		}
	}
	if verify {
		toDelete = append(toDelete, n.uid)
	}
	// An owner deleting its dependents that n no longer blocks may be done.
	for _, uid := range unblockedOwners(prevOwners, n.owners) {
		if owner := g.objects[uid]; owner != nil && owner.deletingDependents {
			toDelete = append(toDelete, uid)
		}
	}

	if deletionStartsWith(old, obj, metav1.FinalizerOrphanDependents) {
		toOrphan = append(toOrphan, n.uid)
	}
	if deletionStartsWith(old, obj, metav1.FinalizerDeleteDependents) {
		toDelete = append(toDelete, g.dependents[n.uid].UnsortedList()...)
		toDelete = append(toDelete, n.uid)
	}
	return toDelete, toOrphan
}

// remove forgets the object uid, deleted (or found gone by a worker). It
// returns its dependents, which may have no owner left, and its owners that
// are deleting their dependents, which may now be done.
func (g *graph) remove(uid types.UID) (toDelete []types.UID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.objects[uid]
	if n == nil {
		return nil
	}
	delete(g.objects, uid)
	for _, ref := range n.owners {
		g.unindexLocked(ref.UID, uid)
		if owner := g.objects[ref.UID]; owner != nil && owner.deletingDependents {
			toDelete = append(toDelete, ref.UID)
		}
	}
	// The dependents keep their entry: they still refer to uid.
	return append(toDelete, g.dependents[uid].UnsortedList()...)
}

func (g *graph) indexLocked(owner, dependent types.UID) {
	if g.dependents[owner] == nil {
		g.dependents[owner] = sets.New[types.UID]()
	}
	g.dependents[owner].Insert(dependent)
}

func (g *graph) unindexLocked(owner, dependent types.UID) {
	g.dependents[owner].Delete(dependent)
	if g.dependents[owner].Len() == 0 {
		delete(g.dependents, owner)
	}
}

// node returns the object uid as last observed, or nil.
func (g *graph) node(uid types.UID) *node {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.objects[uid]
}

// dependentsOf returns the observed objects that refer to the owner uid.
func (g *graph) dependentsOf(uid types.UID) []*node {
	g.mu.Lock()
	defer g.mu.Unlock()
	var deps []*node
	for dep := range g.dependents[uid] {
		deps = append(deps, g.objects[dep])
	}
	return deps
}

// blockingDependents returns the dependents of uid whose reference to it
// has blockOwnerDeletion.
func (g *graph) blockingDependents(uid types.UID) []*node {
	deps := g.dependentsOf(uid)
	return slices.DeleteFunc(deps, func(dep *node) bool {
		ref, _ := dep.ownerReference(uid)
		return ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion
	})
}

// objectsOf returns the UIDs of the observed objects of resource.
func (g *graph) objectsOf(resource schema.GroupVersionResource) []types.UID {
	g.mu.Lock()
	defer g.mu.Unlock()
	var uids []types.UID
	for uid, n := range g.objects {
		if n.resource == resource {
			uids = append(uids, uid)
		}
	}
	return uids
}

// refersTo reports whether ref, held by dependent, names owner: same group,
// kind and name (any version), and for a namespaced owner the dependent's
// namespace (ownerReferences carry none).
func refersTo(ref metav1.OwnerReference, dependent, owner *node) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && ref.UID == owner.uid && gv.Group == owner.resource.Group && ref.Kind == owner.kind &&
		ref.Name == owner.name && (owner.namespace == "" || owner.namespace == dependent.namespace)
}

func sameCoordinates(a, b metav1.OwnerReference) bool {
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID
}

// unblockedOwners returns the owners that before had a reference with
// blockOwnerDeletion and now have none (upstream's addUnblockedOwnersToDeleteQueue).
func unblockedOwners(before, after []metav1.OwnerReference) []types.UID {
	var uids []types.UID
	for _, ref := range before {
		if !blocks(ref) {
			continue
		}
		i := slices.IndexFunc(after, func(r metav1.OwnerReference) bool { return r.UID == ref.UID })
		if i < 0 || !blocks(after[i]) {
			uids = append(uids, ref.UID)
		}
	}
	return uids
}

func blocks(ref metav1.OwnerReference) bool {
	return ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
}

// deletingWith reports whether obj is being deleted and still has finalizer.
func deletingWith(obj *metav1.PartialObjectMetadata, finalizer string) bool {
	return obj != nil && obj.DeletionTimestamp != nil && slices.Contains(obj.Finalizers, finalizer)
}

// deletionStartsWith reports whether obj is being deleted with finalizer
// and old was not (upstream's deletionStartsWithFinalizer).
func deletionStartsWith(old, obj *metav1.PartialObjectMetadata, finalizer string) bool {
	return deletingWith(obj, finalizer) && !deletingWith(old, finalizer)
}

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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// errNamespacedOwnerOfClusterScopedObject: a cluster-scoped object can only
// be owned by cluster-scoped objects; retrying would not help.
var errNamespacedOwnerOfClusterScopedObject = errors.New("cluster-scoped object refers to a namespaced owner")

// attemptToDeleteItem looks at the object uid, live (upstream's
// attemptToDeleteItem): if it is being deleted in the foreground, it
// finishes once no dependent blocks it; if none of its owners exists, it is
// deleted; if some do, the references to the others are removed. It asks to
// be requeued while an owner it found is not observed yet, so that the
// owner's deletion is not missed.
func (c *Collector) attemptToDeleteItem(ctx context.Context, uid types.UID) (requeue bool, err error) {
	n := c.graph.node(uid)
	if n == nil {
		return false, nil // gone since it was queued
	}
	logger := klog.FromContext(ctx).WithValues("resource", n.resource, "object", klog.KRef(n.namespace, n.name))
	defer func() {
		if err != nil {
			err = fmt.Errorf("%s %s: %w", n.resource.Resource, klog.KRef(n.namespace, n.name), err)
		}
	}()
	latest, err := c.client(n).Get(ctx, n.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || err == nil && latest.UID != uid:
		// Gone, and its informer has not said so yet.
		c.enqueue(c.graph.remove(uid), nil)
		return false, nil
	case err != nil:
		return false, err
	case latest.DeletionTimestamp != nil:
		// A one-way trip: its dependents are looked at once it is gone,
		// unless it waits for them.
		if deletingWith(latest, metav1.FinalizerDeleteDependents) {
			return false, c.processDeletingDependents(ctx, n)
		}
		return false, nil
	case len(latest.OwnerReferences) == 0:
		return false, nil
	}
	return c.collect(klog.NewContext(ctx, logger), n, latest)
}

// collect deletes n, as latest, if none of its owners exists (or they all
// wait for its deletion), or else removes its references to those that
// do not or that wait.
func (c *Collector) collect(ctx context.Context, n *node, latest *metav1.PartialObjectMetadata) (requeue bool, err error) {
	logger := klog.FromContext(ctx)
	refs, err := c.classifyReferences(ctx, n, latest.OwnerReferences)
	switch {
	case errors.Is(err, errNamespacedOwnerOfClusterScopedObject):
		logger.V(2).Info("Not garbage collecting", "err", err)
		return false, nil
	case meta.IsNoMatchError(err):
		c.unknownKindsMu.Lock()
		c.unknownKinds.Insert(n.uid)
		c.unknownKindsMu.Unlock()
		return false, err
	case err != nil:
		return false, err
	}
	switch {
	case len(refs.solid) != 0:
		// Owners waiting for their dependents' deletion would wait forever.
		gone := slices.Concat(refs.dangling, refs.waiting)
		if len(gone) != 0 {
			logger.V(2).Info("Removing ownerReferences to owners that are gone or deleting", "owners", ownerUIDs(gone))
			err = c.updateOwnerReferences(ctx, n, func(ref metav1.OwnerReference) *metav1.OwnerReference {
				if slices.ContainsFunc(gone, func(g metav1.OwnerReference) bool { return g.UID == ref.UID }) {
					return nil
				}
				return &ref
			})
		}
		return refs.unobserved, err
	case len(refs.waiting) != 0 && len(c.graph.dependentsOf(n.uid)) != 0:
		// Its owner waits for it, and it has dependents of its own: delete
		// it in the foreground too. If one of them also waits for its
		// dependents, unblock its owners first, lest they wait for each
		// other in a cycle.
		if slices.ContainsFunc(c.graph.dependentsOf(n.uid), func(d *node) bool { return d.deletingDependents }) {
			err := c.updateOwnerReferences(ctx, n, func(ref metav1.OwnerReference) *metav1.OwnerReference {
				if blocks(ref) {
					ref.BlockOwnerDeletion = new(false)
				}
				return &ref
			})
			if err != nil {
				return false, err
			}
		}
		return false, c.deleteObject(ctx, n, latest, metav1.DeletePropagationForeground)
	default:
		// No owner left but those waiting for its deletion: delete it, with
		// the policy its finalizers already chose, if any.
		policy := metav1.DeletePropagationBackground
		switch {
		case slices.Contains(latest.Finalizers, metav1.FinalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case slices.Contains(latest.Finalizers, metav1.FinalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		logger.V(2).Info("Garbage collecting object", "propagationPolicy", policy)
		return false, c.deleteObject(ctx, n, latest, policy)
	}
}

// processDeletingDependents deletes the dependents that block n, or, once
// there are none, removes its foregroundDeletion finalizer.
func (c *Collector) processDeletingDependents(ctx context.Context, n *node) error {
	blocking := c.graph.blockingDependents(n.uid)
	if len(blocking) == 0 {
		klog.FromContext(ctx).V(2).Info("No dependent blocks the deletion any more", "resource", n.resource, "object", klog.KRef(n.namespace, n.name))
		return c.removeFinalizer(ctx, n, metav1.FinalizerDeleteDependents)
	}
	for _, dep := range blocking {
		if !dep.deletingDependents {
			c.attemptToDelete.Add(dep.uid)
		}
	}
	return nil
}

// attemptToOrphanItem removes the owner uid from its dependents'
// ownerReferences, then its orphan finalizer.
func (c *Collector) attemptToOrphanItem(ctx context.Context, uid types.UID) (requeue bool, err error) {
	owner := c.graph.node(uid)
	if owner == nil {
		return false, nil
	}
	var errs []error
	for _, dep := range c.graph.dependentsOf(uid) {
		err := c.updateOwnerReferences(ctx, dep, func(ref metav1.OwnerReference) *metav1.OwnerReference {
			if ref.UID == uid {
				return nil
			}
			return &ref
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("orphaning %s %s: %w", dep.resource.Resource, klog.KRef(dep.namespace, dep.name), err))
		}
	}
	if len(errs) != 0 {
		return false, fmt.Errorf("orphaning the dependents of %s %s: %w", owner.resource.Resource, klog.KRef(owner.namespace, owner.name), utilerrors.NewAggregate(errs))
	}
	klog.FromContext(ctx).V(2).Info("Dependents orphaned", "resource", owner.resource, "object", klog.KRef(owner.namespace, owner.name))
	return false, c.removeFinalizer(ctx, owner, metav1.FinalizerOrphanDependents)
}

// references are an object's ownerReferences by the state of their owner.
type references struct {
	// solid owners exist and are not deleting their dependents; dangling
	// ones do not exist; waiting ones are being deleted in the foreground.
	solid, dangling, waiting []metav1.OwnerReference
	// unobserved: some solid owner is not in the graph (yet).
	unobserved bool
}

// classifyReferences looks each owner up, live.
func (c *Collector) classifyReferences(ctx context.Context, n *node, refs []metav1.OwnerReference) (references, error) {
	var r references
	for _, ref := range refs {
		owner, err := c.liveOwner(ctx, n, ref)
		switch {
		case err != nil:
			return references{}, err
		case owner == nil:
			r.dangling = append(r.dangling, ref)
		case deletingWith(owner, metav1.FinalizerDeleteDependents):
			r.waiting = append(r.waiting, ref)
		default:
			r.solid = append(r.solid, ref)
			r.unobserved = r.unobserved || c.graph.node(ref.UID) == nil
		}
	}
	return r, nil
}

// liveOwner gets the owner ref of n from the server, or nil if it does not
// exist: none by that name, or one with another UID (upstream's isDangling).
// A namespaced owner is looked for in n's namespace.
func (c *Collector) liveOwner(ctx context.Context, n *node, ref metav1.OwnerReference) (*metav1.PartialObjectMetadata, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	mapping, err := c.mapper.RESTMappingWithContext(ctx, gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, fmt.Errorf("owner %s: %w", ref.Name, err)
	}
	namespace := ""
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if n.namespace == "" {
			return nil, fmt.Errorf("%w: %s %s", errNamespacedOwnerOfClusterScopedObject, ref.Kind, ref.Name)
		}
		namespace = n.namespace
	}
	owner, err := c.metadata.Resource(mapping.Resource).Namespace(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case owner.UID != ref.UID:
		return nil, nil
	}
	return owner, nil
}

// deleteObject deletes n as latest, with the propagation policy given. If
// n changed since, but not its ownerReferences, it deletes anyway, so that
// frequent unrelated updates do not keep it from being collected.
func (c *Collector) deleteObject(ctx context.Context, n *node, latest *metav1.PartialObjectMetadata, policy metav1.DeletionPropagation) error {
	uid, rv := latest.UID, latest.ResourceVersion
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, PropagationPolicy: &policy}
	client := c.client(n)
	err := client.Delete(ctx, n.name, opts)
	if apierrors.IsConflict(err) {
		live, getErr := client.Get(ctx, n.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(getErr):
			return nil
		case getErr == nil && live.UID == uid && equality.Semantic.DeepEqual(live.OwnerReferences, latest.OwnerReferences):
			opts.Preconditions.ResourceVersion = nil
			err = client.Delete(ctx, n.name, opts)
		}
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// removeFinalizer removes finalizer from n, retrying on conflicts.
func (c *Collector) removeFinalizer(ctx context.Context, n *node, finalizer string) error {
	return c.patchLive(ctx, n, func(live *metav1.PartialObjectMetadata) map[string]any {
		finalizers := slices.DeleteFunc(slices.Clone(live.Finalizers), func(f string) bool { return f == finalizer })
		if len(finalizers) == len(live.Finalizers) {
			return nil
		}
		return map[string]any{"finalizers": finalizers}
	})
}

// updateOwnerReferences replaces each of n's ownerReferences by what update
// returns for it (nil: remove it), retrying on conflicts.
func (c *Collector) updateOwnerReferences(ctx context.Context, n *node, update func(metav1.OwnerReference) *metav1.OwnerReference) error {
	return c.patchLive(ctx, n, func(live *metav1.PartialObjectMetadata) map[string]any {
		refs := []metav1.OwnerReference{}
		for _, ref := range live.OwnerReferences {
			if updated := update(ref); updated != nil {
				refs = append(refs, *updated)
			}
		}
		if equality.Semantic.DeepEqual(refs, live.OwnerReferences) {
			return nil
		}
		return map[string]any{"ownerReferences": refs}
	})
}

// patchLive gets n and merge-patches the metadata fields change returns
// for it (nothing if nil), at the resourceVersion it got, retrying on
// conflicts. An object gone, or replaced, needs no patch.
func (c *Collector) patchLive(ctx context.Context, n *node, change func(*metav1.PartialObjectMetadata) map[string]any) error {
	client := c.client(n)
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		live, err := client.Get(ctx, n.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		fields := change(live)
		if live.UID != n.uid || fields == nil {
			return nil
		}
		fields["resourceVersion"] = live.ResourceVersion
		patch, err := json.Marshal(map[string]any{"metadata": fields})
		if err != nil {
			return err
		}
		_, err = client.Patch(ctx, n.name, types.MergePatchType, patch, metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

func (c *Collector) client(n *node) metadata.ResourceInterface {
	return c.metadata.Resource(n.resource).Namespace(n.namespace)
}

func ownerUIDs(refs []metav1.OwnerReference) []types.UID {
	uids := make([]types.UID, 0, len(refs))
	for _, ref := range refs {
		uids = append(uids, ref.UID)
	}
	return uids
}

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

package controllers

import (
	"context"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestGarbageCollector checks the garbage collector (--enable-garbage-collector)
// against upstream's semantics, each case in its own namespace of one server.
func TestGarbageCollector(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t, testserver.WithGarbageCollector())
	dyn := dynamic.NewForConfigOrDie(s.Config)
	in := func(t *testing.T) gcObjects {
		return gcObjects{dyn: dyn, ns: framework.CreateNamespace(t, client)}
	}
	configMaps, secrets := served("", "configmaps"), served("", "secrets")

	// An owner deleted (background, the default): its dependents go.
	t.Run("Background", func(t *testing.T) {
		o := in(t)
		owner := o.create(t, configMaps, "owner")
		o.create(t, secrets, "dependent", ownerRefTo(owner, false))
		o.create(t, served("apps", "deployments"), "dependent", ownerRefTo(owner, true))
		o.delete(t, configMaps, "owner", metav1.DeletePropagationBackground)
		o.waitDeleted(t, secrets, "dependent")
		o.waitDeleted(t, served("apps", "deployments"), "dependent")
	})

	// A dependent created with an owner that never existed, or that was
	// replaced by one with another UID, goes.
	t.Run("AbsentOwners", func(t *testing.T) {
		o := in(t)
		o.create(t, secrets, "ghost-owned", neverExisted())
		replaced := ownerRefTo(o.create(t, configMaps, "replaced"), false)
		replaced.UID = uuid.NewUUID()
		o.create(t, secrets, "replaced-owned", replaced)
		o.waitDeleted(t, secrets, "ghost-owned")
		o.waitDeleted(t, secrets, "replaced-owned")
	})

	// A dependent with an owner left loses only the reference to the other.
	t.Run("TwoOwnersOneDeleted", func(t *testing.T) {
		o := in(t)
		first := o.create(t, configMaps, "first")
		second := o.create(t, configMaps, "second")
		o.create(t, secrets, "dependent", ownerRefTo(first, true), ownerRefTo(second, true))
		o.delete(t, configMaps, "first", metav1.DeletePropagationBackground)
		framework.WaitUntil(t, func() bool {
			return slices.Equal(o.ownerUIDs(t, secrets, "dependent"), []types.UID{second.GetUID()})
		}, "dependent left with only the second owner")
	})

	// An owner deleted in the foreground stays, with a deletionTimestamp,
	// until its blocking dependents are gone.
	t.Run("Foreground", func(t *testing.T) {
		o := in(t)
		owner := o.create(t, configMaps, "owner")
		ghost := neverExisted()
		held := framework.NewObject("v1", "Secret", "held", nil)
		held.SetFinalizers([]string{"example.com/hold"})
		o.createObject(t, secrets, held, ownerRefTo(owner, true), ghost)
		o.create(t, configMaps, "not-blocking", ownerRefTo(owner, false))
		o.waitSeenByCollector(t, secrets, "held", ghost)

		o.delete(t, configMaps, "owner", metav1.DeletePropagationForeground)
		framework.WaitUntil(t, func() bool {
			obj, err := o.client(secrets).Get(t.Context(), "held", metav1.GetOptions{})
			return err == nil && obj.GetDeletionTimestamp() != nil
		}, "the blocking dependent deleted (held by its finalizer)")
		got, err := o.client(configMaps).Get(t.Context(), "owner", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("owner while a blocking dependent exists: %v", err)
		}
		if got.GetDeletionTimestamp() == nil || !slices.Contains(got.GetFinalizers(), metav1.FinalizerDeleteDependents) {
			t.Errorf("owner while a blocking dependent exists: got deletionTimestamp %v, finalizers %v; want one, and %s",
				got.GetDeletionTimestamp(), got.GetFinalizers(), metav1.FinalizerDeleteDependents)
		}

		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := o.client(secrets).Patch(t.Context(), "held", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		o.waitDeleted(t, secrets, "held")
		o.waitDeleted(t, configMaps, "owner")
		o.waitDeleted(t, configMaps, "not-blocking")
	})

	// An owner deleted with the orphan policy goes; its dependents stay,
	// without their reference to it.
	t.Run("Orphan", func(t *testing.T) {
		o := in(t)
		owner := o.create(t, configMaps, "owner")
		other := o.create(t, configMaps, "other")
		ghost := neverExisted()
		o.create(t, secrets, "dependent", ownerRefTo(owner, true), ghost, ownerRefTo(other, false))
		o.waitSeenByCollector(t, secrets, "dependent", ghost)

		o.delete(t, configMaps, "owner", metav1.DeletePropagationOrphan)
		o.waitDeleted(t, configMaps, "owner")
		if got := o.ownerUIDs(t, secrets, "dependent"); !slices.Equal(got, []types.UID{other.GetUID()}) {
			t.Errorf("orphaned dependent's owners: got %v, want only %v", got, other.GetUID())
		}
	})

	// Cluster-scoped owners own cluster-scoped and namespaced dependents.
	t.Run("ClusterScopedOwner", func(t *testing.T) {
		o := in(t)
		clusterRoles := served("rbac.authorization.k8s.io", "clusterroles")
		owner := o.create(t, clusterRoles, "owner")
		o.create(t, clusterRoles, "dependent", ownerRefTo(owner, true))
		o.create(t, configMaps, "dependent", ownerRefTo(owner, true))
		o.delete(t, clusterRoles, "owner", metav1.DeletePropagationBackground)
		o.waitDeleted(t, clusterRoles, "dependent")
		o.waitDeleted(t, configMaps, "dependent")
	})

	// A dependent of every resource served (but events, which the
	// collector ignores, as upstream's) goes with its owner.
	t.Run("EveryResource", func(t *testing.T) {
		o := in(t)
		owner := o.create(t, configMaps, "owner")
		clusterOwner := o.create(t, served("", "namespaces"), "owner")
		for _, r := range framework.ServedResources {
			if r.GVR.Resource == "events" {
				continue
			}
			if r.Cluster {
				o.create(t, r, "dependent", ownerRefTo(clusterOwner, false))
			} else {
				o.create(t, r, "dependent", ownerRefTo(owner, false))
			}
		}
		o.delete(t, configMaps, "owner", metav1.DeletePropagationBackground)
		o.delete(t, served("", "namespaces"), "owner", metav1.DeletePropagationBackground)
		for _, r := range framework.ServedResources {
			if r.GVR.Resource != "events" {
				o.waitDeleted(t, r, "dependent")
			}
		}
	})

	// Custom resources are watched within seconds of their CRD: a custom
	// resource owning a ConfigMap, and a ConfigMap owning a custom resource.
	t.Run("CustomResources", func(t *testing.T) {
		o := in(t)
		widgets := framework.ServedResource{GVR: createWidgetCRD(t, s.Config), Kind: "Widget"}
		established := time.Now()
		crOwner := o.create(t, widgets, "owner")
		o.create(t, configMaps, "owned-by-widget", ownerRefTo(crOwner, true))
		cmOwner := o.create(t, configMaps, "owner")
		o.create(t, widgets, "owned-by-configmap", ownerRefTo(cmOwner, true))

		deleted := time.Now()
		o.delete(t, widgets, "owner", metav1.DeletePropagationBackground)
		o.delete(t, configMaps, "owner", metav1.DeletePropagationBackground)
		o.waitDeletedWithin(t, configMaps, "owned-by-widget", 10*time.Second)
		o.waitDeletedWithin(t, widgets, "owned-by-configmap", 10*time.Second)
		t.Logf("dependents collected %v after their owners' deletion, %v after the CRD was established",
			time.Since(deleted).Round(time.Millisecond), time.Since(established).Round(time.Millisecond))
	})
}

// TestGarbageCollectorOff checks that without --enable-garbage-collector
// (the default) a foreground deletion deletes the owner at once, and
// nothing collects its dependent.
func TestGarbageCollectorOff(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	o := gcObjects{dyn: dynamic.NewForConfigOrDie(s.Config), ns: framework.CreateNamespace(t, client)}
	configMaps, secrets := served("", "configmaps"), served("", "secrets")
	owner := o.create(t, configMaps, "owner")
	o.create(t, secrets, "dependent", ownerRefTo(owner, true))
	o.delete(t, configMaps, "owner", metav1.DeletePropagationForeground)
	if _, err := o.client(configMaps).Get(t.Context(), "owner", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("owner right after a foreground delete: got %v, want NotFound", err)
	}
	if got := o.ownerUIDs(t, secrets, "dependent"); !slices.Equal(got, []types.UID{owner.GetUID()}) {
		t.Errorf("dependent's owners: got %v, want %v", got, owner.GetUID())
	}
}

// served returns the framework.ServedResource of resource (or namespaces).
func served(group, resource string) framework.ServedResource {
	if group == "" && resource == "namespaces" {
		return framework.ServedResource{GVR: framework.GVR("", "namespaces"), Kind: "Namespace", Cluster: true}
	}
	for _, r := range framework.ServedResources {
		if r.GVR == framework.GVR(group, resource) {
			return r
		}
	}
	panic("no served resource " + resource)
}

// gcObjects creates and reads objects in namespace ns; the names of
// cluster-scoped objects are prefixed with ns.
type gcObjects struct {
	dyn dynamic.Interface
	ns  string
}

func (o gcObjects) client(r framework.ServedResource) dynamic.ResourceInterface {
	if r.Cluster {
		return o.dyn.Resource(r.GVR)
	}
	return o.dyn.Resource(r.GVR).Namespace(o.ns)
}

func (o gcObjects) name(r framework.ServedResource, name string) string {
	if r.Cluster {
		return o.ns + "-" + name
	}
	return name
}

// create creates a minimal valid object of r, owned by owners.
func (o gcObjects) create(t *testing.T, r framework.ServedResource, name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	t.Helper()
	return o.createObject(t, r, framework.NewObject(r.GVR.GroupVersion().String(), r.Kind, name, r.Body), owners...)
}

// createObject creates obj as an object of r, owned by owners.
func (o gcObjects) createObject(t *testing.T, r framework.ServedResource, obj *unstructured.Unstructured, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	t.Helper()
	obj.SetName(o.name(r, obj.GetName()))
	obj.SetOwnerReferences(owners)
	created, err := o.client(r).Create(t.Context(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s %s: %v", r.Kind, obj.GetName(), err)
	}
	return created
}

func (o gcObjects) delete(t *testing.T, r framework.ServedResource, name string, policy metav1.DeletionPropagation) {
	t.Helper()
	if err := o.client(r).Delete(t.Context(), o.name(r, name), metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatalf("deleting %s %s: %v", r.Kind, name, err)
	}
}

// ownerUIDs returns the UIDs of the owners of an object.
func (o gcObjects) ownerUIDs(t *testing.T, r framework.ServedResource, name string) []types.UID {
	t.Helper()
	obj, err := o.client(r).Get(t.Context(), o.name(r, name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting %s %s: %v", r.Kind, name, err)
	}
	var uids []types.UID
	for _, ref := range obj.GetOwnerReferences() {
		uids = append(uids, ref.UID)
	}
	return uids
}

// waitSeenByCollector waits until an object no longer refers to ghost.
func (o gcObjects) waitSeenByCollector(t *testing.T, r framework.ServedResource, name string, ghost metav1.OwnerReference) {
	t.Helper()
	framework.WaitUntil(t, func() bool {
		obj, err := o.client(r).Get(t.Context(), o.name(r, name), metav1.GetOptions{})
		return err == nil && !slices.ContainsFunc(obj.GetOwnerReferences(), func(ref metav1.OwnerReference) bool { return ref.UID == ghost.UID })
	}, r.Kind+" "+name+" seen by the garbage collector")
}

// waitDeleted waits until an object is gone.
func (o gcObjects) waitDeleted(t *testing.T, r framework.ServedResource, name string) {
	t.Helper()
	o.waitDeletedWithin(t, r, name, 30*time.Second)
}

func (o gcObjects) waitDeletedWithin(t *testing.T, r framework.ServedResource, name string, timeout time.Duration) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := o.client(r).Get(ctx, o.name(r, name), metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s %s to be garbage collected: %v", r.Kind, name, err)
	}
}

// ownerRefTo returns an ownerReference to obj.
func ownerRefTo(obj *unstructured.Unstructured, blockOwnerDeletion bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID(),
		BlockOwnerDeletion: ptr.To(blockOwnerDeletion)}
}

// neverExisted is an ownerReference to a ConfigMap that never existed. The
// collector removes it from a dependent that has a live owner too once it
// has seen the dependent: tests that need the collector to know a
// dependent before they delete its owner wait for that (as upstream's wait
// for GraphHasUID), or an orphan or foreground deletion could miss it, as
// upstream's would.
func neverExisted() metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "never-existed", UID: uuid.NewUUID()}
}

// createWidgetCRD creates the namespaced CRD widgets.gc.example.com and
// waits until it is established; it returns its resource.
func createWidgetCRD(t *testing.T, cfg *rest.Config) schema.GroupVersionResource {
	t.Helper()
	crds := apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.gc.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "gc.example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}},
			}},
		},
	}
	if _, err := crds.Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitUntil(t, func() bool {
		got, err := crds.Get(t.Context(), crd.Name, metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(got.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
			return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
		})
	}, "CRD "+crd.Name+" established")
	return schema.GroupVersionResource{Group: crd.Spec.Group, Version: "v1", Resource: "widgets"}
}

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

package policystatus

import (
	"context"
	"errors"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	applyv1 "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	informers "k8s.io/client-go/informers/admissionregistration/v1"
	client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	listers "k8s.io/client-go/listers/admissionregistration/v1"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/miniapiserver/miniapiserver/pkg/controller/worker"
)

// Name is the field manager of the status the controller writes, and
// upstream's controller name.
const Name = "validatingadmissionpolicy-status"

// schemaRetries bounds the rate-limited retries (from 10ms, doubling) for
// a schema not yet published: about 5s.
const schemaRetries = 9

// missRecorder is a SchemaResolver that records the kinds it has no
// schema for (params' kinds included).
type missRecorder struct {
	resolver.SchemaResolver
	missed []schema.GroupVersionKind
}

func (r *missRecorder) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	s, err := r.SchemaResolver.ResolveSchema(gvk)
	if errors.Is(err, resolver.ErrSchemaNotFound) && !gvk.Empty() {
		r.missed = append(r.missed, gvk)
	}
	return s, err
}

// Controller type-checks ValidatingAdmissionPolicies whose status has not
// observed their generation yet.
type Controller struct {
	client  client.ValidatingAdmissionPoliciesGetter
	lister  listers.ValidatingAdmissionPolicyLister
	synced  cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	checker *validating.TypeChecker
	// schemas is checker's SchemaResolver, which records the kinds it
	// found no schema for.
	schemas *missRecorder
	// mapper is checker's RESTMapper; it is reset before each check, so
	// that a policy on a custom resource created just before it finds it.
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// New returns a controller of the policies informer watches, which checks
// them with a TypeChecker over schemas and mapper, and writes through client.
func New(c client.ValidatingAdmissionPoliciesGetter, informer informers.ValidatingAdmissionPolicyInformer, checker *validating.TypeChecker, mapper *restmapper.DeferredDiscoveryRESTMapper) *Controller {
	schemas := &missRecorder{SchemaResolver: checker.SchemaResolver}
	checker.SchemaResolver = schemas
	ctrl := &Controller{
		client:  c,
		lister:  informer.Lister(),
		synced:  informer.Informer().HasSynced,
		checker: checker,
		schemas: schemas,
		mapper:  mapper,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 10*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
	}
	enqueue := func(obj any) {
		if p, ok := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok {
			ctrl.queue.Add(p.Name)
		}
	}
	_, _ = informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	return ctrl
}

// Run checks policies until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	worker.Run(ctx, c.queue, []cache.InformerSynced{c.synced}, c.sync, "ValidatingAdmissionPolicy not type-checked yet", "policy")
}

// sync writes the type-checking warnings of policy name into its status,
// with the generation they are of, as upstream's controller does (by
// server-side apply of the status, forced).
func (c *Controller) sync(ctx context.Context, name string) error {
	policy, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || policy.Generation <= policy.Status.ObservedGeneration {
		return err
	}
	c.mapper.Reset()
	c.schemas.missed = nil
	warnings := c.checker.Check(policy)
	// A kind served a moment ago (a CRD just made) may not be in the
	// published OpenAPI yet: look again in a moment, a few times, before
	// writing the status without it (upstream writes it at once).
	if len(c.schemas.missed) > 0 && c.queue.NumRequeues(name) < schemaRetries {
		return fmt.Errorf("no schema yet for %v", c.schemas.missed)
	}
	applied := make([]*applyv1.ExpressionWarningApplyConfiguration, 0, len(warnings))
	for _, w := range warnings {
		applied = append(applied, applyv1.ExpressionWarning().WithFieldRef(w.FieldRef).WithWarning(w.Warning))
	}
	status := applyv1.ValidatingAdmissionPolicy(policy.Name).WithStatus(applyv1.ValidatingAdmissionPolicyStatus().
		WithObservedGeneration(policy.Generation).
		WithTypeChecking(applyv1.TypeChecking().WithExpressionWarnings(applied...)))
	_, err = c.client.ValidatingAdmissionPolicies().ApplyStatus(ctx, status, metav1.ApplyOptions{FieldManager: Name, Force: true})
	return err
}

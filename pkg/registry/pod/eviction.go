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

package pod

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/util/dryrun"
	"k8s.io/client-go/util/retry"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"
)

// maxDisruptedPods is how many evictions a budget may hold that its
// controller has not yet seen (upstream's MaxDisruptedPodSize).
const maxDisruptedPods = 2000

// evictionRetry is upstream's EvictionsRetry: how a conflict is retried.
var evictionRetry = wait.Backoff{Steps: 20, Duration: 500 * time.Millisecond, Factor: 1.0, Jitter: 0.1}

// Budgets are the PodDisruptionBudgets an eviction reads and updates: the
// policy group's store and its status subresource.
type Budgets struct {
	List   rest.Lister
	Get    rest.Getter
	Status rest.Updater
}

// EvictionREST is pods/eviction, upstream's (k8s.io/kubernetes
// pkg/registry/core/pod/storage/eviction.go): a pod is deleted unless the
// PodDisruptionBudget that selects it allows no disruption, in which case
// the eviction is a 429, and an allowed one is counted in the budget's
// status. No controller here updates a budget's status: its
// disruptionsAllowed is what the test sets, less the evictions since.
type EvictionREST struct {
	store   *registry.Store
	budgets Budgets
}

var (
	_ rest.NamedCreater             = &EvictionREST{}
	_ rest.GroupVersionKindProvider = &EvictionREST{}
)

// NewEvictionREST returns the eviction subresource of the pods in store.
func NewEvictionREST(store *registry.Store, budgets Budgets) *EvictionREST {
	return &EvictionREST{store: store, budgets: budgets}
}

func (r *EvictionREST) New() runtime.Object { return &policyv1.Eviction{} }
func (r *EvictionREST) Destroy()            {}

// GroupVersionKind implements rest.GroupVersionKindProvider: policy/v1's.
func (r *EvictionREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return policyv1.SchemeGroupVersion.WithKind("Eviction")
}

// Create evicts the pod name.
func (r *EvictionREST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	eviction, ok := obj.(*policyv1.Eviction)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Eviction object: %T", obj))
	}
	if name != eviction.Name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if o := eviction.DeleteOptions; o != nil && o.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *o.IgnoreStoreReadErrorWithClusterBreakingPotential {
		return nil, apierrors.NewInvalid(policyv1.SchemeGroupVersion.WithKind("Eviction").GroupKind(), name, field.ErrorList{
			field.Invalid(field.NewPath("deleteOptions", "ignoreStoreReadErrorWithClusterBreakingPotential"), true, "can not be set for pod eviction, try after removing the option"),
		})
	}
	original, err := propagateDryRun(eviction, options)
	if err != nil {
		return nil, err
	}
	if createValidation != nil {
		if err := createValidation(ctx, eviction.DeepCopyObject()); err != nil {
			return nil, err
		}
	}

	var pod *corev1.Pod
	deleted := false
	shouldRetry := apierrors.IsConflict
	if !rvUnset(original) {
		shouldRetry = func(error) bool { return false }
	}
	err = retry.OnError(evictionRetry, shouldRetry, func() error {
		got, err := r.store.Get(ctx, eviction.Name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		pod = got.(*corev1.Pod)
		if !canIgnoreBudgets(pod) {
			return nil
		}
		deleteOptions := original
		if enforceResourceVersion(pod) && rvUnset(original) {
			deleteOptions = withResourceVersion(original, pod.ResourceVersion)
		}
		if err := r.markAndDelete(ctx, eviction.Name, deleteOptions); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case deleted:
		return &metav1.Status{Status: metav1.StatusSuccess}, nil
	}

	budgets, err := r.budgetsOf(ctx, pod)
	if err != nil {
		return nil, err
	}
	if len(budgets) > 1 {
		return &metav1.Status{Status: metav1.StatusFailure, Code: 500,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}, nil
	}
	unhealthyAllowed, budgetName := false, ""
	if len(budgets) == 1 {
		budget := &budgets[0]
		budgetName = budget.Name
		if !hasCondition(pod, corev1.PodReady) {
			policy := budget.Spec.UnhealthyPodEvictionPolicy
			// An unready pod does not count towards the budget: deleting it
			// disrupts nothing, if the budget allows that, or is met.
			unhealthyAllowed = policy != nil && *policy == policyv1.AlwaysAllow ||
				budget.Status.CurrentHealthy >= budget.Status.DesiredHealthy && budget.Status.DesiredHealthy > 0
		}
		if !unhealthyAllowed {
			refresh := false
			err := retry.RetryOnConflict(evictionRetry, func() error {
				if refresh {
					got, err := r.budgets.Get.Get(ctx, budgetName, &metav1.GetOptions{})
					if err != nil {
						return err
					}
					budget = got.(*policyv1.PodDisruptionBudget)
				}
				refresh = true
				return r.checkAndDecrement(ctx, pod.Name, budget.DeepCopy(), dryrun.IsDryRun(original.DryRun))
			})
			if wait.Interrupted(err) {
				err = apierrors.NewTimeoutError(fmt.Sprintf("couldn't update PodDisruptionBudget %q due to conflicts", budgetName), 10)
			}
			if err != nil {
				return nil, err
			}
		}
	}

	deleteOptions := original
	if unhealthyAllowed { // the pod must not have turned ready since
		deleteOptions = withResourceVersion(original, pod.ResourceVersion)
	}
	if err := r.markAndDelete(ctx, eviction.Name, deleteOptions); err != nil {
		if apierrors.IsConflict(err) && unhealthyAllowed && rvUnset(original) {
			return nil, tooManyRequests(budgetName)
		}
		return nil, err
	}
	return &metav1.Status{Status: metav1.StatusSuccess}, nil
}

// propagateDryRun is the eviction's delete options, with the request's
// dry run, which may not differ from theirs.
func propagateDryRun(eviction *policyv1.Eviction, options *metav1.CreateOptions) (*metav1.DeleteOptions, error) {
	switch o := eviction.DeleteOptions; {
	case o == nil:
		return &metav1.DeleteOptions{DryRun: options.DryRun}, nil
	case len(o.DryRun) == 0:
		o.DryRun = options.DryRun
		return o, nil
	case len(options.DryRun) == 0:
		return o, nil
	case !reflect.DeepEqual(options.DryRun, o.DryRun):
		return nil, fmt.Errorf("Non-matching dry-run options in request and content: %v and %v", options.DryRun, o.DryRun)
	}
	return eviction.DeleteOptions, nil
}

// markAndDelete gives the pod the DisruptionTarget condition (but in a
// dry run), then deletes it, as upstream's addConditionAndDeletePod.
func (r *EvictionREST) markAndDelete(ctx context.Context, name string, options *metav1.DeleteOptions) error {
	if !dryrun.IsDryRun(options.DryRun) {
		latest := func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			pod := old.(*corev1.Pod).DeepCopy()
			if p := options.Preconditions; p != nil {
				if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
					return nil, apierrors.NewConflict(schema.GroupResource{Resource: "Pod"}, pod.Name,
						fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, pod.UID))
				}
				if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
					return nil, apierrors.NewConflict(schema.GroupResource{Resource: "Pod"}, pod.Name,
						fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, pod.ResourceVersion))
				}
			}
			return pod, nil
		}
		mark := func(_ context.Context, obj, _ runtime.Object) (runtime.Object, error) {
			pod := obj.(*corev1.Pod)
			setCondition(&pod.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"})
			return pod, nil
		}
		updated, _, err := r.store.Update(ctx, name, rest.DefaultUpdatedObjectInfo(nil, latest, mark), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		if !rvUnset(options) { // our own update moved it
			rv, err := meta.NewAccessor().ResourceVersion(updated)
			if err != nil {
				return err
			}
			options = withResourceVersion(options, rv)
		}
	}
	_, _, err := r.store.Delete(ctx, name, rest.ValidateAllObjectFunc, options)
	return err
}

// canIgnoreBudgets: a pod that has ended, not started, or is being deleted
// disrupts nothing more when evicted.
func canIgnoreBudgets(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

// enforceResourceVersion: a pod that may still turn ready is deleted at
// the resourceVersion it was judged at.
func enforceResourceVersion(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed && pod.DeletionTimestamp == nil
}

func rvUnset(o *metav1.DeleteOptions) bool {
	return o.Preconditions == nil || o.Preconditions.ResourceVersion == nil
}

func withResourceVersion(o *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	o = o.DeepCopy()
	if o.Preconditions == nil {
		o.Preconditions = &metav1.Preconditions{}
	}
	o.Preconditions.ResourceVersion = &rv
	return o
}

func tooManyRequests(budget string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", budget)})
	return err
}

// checkAndDecrement refuses the eviction if budget allows no disruption
// now, and otherwise counts it in budget's status (but in a dry run).
func (r *EvictionREST) checkAndDecrement(ctx context.Context, podName string, budget *policyv1.PodDisruptionBudget, dryRun bool) error {
	cause := func(err *apierrors.StatusError, msg string) error {
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: msg})
		return err
	}
	forbidden := func(reason, msg string) error {
		return cause(apierrors.NewForbidden(policyv1.Resource("poddisruptionbudget"), budget.Name, errors.New(reason)),
			fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: %s", budget.Name, msg))
	}
	s := &budget.Status
	switch {
	case s.ObservedGeneration < budget.Generation:
		return tooManyRequests(budget.Name)
	case s.DisruptionsAllowed < 0:
		return forbidden("pdb disruptions allowed is negative", "pdb disruptions allowed is negative")
	case len(s.DisruptedPods) > maxDisruptedPods:
		return forbidden("DisruptedPods map too big - too many evictions not confirmed by PDB controller", "too many pending evictions not confirmed by PDB controller")
	case s.DisruptionsAllowed == 0:
		c := meta.FindStatusCondition(s.Conditions, policyv1.DisruptionAllowedCondition)
		var msg string
		switch {
		case c != nil && c.Status == metav1.ConditionFalse && c.Message != "" && c.Reason == policyv1.SyncFailedReason:
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", budget.Name, c.Message)
		case s.CurrentHealthy <= s.DesiredHealthy:
			msg = fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", budget.Name, s.DesiredHealthy, s.CurrentHealthy)
		case c != nil && c.Status == metav1.ConditionFalse && c.Message != "":
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", budget.Name, c.Reason, c.Message)
		default:
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", budget.Name)
		}
		return cause(apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0), msg)
	}
	s.DisruptionsAllowed--
	if s.DisruptionsAllowed == 0 {
		pdbhelper.UpdateDisruptionAllowedCondition(budget)
	}
	if dryRun {
		return nil
	}
	if s.DisruptedPods == nil {
		s.DisruptedPods = map[string]metav1.Time{}
	}
	s.DisruptedPods[podName] = metav1.Now() // the budget's controller forgets it once the pod is gone
	_, _, err := r.budgets.Status.Update(ctx, budget.Name, rest.DefaultUpdatedObjectInfo(budget), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	return err
}

// budgetsOf are the budgets in pod's namespace that select it.
func (r *EvictionREST) budgetsOf(ctx context.Context, pod *corev1.Pod) ([]policyv1.PodDisruptionBudget, error) {
	list, err := r.budgets.List.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []policyv1.PodDisruptionBudget
	for _, b := range list.(*policyv1.PodDisruptionBudgetList).Items {
		selector, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || b.Namespace != pod.Namespace || !selector.Matches(labels.Set(pod.Labels)) {
			continue // an invalid selector matches no pod
		}
		out = append(out, b)
	}
	return out, nil
}

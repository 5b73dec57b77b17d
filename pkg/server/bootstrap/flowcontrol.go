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

package bootstrap

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	flowcontrolbootstrap "k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	flowcontrollisters "k8s.io/client-go/listers/flowcontrol/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/api"
)

// flowControlFieldManager is the field manager of upstream's ensurer.
const flowControlFieldManager = "api-priority-and-fairness-config-producer-v1"

// FlowControl is kube-apiserver's priority-and-fairness-config-producer
// (k8s.io/kubernetes pkg/registry/flowcontrol/ensurer): once the informers
// have synced, it makes the bootstrap FlowSchemas and
// PriorityLevelConfigurations of k8s.io/apiserver, retrying every second
// for at most 5 minutes, and returns what keeps them, every minute until
// its ctx ends:
//   - a missing one is created again;
//   - a mandatory one's spec is put back if changed; a suggested one's
//     only while its apf.kubernetes.io/autoupdate-spec annotation is true
//     (or, without it, while its generation is 1);
//   - one with the annotation true that is no longer bootstrap is deleted.
func FlowControl(ctx context.Context, client flowcontrolclient.FlowcontrolV1Interface, fs flowcontrollisters.FlowSchemaLister,
	pl flowcontrollisters.PriorityLevelConfigurationLister, synced []cache.InformerSynced,
) (keep func(context.Context), err error) {
	waitCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(waitCtx.Done(), synced...) {
		if ctx.Err() != nil {
			return func(context.Context) {}, nil
		}
		return nil, fmt.Errorf("APF bootstrap ensurer timed out waiting for cache sync")
	}
	fsOps := configOps[*flowcontrolv1.FlowSchema]{client: client.FlowSchemas(), lister: fs}
	plOps := configOps[*flowcontrolv1.PriorityLevelConfiguration]{client: client.PriorityLevelConfigurations(), lister: pl}
	ensure := func(ctx context.Context) error {
		// The priority levels first: a FlowSchema made before its
		// priority level would be written Dangling, then not.
		if err := ensureAll(ctx, plOps, flowcontrolbootstrap.SuggestedPriorityLevelConfigurations, false); err != nil {
			return fmt.Errorf("failed ensuring suggested settings - %w", err)
		}
		if err := ensureAll(ctx, plOps, flowcontrolbootstrap.MandatoryPriorityLevelConfigurations, true); err != nil {
			return fmt.Errorf("failed ensuring mandatory settings - %w", err)
		}
		if err := ensureAll(ctx, fsOps, flowcontrolbootstrap.SuggestedFlowSchemas, false); err != nil {
			return fmt.Errorf("failed ensuring suggested settings - %w", err)
		}
		if err := ensureAll(ctx, fsOps, flowcontrolbootstrap.MandatoryFlowSchemas, true); err != nil {
			return fmt.Errorf("failed ensuring mandatory settings - %w", err)
		}
		if err := removeUnwanted(ctx, fsOps, flowcontrolbootstrap.MandatoryFlowSchemas, flowcontrolbootstrap.SuggestedFlowSchemas); err != nil {
			return fmt.Errorf("failed to delete removed settings - %w", err)
		}
		if err := removeUnwanted(ctx, plOps, flowcontrolbootstrap.MandatoryPriorityLevelConfigurations, flowcontrolbootstrap.SuggestedPriorityLevelConfigurations); err != nil {
			return fmt.Errorf("failed to delete removed settings - %w", err)
		}
		return nil
	}
	logger := klog.FromContext(ctx)
	err = wait.PollUntilContextCancel(waitCtx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := ensure(ctx); err != nil {
			logger.V(2).Info("APF bootstrap ensurer ran into error, will retry later", "err", err)
			return false, nil
		}
		return true, nil
	})
	if ctx.Err() != nil {
		return func(context.Context) {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("unable to initialize APF bootstrap configuration: %w", err)
	}
	return func(ctx context.Context) {
		ticker := time.NewTicker(time.Minute)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			if err := ensure(ctx); err != nil && ctx.Err() == nil {
				logger.Error(err, "APF bootstrap ensurer ran into error, will retry later")
			}
		}
	}, nil
}

// WaitFlowSchemaStatus waits, at most timeout, until priority and
// fairness has written each FlowSchema's Dangling condition, which it does
// right after a FlowSchema or priority level is made or changed: a server
// that stops first would log its writes failing.
func WaitFlowSchemaStatus(fs flowcontrollisters.FlowSchemaLister, pl flowcontrollisters.PriorityLevelConfigurationLister, timeout time.Duration) {
	_ = wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return danglingWritten(fs, pl)
	})
}

// danglingWritten reports whether every FlowSchema's Dangling condition
// says whether its priority level exists.
func danglingWritten(fs flowcontrollisters.FlowSchemaLister, pl flowcontrollisters.PriorityLevelConfigurationLister) (bool, error) {
	schemas, err := fs.List(labels.Everything())
	if err != nil {
		return false, err
	}
	for _, s := range schemas {
		_, err := pl.Get(s.Spec.PriorityLevelConfiguration.Name)
		want := flowcontrolv1.ConditionFalse
		if apierrors.IsNotFound(err) {
			want = flowcontrolv1.ConditionTrue
		} else if err != nil {
			return false, err
		}
		i := slices.IndexFunc(s.Status.Conditions, func(c flowcontrolv1.FlowSchemaCondition) bool {
			return c.Type == flowcontrolv1.FlowSchemaConditionDangling
		})
		if i < 0 || s.Status.Conditions[i].Status != want {
			return false, nil
		}
	}
	return true, nil
}

// configObject is a FlowSchema or a PriorityLevelConfiguration.
type configObject interface {
	comparable
	metav1.Object
	runtime.Object
}

// configOps are the client and lister of one kind of configObject.
type configOps[T configObject] struct {
	client interface {
		Create(context.Context, T, metav1.CreateOptions) (T, error)
		Update(context.Context, T, metav1.UpdateOptions) (T, error)
		Delete(context.Context, string, metav1.DeleteOptions) error
	}
	lister interface {
		List(labels.Selector) ([]T, error)
		Get(string) (T, error)
	}
}

// ensureAll ensures each of boots, all at once (on the first start they
// are creates, which etcd then syncs to disk together).
func ensureAll[T configObject](ctx context.Context, ops configOps[T], boots []T, mandatory bool) error {
	var g errgroup.Group
	for _, boot := range boots {
		g.Go(func() error { return ensureOne(ctx, ops, boot, mandatory) })
	}
	return g.Wait()
}

// ensureOne is upstream's EnsureConfiguration.
func ensureOne[T configObject](ctx context.Context, ops configOps[T], boot T, mandatory bool) error {
	name := boot.GetName()
	current, err := ops.lister.Get(name)
	if apierrors.IsNotFound(err) {
		_, err = ops.client.Create(ctx, boot.DeepCopyObject().(T), metav1.CreateOptions{FieldManager: flowControlFieldManager})
		if apierrors.IsAlreadyExists(err) { // made meanwhile: checked next time
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	autoUpdate := mandatory || shouldUpdateSpec(current)
	annotated, err := strconv.ParseBool(current.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey])
	updateAnnotation := err != nil || annotated != autoUpdate
	specChanged := autoUpdate && !specEqualish(boot, current)
	if !updateAnnotation && !specChanged {
		return nil
	}
	revised := current.DeepCopyObject().(T)
	if specChanged {
		setSpec(revised, boot)
	}
	annotations := revised.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[flowcontrolv1.AutoUpdateAnnotationKey] = strconv.FormatBool(autoUpdate)
	revised.SetAnnotations(annotations)
	_, err = ops.client.Update(ctx, revised, metav1.UpdateOptions{FieldManager: flowControlFieldManager})
	if apierrors.IsConflict(err) { // changed meanwhile: checked next time
		return nil
	}
	return err
}

// shouldUpdateSpec is upstream's: the annotation says, or, without a
// boolean in it, a generation of 1 (the spec as made).
func shouldUpdateSpec(obj metav1.Object) bool {
	if autoUpdate, err := strconv.ParseBool(obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err == nil {
		return autoUpdate
	}
	return obj.GetGeneration() == 1
}

// specEqualish reports whether boot's spec, defaulted, is current's; the
// exempt priority level's shares and lendable percent are the cluster's
// to set.
func specEqualish[T configObject](boot, current T) bool {
	want := boot.DeepCopyObject()
	api.Scheme.Default(want)
	switch want := want.(type) {
	case *flowcontrolv1.FlowSchema:
		return apiequality.Semantic.DeepEqual(want.Spec, any(current).(*flowcontrolv1.FlowSchema).Spec)
	case *flowcontrolv1.PriorityLevelConfiguration:
		got := any(current).(*flowcontrolv1.PriorityLevelConfiguration)
		if want.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			if got.Spec.Exempt == nil {
				return false
			}
			want.Spec.Exempt.NominalConcurrencyShares = got.Spec.Exempt.NominalConcurrencyShares
			want.Spec.Exempt.LendablePercent = got.Spec.Exempt.LendablePercent
		}
		return apiequality.Semantic.DeepEqual(want.Spec, got.Spec)
	}
	return false
}

// setSpec sets obj's spec to a copy of boot's.
func setSpec[T configObject](obj, boot T) {
	switch obj := any(obj).(type) {
	case *flowcontrolv1.FlowSchema:
		obj.Spec = *any(boot).(*flowcontrolv1.FlowSchema).Spec.DeepCopy()
	case *flowcontrolv1.PriorityLevelConfiguration:
		obj.Spec = *any(boot).(*flowcontrolv1.PriorityLevelConfiguration).Spec.DeepCopy()
	}
}

// removeUnwanted is upstream's RemoveUnwantedObjects: it deletes the
// objects annotated apf.kubernetes.io/autoupdate-spec=true that are not
// among the bootstrap ones.
func removeUnwanted[T configObject](ctx context.Context, ops configOps[T], mandatory, suggested []T) error {
	wanted := map[string]bool{}
	for _, boot := range append(append([]T{}, mandatory...), suggested...) {
		wanted[boot.GetName()] = true
	}
	current, err := ops.lister.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, obj := range current {
		if wanted[obj.GetName()] {
			continue
		}
		if autoUpdate, err := strconv.ParseBool(obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err != nil || !autoUpdate {
			continue
		}
		if err := ops.client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete unwatned APF object %q - %w", obj.GetName(), err)
		}
	}
	return nil
}

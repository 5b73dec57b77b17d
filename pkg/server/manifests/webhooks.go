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

package manifests

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	admissioninformers "k8s.io/client-go/informers/admissionregistration/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// ConversionWebhook is the conversion webhook of the CRDs installed that
// convert by webhook: those whose manifest says so, those of Kinds, or all
// of them (that can: not those that preserve unknown fields).
type ConversionWebhook struct {
	ClientConfig apiextensionsv1.WebhookClientConfig
	Kinds        []schema.GroupKind
	AllKinds     bool
}

// SetConversionWebhooks points the conversion webhook of each CRD that
// converts by webhook (see ConversionWebhook) at cw's client config, as
// envtest does. Nothing changes when cw is nil.
func SetConversionWebhooks(crds []*apiextensionsv1.CustomResourceDefinition, cw *ConversionWebhook) {
	if cw == nil {
		return
	}
	for _, crd := range crds {
		webhook := crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter
		listed := cw.AllKinds || slices.Contains(cw.Kinds, schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind})
		if crd.Spec.PreserveUnknownFields || !webhook && !listed {
			continue
		}
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             cw.ClientConfig.DeepCopy(),
				ConversionReviewVersions: []string{"v1", "v1beta1"},
			},
		}
	}
}

// Webhooks are webhook configurations to install.
type Webhooks struct {
	Mutating   []*admissionregistrationv1.MutatingWebhookConfiguration
	Validating []*admissionregistrationv1.ValidatingWebhookConfiguration
	// Seen are the informers admission reads them from (nil: Install
	// does not wait for them).
	Seen admissioninformers.Interface
}

// Install creates the configurations (or updates them: a restarted server
// has them already), then waits until admission's informers (Seen) have
// them, so that the next request is admitted by them.
func (w Webhooks) Install(ctx context.Context, cfg *rest.Config) error {
	if len(w.Mutating) == 0 && len(w.Validating) == 0 {
		return nil
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	type key struct {
		mutating bool
		name     string
	}
	want := map[key]string{} // resourceVersion written
	for _, c := range w.Mutating {
		api := client.AdmissionregistrationV1().MutatingWebhookConfigurations()
		rv, err := createOrUpdate(ctx, c.DeepCopy(), api.Create, api.Get, api.Update)
		if err != nil {
			return fmt.Errorf("installing MutatingWebhookConfiguration %q: %w", c.Name, err)
		}
		want[key{true, c.Name}] = rv
	}
	for _, c := range w.Validating {
		api := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
		rv, err := createOrUpdate(ctx, c.DeepCopy(), api.Create, api.Get, api.Update)
		if err != nil {
			return fmt.Errorf("installing ValidatingWebhookConfiguration %q: %w", c.Name, err)
		}
		want[key{false, c.Name}] = rv
	}
	if w.Seen == nil { // another server's: its admission is not ours to watch
		return nil
	}
	seenRV := func(k key) (string, error) {
		if k.mutating {
			got, err := w.Seen.MutatingWebhookConfigurations().Lister().Get(k.name)
			if err != nil {
				return "", err
			}
			return got.ResourceVersion, nil
		}
		got, err := w.Seen.ValidatingWebhookConfigurations().Lister().Get(k.name)
		if err != nil {
			return "", err
		}
		return got.ResourceVersion, nil
	}
	return wait.PollUntilContextTimeout(ctx, time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		for k, rv := range want {
			got, err := seenRV(k)
			if apierrors.IsNotFound(err) || err == nil && !atLeast(got, rv) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
		}
		return true, nil
	})
}

// atLeast reports whether resourceVersion got is rv or newer (ours are etcd
// revisions).
func atLeast(got, rv string) bool {
	g, err1 := strconv.ParseUint(got, 10, 64)
	r, err2 := strconv.ParseUint(rv, 10, 64)
	return err1 == nil && err2 == nil && g >= r
}

// createOrUpdate creates obj, or updates the object of its name to it (a
// restarted server has it already), and returns the resourceVersion written.
func createOrUpdate[T metav1.Object](ctx context.Context, obj T,
	create func(context.Context, T, metav1.CreateOptions) (T, error),
	get func(context.Context, string, metav1.GetOptions) (T, error),
	update func(context.Context, T, metav1.UpdateOptions) (T, error),
) (string, error) {
	created, err := create(ctx, obj, metav1.CreateOptions{})
	if err == nil {
		return created.GetResourceVersion(), nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	var rv string
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		obj.SetResourceVersion(current.GetResourceVersion())
		updated, err := update(ctx, obj, metav1.UpdateOptions{})
		if err == nil {
			rv = updated.GetResourceVersion()
		}
		return err
	})
	return rv, err
}

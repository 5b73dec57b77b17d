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

package envtest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/server/manifests"
)

// The package's functions are envtest's, with its signatures, for suites
// that install CRDs and webhooks themselves (on the Environment's server
// or any other).

// envtest's defaults for WaitForCRDs and WaitForWebhooks.
const (
	defaultPollInterval = 100 * time.Millisecond
	defaultMaxWait      = 10 * time.Second
)

// InstallCRDs installs options.CRDs and the CRDs of options.Paths on the
// cluster config reaches, and returns them once they are served. Once
// options.WebhookOptions is prepared (Start sets it), the CRDs of
// options.Scheme's convertible kinds (nil: client-go's scheme.Scheme)
// convert by its webhook server.
func InstallCRDs(config *rest.Config, options CRDInstallOptions) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	if err := ReadCRDFiles(&options); err != nil {
		return nil, fmt.Errorf("unable to read CRD files: %w", err)
	}
	o := server.NewOptions()
	o.CRDs = options.CRDs
	if hooks := options.WebhookOptions; len(hooks.LocalServingCAData) > 0 {
		s := options.Scheme
		if s == nil {
			s = scheme.Scheme
		}
		hooks.ConvertibleKinds = append(slices.Clone(hooks.ConvertibleKinds), convertibleKinds(s)...)
		o.ConversionWebhook = hooks.ConversionWebhook()
	}
	return server.InstallOnto(context.Background(), config, o)
}

// ReadCRDFiles adds the CRDs of options.Paths (files or directories of
// YAML or JSON manifests) to options.CRDs. A path that does not exist is
// skipped unless options.ErrorIfPathMissing.
func ReadCRDFiles(options *CRDInstallOptions) error {
	paths, err := existingPaths(options.Paths, options.ErrorIfPathMissing)
	if err != nil {
		return err
	}
	crds, err := manifests.ReadCRDs(paths)
	if err != nil {
		return err
	}
	options.CRDs = append(options.CRDs, crds...)
	return nil
}

// existingPaths are those of paths that exist; one that does not is an
// error if mustExist.
func existingPaths(paths []string, mustExist bool) ([]string, error) {
	var existing []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			if mustExist || !os.IsNotExist(err) {
				return nil, fmt.Errorf("envtest: CRD path: %w", err)
			}
			continue
		}
		existing = append(existing, p)
	}
	return existing, nil
}

// CreateCRDs creates crds, or updates those that exist, on the cluster
// config reaches. It returns once they are served (envtest's returns
// before; WaitForCRDs then returns at once).
func CreateCRDs(config *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
	o := server.NewOptions()
	o.CRDs = crds
	_, err := server.InstallOnto(context.Background(), config, o)
	return err
}

// WaitForCRDs waits until every served version of crds is in discovery,
// for at most options.MaxTime (default 10 s), polling every
// options.PollInterval (default 100 ms).
func WaitForCRDs(config *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition, options CRDInstallOptions) error {
	disco, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return err
	}
	return poll(options.PollInterval, options.MaxTime, func(ctx context.Context) (bool, error) {
		for _, crd := range crds {
			for _, v := range crd.Spec.Versions {
				if !v.Served {
					continue
				}
				list, err := disco.ServerResourcesForGroupVersion(crd.Spec.Group + "/" + v.Name)
				if err != nil || !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == crd.Spec.Names.Plural }) {
					return false, nil
				}
			}
		}
		return true, nil
	})
}

// UninstallCRDs deletes options.CRDs and the CRDs of options.Paths from
// the cluster config reaches; one already gone is no error.
func UninstallCRDs(config *rest.Config, options CRDInstallOptions) error {
	if err := ReadCRDFiles(&options); err != nil {
		return err
	}
	client, err := apiextensionsclient.NewForConfig(config)
	if err != nil {
		return err
	}
	for _, crd := range options.CRDs {
		err := client.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// WaitForWebhooks waits until the webhook configurations are stored on
// the cluster config reaches, for at most options.MaxTime (default 10 s),
// polling every options.PollInterval (default 100 ms).
func WaitForWebhooks(config *rest.Config, mutatingWebhooks []*admissionregistrationv1.MutatingWebhookConfiguration,
	validatingWebhooks []*admissionregistrationv1.ValidatingWebhookConfiguration, options WebhookInstallOptions,
) error {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	api := client.AdmissionregistrationV1()
	return poll(options.PollInterval, options.MaxTime, func(ctx context.Context) (bool, error) {
		for _, h := range mutatingWebhooks {
			if _, err := api.MutatingWebhookConfigurations().Get(ctx, h.Name, metav1.GetOptions{}); err != nil {
				return false, nil
			}
		}
		for _, h := range validatingWebhooks {
			if _, err := api.ValidatingWebhookConfigurations().Get(ctx, h.Name, metav1.GetOptions{}); err != nil {
				return false, nil
			}
		}
		return true, nil
	})
}

func poll(interval, timeout time.Duration, done wait.ConditionWithContextFunc) error {
	if interval == 0 {
		interval = defaultPollInterval
	}
	if timeout == 0 {
		timeout = defaultMaxWait
	}
	return wait.PollUntilContextTimeout(context.Background(), interval, timeout, true, done)
}

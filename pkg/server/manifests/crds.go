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

// Package server assembles miniapiserver: Options -> Config -> Complete -> New
// builds the generic API server, its etcd, its storage and its API groups.
package manifests

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// InstallCRDs creates the CRDs (or updates them to what the manifests say:
// a restarted server has them already), then waits until each is
// Established and its resources are in discovery, as envtest's WaitForCRDs.
// The CRDs are applied concurrently and checked together, with no client
// rate limit: the server's own controllers establish them in a few
// milliseconds each.
func InstallCRDs(ctx context.Context, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
	if len(crds) == 0 {
		return nil
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	crdClient := client.ApiextensionsV1().CustomResourceDefinitions()
	var g errgroup.Group
	for _, want := range crds {
		g.Go(func() error {
			if _, err := createOrUpdate(ctx, want.DeepCopy(), crdClient.Create, crdClient.Get, crdClient.Update); err != nil {
				return fmt.Errorf("installing CustomResourceDefinition %q: %w", want.Name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}

	var pending string // what is still awaited
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := crdClient.List(ctx, metav1.ListOptions{})
		if err != nil {
			pending = err.Error()
			return false, nil
		}
		current := map[string]*apiextensionsv1.CustomResourceDefinition{}
		for i := range list.Items {
			current[list.Items[i].Name] = &list.Items[i]
		}
		for _, want := range crds {
			crd, ok := current[want.Name]
			if !ok {
				return false, fmt.Errorf("CustomResourceDefinition %q is gone", want.Name)
			}
			if apiextensionshelpers.IsCRDConditionFalse(crd, apiextensionsv1.NamesAccepted) {
				c := apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.NamesAccepted)
				return false, fmt.Errorf("CustomResourceDefinition %q: names not accepted: %s", want.Name, c.Message)
			}
			if !apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
				pending = fmt.Sprintf("%s not Established", want.Name)
				return false, nil
			}
		}
		_, resources, err := disco.ServerGroupsAndResources()
		if err != nil {
			pending = err.Error()
			return false, nil
		}
		served := map[string]bool{} // group/version/resource
		for _, list := range resources {
			for _, r := range list.APIResources {
				served[list.GroupVersion+"/"+r.Name] = true
			}
		}
		for _, want := range crds {
			crd := current[want.Name]
			for _, v := range crd.Spec.Versions {
				if v.Served && !served[crd.Spec.Group+"/"+v.Name+"/"+crd.Status.AcceptedNames.Plural] {
					pending = fmt.Sprintf("%s/%s %s not in discovery", crd.Spec.Group, v.Name, crd.Status.AcceptedNames.Plural)
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("CustomResourceDefinitions not served: %w (%s)", err, pending)
	}
	return warmCRDs(ctx, cfg, crds)
}

// warmCRDs lists one custom resource of each CRD, which makes the
// apiextensions server build the CRD's storage, validators and schemas:
// it builds them on the first request for the CRD's resources, and that
// request would otherwise be the test's first create.
func warmCRDs(ctx context.Context, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var g errgroup.Group
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
			g.Go(func() error {
				if _, err := client.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
					return fmt.Errorf("listing %s: %w", gvr, err)
				}
				return nil
			})
			break // the first request for any version builds them all
		}
	}
	return g.Wait()
}

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

package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// ReadCRDs reads the CustomResourceDefinitions in paths: YAML (one or more
// documents) or JSON files, or directories, whose .yaml, .yml and .json
// files are read (not their subdirectories), as envtest reads its
// CRDDirectoryPaths. Documents of other kinds are skipped; a path that does
// not exist, a manifest that does not parse and an apiextensions.k8s.io/v1beta1
// CRD (no longer served since Kubernetes 1.22) are errors.
func ReadCRDs(paths []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	err := readManifests(paths, func(file string, u *unstructured.Unstructured) error {
		if u.GetKind() != "CustomResourceDefinition" {
			return nil
		}
		if u.GetAPIVersion() != apiextensionsv1.SchemeGroupVersion.String() {
			return fmt.Errorf("%s: CustomResourceDefinition %q is %s; only %s is served", file, u.GetName(), u.GetAPIVersion(), apiextensionsv1.SchemeGroupVersion)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, crd, true); err != nil {
			return fmt.Errorf("%s: CustomResourceDefinition %q: %w", file, u.GetName(), err)
		}
		crds = append(crds, crd)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("CRD path: %w", err)
	}
	return crds, nil
}

// ReadWebhookConfigurations reads the webhook configurations in paths
// (files, or directories such as a kubebuilder project's config/webhook),
// as ReadCRDs reads CRDs: documents of other kinds are skipped.
func ReadWebhookConfigurations(paths []string) ([]*admissionregistrationv1.MutatingWebhookConfiguration, []*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	var mutating []*admissionregistrationv1.MutatingWebhookConfiguration
	var validating []*admissionregistrationv1.ValidatingWebhookConfiguration
	err := readManifests(paths, func(file string, u *unstructured.Unstructured) error {
		var obj any
		switch u.GetKind() {
		case "MutatingWebhookConfiguration":
			c := &admissionregistrationv1.MutatingWebhookConfiguration{}
			mutating, obj = append(mutating, c), c
		case "ValidatingWebhookConfiguration":
			c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			validating, obj = append(validating, c), c
		default:
			return nil
		}
		if u.GetAPIVersion() != admissionregistrationv1.SchemeGroupVersion.String() {
			return fmt.Errorf("%s: %s %q is %s; only %s is served", file, u.GetKind(), u.GetName(), u.GetAPIVersion(), admissionregistrationv1.SchemeGroupVersion)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, obj, true); err != nil {
			return fmt.Errorf("%s: %s %q: %w", file, u.GetKind(), u.GetName(), err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("webhook path: %w", err)
	}
	return mutating, validating, nil
}

// readManifests calls visit with each object in paths: YAML (one or more
// documents) or JSON files, or directories, whose .yaml, .yml and .json
// files are read (not their subdirectories), as envtest reads them.
func readManifests(paths []string, visit func(file string, u *unstructured.Unstructured) error) error {
	for _, path := range paths {
		files, err := manifestFiles(path)
		if err != nil {
			return err
		}
		for _, file := range files {
			if err := readManifestFile(file, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

func manifestFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	return files, nil // ReadDir sorts by name
}

func readManifestFile(file string, visit func(file string, u *unstructured.Unstructured) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	docs := utilyaml.NewYAMLReader(bufio.NewReader(f))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		var u unstructured.Unstructured
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if u.Object == nil {
			continue // an empty document
		}
		if err := visit(file, &u); err != nil {
			return err
		}
	}
}

// installCRDs creates the CRDs (or updates them to what the manifests say:
// a restarted server has them already), then waits until each is
// Established and its resources are in discovery, as envtest's WaitForCRDs.
// The CRDs are applied concurrently and checked together, with no client
// rate limit: the server's own controllers establish them in a few
// milliseconds each.
func installCRDs(ctx context.Context, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
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

// crdsToInstall are the CRDs o asks a server to install on start: those of
// CRDPaths, then copies of CRDs, pointed at ConversionWebhook.
func (o *Options) crdsToInstall() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := ReadCRDs(o.CRDPaths)
	if err != nil {
		return nil, err
	}
	for _, crd := range o.CRDs {
		crds = append(crds, crd.DeepCopy())
	}
	setConversionWebhooks(crds, o.ConversionWebhook)
	return crds, nil
}

// InstallOnto installs what o asks a server to install on start (the CRDs
// of CRDPaths and CRDs, pointed at ConversionWebhook, and the webhook
// configurations) onto the cluster cfg reaches, another server, as
// controller-runtime's envtest does with an existing cluster. It returns
// once the CRDs are served, with the CRDs it installed.
func InstallOnto(ctx context.Context, cfg *rest.Config, o *Options) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	if err := errors.Join(o.Errors...); err != nil {
		return nil, err
	}
	crds, err := o.crdsToInstall()
	if err != nil {
		return nil, err
	}
	if err := installCRDs(ctx, cfg, crds); err != nil {
		return nil, err
	}
	hooks := webhookConfigurations{mutating: o.MutatingWebhooks, validating: o.ValidatingWebhooks}
	if err := hooks.install(ctx, cfg); err != nil {
		return nil, err
	}
	return crds, nil
}

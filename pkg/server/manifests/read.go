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
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
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

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

// Command podvalidation writes what kube-apiserver's pod validation
// (k8s.io/kubernetes' ValidatePodCreate, ValidatePodUpdate and
// ValidatePodStatusUpdate, after DropDisabledPodFields, with its default
// feature gates) says of the
// cases in each NAME.yaml of a directory to NAME.txt there, as
// pkg/registry/pod's TestUpstreamMessages expects them (see there):
//
//	go run ./podvalidation ../../pkg/registry/pod/testdata/validation
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	corev1conv "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	"sigs.k8s.io/yaml"
)

// cases is the file's shape.
type cases struct {
	Base  json.RawMessage
	Cases []struct {
		Verb, Name string
		Old, New   json.RawMessage
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: podvalidation DIR")
		os.Exit(1)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.yaml"))
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no .yaml file in %s", os.Args[1])
	}
	for _, file := range files {
		if err == nil {
			err = write(file)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "podvalidation:", err)
		os.Exit(1)
	}
}

// write writes upstream's messages for the cases in file to its .txt.
func write(file string) error {
	var out strings.Builder
	if err := run(file, &out); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(strings.TrimSuffix(file, ".yaml")+".txt", []byte(out.String()), 0o644)
}

func run(path string, out *strings.Builder) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var f cases
	if err := yaml.Unmarshal(data, &f); err != nil {
		return err
	}
	for _, c := range f.Cases {
		old, err := patched(f.Base, c.Old)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		now, err := patched(old, c.New)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		o, err := internal(old)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		n, err := internal(now)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		var errs field.ErrorList
		switch c.Verb { // the strategy's dropping of disabled fields, then validation
		case "create":
			podutil.DropDisabledPodFields(n, nil)
			errs = validation.ValidatePodCreate(n, podutil.GetValidationOptionsFromPodSpecAndMeta(&n.Spec, nil, &n.ObjectMeta, nil))
		case "update":
			podutil.DropDisabledPodFields(n, o)
			errs = validation.ValidatePodUpdate(n, o, podutil.GetValidationOptionsFromPodSpecAndMeta(&n.Spec, &o.Spec, &n.ObjectMeta, &o.ObjectMeta))
		case "status":
			podutil.DropDisabledPodFields(n, o)
			errs = validation.ValidatePodStatusUpdate(n, o, podutil.GetValidationOptionsFromPodSpecAndMeta(&n.Spec, &o.Spec, &n.ObjectMeta, &o.ObjectMeta))
		default:
			return fmt.Errorf("%s: verb %q is not create, update or status", c.Name, c.Verb)
		}
		var result error
		if len(errs) > 0 {
			result = apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, n.Name, errs)
		}
		fmt.Fprintf(out, "=== %s %s\n%v\n", c.Verb, c.Name, result)
	}
	return nil
}

// patched is pod with patch applied as a strategic merge patch.
func patched(pod, patch json.RawMessage) (json.RawMessage, error) {
	if len(patch) == 0 {
		return pod, nil
	}
	return strategicpatch.StrategicMergePatch(pod, patch, corev1.Pod{})
}

// internal is the pod, defaulted, as kube-apiserver validates it.
func internal(data json.RawMessage) (*core.Pod, error) {
	var p corev1.Pod
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(&p)
	var out core.Pod
	err := corev1conv.Convert_v1_Pod_To_core_Pod(&p, &out, nil)
	return &out, err
}

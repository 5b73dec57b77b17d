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

// Command validation writes what kube-apiserver's validation says of the
// cases in each NAME.yaml of the directories it is given (their objects of
// one kind: Pod unless the file's kind says Service) to NAME.txt there, as
// the TestUpstreamMessages of pkg/registry/pod and pkg/registry/service
// expect them (see there). It runs k8s.io/kubernetes' own code with its
// default feature gates: for a pod DropDisabledPodFields, then
// ValidatePodCreate, ValidatePodUpdate or ValidatePodStatusUpdate; for a
// service the strategy's PrepareForCreate or PrepareForUpdate, then
// ValidateServiceCreate, ValidateServiceUpdate or ValidateServiceStatusUpdate.
//
//	go run ./validation ../../pkg/registry/pod/testdata/validation ../../pkg/registry/service/testdata/validation
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"sigs.k8s.io/yaml"
)

// cases is a file's shape.
type cases struct {
	Kind  string
	Base  json.RawMessage
	Cases []struct {
		Verb, Name string
		Old, New   json.RawMessage
	}
}

// A kind is how upstream validates objects of one kind.
type kind struct {
	// versioned and internal return new objects of the kind.
	versioned, internal func() runtime.Object
	// validate validates n, with old o (nil on create), as verb does
	// (create, update or status).
	validate func(verb string, n, o runtime.Object) field.ErrorList
}

var kinds = map[string]kind{
	"Pod": {
		versioned: func() runtime.Object { return &corev1.Pod{} },
		internal:  func() runtime.Object { return &core.Pod{} },
		validate: func(verb string, n, o runtime.Object) field.ErrorList {
			pod := n.(*core.Pod)
			if verb == "create" {
				podutil.DropDisabledPodFields(pod, nil)
				return validation.ValidatePodCreate(pod, podutil.GetValidationOptionsFromPodSpecAndMeta(&pod.Spec, nil, &pod.ObjectMeta, nil))
			}
			old := o.(*core.Pod)
			podutil.DropDisabledPodFields(pod, old)
			opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&pod.Spec, &old.Spec, &pod.ObjectMeta, &old.ObjectMeta)
			if verb == "status" {
				return validation.ValidatePodStatusUpdate(pod, old, opts)
			}
			return validation.ValidatePodUpdate(pod, old, opts)
		},
	},
	"Service": {
		versioned: func() runtime.Object { return &corev1.Service{} },
		internal:  func() runtime.Object { return &core.Service{} },
		validate: func(verb string, n, o runtime.Object) field.ErrorList {
			ctx := context.Background()
			switch verb {
			case "create":
				service.Strategy.PrepareForCreate(ctx, n)
				return service.Strategy.Validate(ctx, n)
			case "status":
				service.StatusStrategy.PrepareForUpdate(ctx, n, o)
				return service.StatusStrategy.ValidateUpdate(ctx, n, o)
			}
			service.Strategy.PrepareForUpdate(ctx, n, o)
			return service.Strategy.ValidateUpdate(ctx, n, o)
		},
	},
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: validation DIR...")
		os.Exit(1)
	}
	var err error
	for _, dir := range os.Args[1:] {
		files, globErr := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err == nil && (globErr != nil || len(files) == 0) {
			err = fmt.Errorf("no .yaml file in %s", dir)
		}
		for _, file := range files {
			if err == nil {
				err = write(file)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "validation:", err)
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
	f := cases{Kind: "Pod"}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return err
	}
	k, ok := kinds[f.Kind]
	if !ok {
		return fmt.Errorf("kind %q is not Pod or Service", f.Kind)
	}
	for _, c := range f.Cases {
		if c.Verb != "create" && c.Verb != "update" && c.Verb != "status" {
			return fmt.Errorf("%s: verb %q is not create, update or status", c.Name, c.Verb)
		}
		old, err := k.patched(f.Base, c.Old)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		now, err := k.patched(old, c.New)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		o, err := k.toInternal(old)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		n, err := k.toInternal(now)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		if c.Verb == "create" {
			o = nil
		}
		var result error
		if errs := k.validate(c.Verb, n, o); len(errs) > 0 {
			result = apierrors.NewInvalid(core.Kind(f.Kind), n.(interface{ GetName() string }).GetName(), errs)
		}
		fmt.Fprintf(out, "=== %s %s\n%v\n", c.Verb, c.Name, result)
	}
	return nil
}

// patched is obj with patch applied as a strategic merge patch.
func (k kind) patched(obj, patch json.RawMessage) (json.RawMessage, error) {
	if len(patch) == 0 {
		return obj, nil
	}
	return strategicpatch.StrategicMergePatch(obj, patch, k.versioned())
}

// toInternal is the object, defaulted, as kube-apiserver validates it.
func (k kind) toInternal(data json.RawMessage) (runtime.Object, error) {
	v := k.versioned()
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(v)
	out := k.internal()
	err := legacyscheme.Scheme.Convert(v, out, nil)
	return out, err
}

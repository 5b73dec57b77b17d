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
// one kind, the file's kind: Pod unless it says otherwise) to NAME.txt
// there, as registrytest.CompareUpstream expects them (see there). It runs
// k8s.io/kubernetes' own strategies, with its default feature gates, as
// kube-apiserver's generic store runs them: rest.BeforeCreate (the
// strategy's PrepareForCreate, then its validation, declarative
// validation included) for a create, rest.BeforeUpdate for an update, and
// with the status strategy for a status update.
//
//	go run ./validation ../../pkg/registry/pod/testdata/validation ../../pkg/registry/service/testdata/validation
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
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
		return fmt.Errorf("kind %q is not one of %v", f.Kind, slices.Sorted(maps.Keys(kinds)))
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
		info := &genericapirequest.RequestInfo{APIGroup: k.gv.Group, APIVersion: k.gv.Version}
		ctx := genericapirequest.WithNamespace(context.Background(), n.(metav1.Object).GetNamespace())
		var result error
		switch c.Verb {
		case "create":
			result = rest.BeforeCreate(k.strategy, genericapirequest.WithRequestInfo(ctx, info), n)
		case "update":
			result = rest.BeforeUpdate(k.strategy, genericapirequest.WithRequestInfo(ctx, info), n, o)
		case "status":
			info.Subresource = "status"
			result = rest.BeforeUpdate(k.status, genericapirequest.WithRequestInfo(ctx, info), n, o)
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
	return strategicpatch.StrategicMergePatch(obj, patch, k.versioned.DeepCopyObject())
}

// toInternal is the object, defaulted, as kube-apiserver validates it.
func (k kind) toInternal(data json.RawMessage) (runtime.Object, error) {
	v := k.versioned.DeepCopyObject()
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(v)
	out := k.internal.DeepCopyObject()
	err := legacyscheme.Scheme.Convert(v, out, nil)
	return out, err
}

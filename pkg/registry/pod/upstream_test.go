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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/yaml"

	"github.com/miniapiserver/miniapiserver/pkg/api"
)

// TestUpstreamMessages: pods are refused, or not, on create, update and
// status update as kube-apiserver 1.37.2's validation does, in its words.
// Each testdata/validation/NAME.yaml holds cases: its old pod is base with
// old applied as a strategic merge patch, its new pod old with new applied
// (create: base with new); verb is create, update (the pod) or status (its
// status). NAME.txt holds what k8s.io/kubernetes' validation said of each:
// after adding cases, regenerate the .txt files from hack/upstream with
//
//	go run ./podvalidation ../../pkg/registry/pod/testdata/validation
func TestUpstreamMessages(t *testing.T) {
	AllowPrivileged(false) // kube-apiserver's default, which the cases' messages have
	t.Cleanup(func() { AllowPrivileged(true) })
	files, err := filepath.Glob("testdata/validation/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(file, ".yaml") + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), upstreamCases(t, file)); diff != "" {
				t.Errorf("messages (-upstream +ours):\n%s", diff)
			}
		})
	}
}

// upstreamCases returns what our storage says of file's cases.
func upstreamCases(t *testing.T, file string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Base  json.RawMessage
		Cases []struct {
			Verb, Name string
			Old, New   json.RawMessage
		}
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	for _, c := range f.Cases {
		old := patchedPod(t, f.Base, c.Old)
		now := patchedPod(t, f.Base, c.Old, c.New)
		p := newPods(t)
		var err error
		switch c.Verb {
		case "create":
			_, err = p.store.Create(ctx, now, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		case "update", "status":
			now.ResourceVersion = p.seed(t, old).ResourceVersion
			store := p.store.Update
			if c.Verb == "status" {
				store = p.status.Update
			}
			_, _, err = store(ctx, now.Name, rest.DefaultUpdatedObjectInfo(now), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		default:
			t.Fatalf("%s: verb %q is not create, update or status", c.Name, c.Verb)
		}
		fmt.Fprintf(&got, "=== %s %s\n%v\n", c.Verb, c.Name, err)
	}
	if out := os.Getenv("POD_VALIDATION_OURS"); out != "" { // to compare by eye while porting
		if err := os.WriteFile(filepath.Join(out, filepath.Base(strings.TrimSuffix(file, ".yaml")+".txt")), []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return got.String()
}

// patchedPod is base with patches applied in turn as strategic merge
// patches, defaulted.
func patchedPod(t *testing.T, base json.RawMessage, patches ...json.RawMessage) *corev1.Pod {
	t.Helper()
	data := base
	for _, patch := range patches {
		if len(patch) == 0 {
			continue
		}
		var err error
		if data, err = strategicpatch.StrategicMergePatch(data, patch, corev1.Pod{}); err != nil {
			t.Fatal(err)
		}
	}
	var p corev1.Pod
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	api.Scheme.Default(&p)
	return &p
}

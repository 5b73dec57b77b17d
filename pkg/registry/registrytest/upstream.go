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

package registrytest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/yaml"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// Verb is how an upstream case's object is written: "create", "update"
// or "status" (an update of the status subresource).
type Verb string

// CompareUpstream checks that ours says of the cases in each
// testdata/validation/NAME.yaml what kube-apiserver 1.37.2's validation
// said of them, as NAME.txt holds it. A file holds cases of a base object:
// a case's old object is base with old applied as a strategic merge patch,
// its new one old with new applied (create: base with new), both
// defaulted, as newObj returns objects of the file's kind (Pod unless its
// kind says otherwise); verb is create, update or status. write writes
// the new object (over the old one for an update) and returns its error. After adding cases, regenerate the .txt files from
// hack/upstream with
//
//	go run ./validation DIR...
//
// With $VALIDATION_OURS set to a directory, ours are written there too,
// to compare by eye while porting.
func CompareUpstream(t *testing.T, newObj func(kind string) runtime.Object, write func(t *testing.T, verb Verb, old, now runtime.Object) error) {
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
			got := ours(t, file, newObj, write)
			if out := os.Getenv("VALIDATION_OURS"); out != "" {
				if err := os.WriteFile(filepath.Join(out, filepath.Base(strings.TrimSuffix(file, ".yaml")+".txt")), []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("messages (-upstream +ours):\n%s", diff)
			}
		})
	}
}

// ours returns what write says of file's cases.
func ours(t *testing.T, file string, newObj func(kind string) runtime.Object, write func(t *testing.T, verb Verb, old, now runtime.Object) error) string {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f := struct {
		Kind  string
		Base  json.RawMessage
		Cases []struct {
			Verb     Verb
			Name     string
			Old, New json.RawMessage
		}
	}{Kind: "Pod"}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	kind := func() runtime.Object { return newObj(f.Kind) }
	var got strings.Builder
	for _, c := range f.Cases {
		if c.Verb != "create" && c.Verb != "update" && c.Verb != "status" {
			t.Fatalf("%s: verb %q is not create, update or status", c.Name, c.Verb)
		}
		old := patched(t, kind, f.Base, c.Old)
		now := patched(t, kind, f.Base, c.Old, c.New)
		fmt.Fprintf(&got, "=== %s %s\n%v\n", c.Verb, c.Name, write(t, c.Verb, old, now))
	}
	return got.String()
}

// patched is base with patches applied in turn as strategic merge
// patches, defaulted.
func patched(t *testing.T, newObj func() runtime.Object, base json.RawMessage, patches ...json.RawMessage) runtime.Object {
	t.Helper()
	data := base
	for _, patch := range patches {
		if len(patch) == 0 {
			continue
		}
		var err error
		if data, err = strategicpatch.StrategicMergePatch(data, patch, newObj()); err != nil {
			t.Fatal(err)
		}
	}
	obj := newObj()
	if err := json.Unmarshal(data, obj); err != nil {
		t.Fatal(err)
	}
	api.Scheme.Default(obj)
	return obj
}

// WriteUpstreamCase writes a case's new object through the storage
// newStorage makes of resource (on a new MemStorage), as CompareUpstream's
// write does: a create, or an update (of the resource, or of its status)
// of old, stored as it is.
func WriteUpstreamCase(t *testing.T, newStorage NewStorageFunc, resource string, verb Verb, old, now runtime.Object) error {
	t.Helper()
	mem := NewMemStorage()
	storages, err := newStorage(mem.Options(resource))
	if err != nil {
		t.Fatalf("NewStorage: %v", err)
	}
	storage := storages[resource]
	ctx := genericapirequest.WithNamespace(context.Background(), now.(metav1.Object).GetNamespace())
	if verb == "create" {
		_, err := storage.(rest.Creater).Create(ctx, now, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		return err
	}
	_, stored := SeedObject(t, mem, storeOf(t, storage), old)
	now.(metav1.Object).SetResourceVersion(stored.(metav1.Object).GetResourceVersion())
	updater := storage.(rest.Updater)
	if verb == "status" {
		updater = storages[resource+"/status"].(rest.Updater)
	}
	_, _, err = updater.Update(ctx, now.(metav1.Object).GetName(), rest.DefaultUpdatedObjectInfo(now), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	return err
}

// storeOf is the *registry.REST storage is, or embeds.
func storeOf(t *testing.T, storage rest.Storage) *registry.REST {
	t.Helper()
	if store, ok := storage.(*registry.REST); ok {
		return store
	}
	if v := reflect.Indirect(reflect.ValueOf(storage)); v.Kind() == reflect.Struct {
		if f := v.FieldByName("REST"); f.IsValid() {
			if store, ok := f.Interface().(*registry.REST); ok {
				return store
			}
		}
	}
	t.Fatalf("%T is no *registry.REST and embeds none", storage)
	return nil
}

// Kind is a kind the cases of a package's testdata/validation may hold:
// the resource its objects are written to, and a new one.
type Kind struct {
	Resource string
	New      func() runtime.Object
}

// CompareUpstreamStorage is CompareUpstream of cases written
// (WriteUpstreamCase) through the storage newStorage makes, by kind.
func CompareUpstreamStorage(t *testing.T, newStorage NewStorageFunc, kinds map[string]Kind) {
	kind := func(t *testing.T, name string) Kind {
		k, ok := kinds[name]
		if !ok {
			t.Fatalf("kind %q has no storage here", name)
		}
		return k
	}
	CompareUpstream(t, func(name string) runtime.Object { return kind(t, name).New() }, func(t *testing.T, verb Verb, old, now runtime.Object) error {
		gvks, _, err := api.Scheme.ObjectKinds(now)
		if err != nil {
			t.Fatal(err)
		}
		return WriteUpstreamCase(t, newStorage, kind(t, gvks[0].Kind).Resource, verb, old, now)
	})
}

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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const crdYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %s
spec:
  group: example.com
  scope: Namespaced
  names: {plural: %s, kind: K, singular: k}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
`

func crd(name string) string {
	plural, _, _ := strings.Cut(name, ".")
	return fmt.Sprintf(crdYAML, name, plural)
}

func TestReadCRDs(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		// Several documents, an empty one and another kind (skipped).
		"a.yaml":      "---\n" + crd("as.example.com") + "---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n" + crd("bs.example.com"),
		"c.json":      `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"cs.example.com"},"spec":{"group":"example.com","scope":"Cluster","names":{"plural":"cs","kind":"C"},"versions":[{"name":"v1","served":true,"storage":true}]}}`,
		"README.md":   "not a manifest",
		"sub/d.yaml":  crd("ds.example.com"), // subdirectories are not read
		"kustom.yml":  crd("es.example.com"),
		"other.yaml~": crd("fs.example.com"),
	})
	crds, err := ReadCRDs([]string{dir, filepath.Join(dir, "sub", "d.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, " "), "as.example.com bs.example.com cs.example.com es.example.com ds.example.com"; got != want {
		t.Errorf("read %q, want %q", got, want)
	}
	if crds[2].Spec.Scope != "Cluster" || crds[0].Spec.Versions[0].Schema == nil {
		t.Errorf("decoded CRDs: %+v", crds)
	}
}

func TestReadCRDsErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"v1beta1.yaml": strings.Replace(crd("as.example.com"), "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1", 1),
		"bad.yaml":     "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x\n",
		"unknown.yaml": strings.Replace(crd("as.example.com"), "  group: example.com", "  group: example.com\n  grup: typo", 1),
	})
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{filepath.Join(dir, "v1beta1.yaml"), "only apiextensions.k8s.io/v1 is served"},
		{filepath.Join(dir, "bad.yaml"), "bad.yaml"},
		{filepath.Join(dir, "unknown.yaml"), `unknown field "spec.grup"`},
	} {
		if _, err := ReadCRDs([]string{tc.path}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadCRDs(%s): %v, want an error with %q", filepath.Base(tc.path), err, tc.want)
		}
	}
}

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

package driver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
)

// TestCRDManifestsValid checks that every manifest the crds section writes
// decodes strictly and passes the API server's CRD validation (structural
// schema, defaults, the CEL rule compiled), so that a broken one fails here
// rather than as a server that never gets ready.
func TestCRDManifestsValid(t *testing.T) {
	dir := t.TempDir()
	const n = 3
	if err := WriteCRDManifests(dir, n); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != n {
		t.Fatalf("got %d manifests, want %d", len(files), n)
	}
	seen := map[string]bool{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var crd apiextensionsv1.CustomResourceDefinition
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&crd); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(data, &top); err != nil {
				t.Fatal(err)
			}
			if _, ok := top["status"]; ok {
				t.Errorf("got a manifest with a status, want none")
			}
			if seen[crd.Spec.Group] {
				t.Errorf("group %s used twice", crd.Spec.Group)
			}
			seen[crd.Spec.Group] = true
			apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&crd)
			var internal apiextensions.CustomResourceDefinition
			if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&crd, &internal, nil); err != nil {
				t.Fatal(err)
			}
			if errs := apiextensionsvalidation.ValidateCustomResourceDefinition(t.Context(), &internal); len(errs) > 0 {
				t.Errorf("got validation errors %v, want none", errs.ToAggregate())
			}
		})
	}
}

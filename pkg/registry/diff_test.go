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

package registry

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestDiff: kube-apiserver 1.37's message for a pending claim whose
// storage request grew ends in this diff, of its internal spec: Go field
// names in declaration order, a nil map as null, quantities as strings.
func TestDiff(t *testing.T) {
	spec := func(size string) corev1.PersistentVolumeClaimSpec {
		return corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		}
	}
	want := `@@ -6,7 +6,7 @@
  "Resources": {
   "Limits": null,
   "Requests": {
-   "storage": "1Gi"
+   "storage": "2Gi"
   }
  },
  "VolumeName": "",
`
	if got := Diff(spec("1Gi"), spec("2Gi")); got != want {
		t.Errorf("Diff: got\n%s\nwant\n%s", got, want)
	}
	// An embedded struct's fields are its parent's (encoding/json's rule).
	source := func(path string) corev1.PersistentVolumeSpec {
		return corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}}
	}
	if got, want := Diff(source("/a"), source("/b")), "\n-  \"Path\": \"/a\",\n"; !strings.Contains(got, want) {
		t.Errorf("Diff of an embedded struct: got\n%s\nwant a line %q", got, want)
	}
}

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

package resources

import (
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestDeleteAnswers: a DELETE answers with the deleted object for the
// resources whose upstream stores set ReturnDeletedObject (k8s.io/kubernetes
// pkg/registry, 1.37), and with a Status for the others.
func TestDeleteAnswers(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	dyn := dynamic.NewForConfigOrDie(s.Config)
	returnsObject := []string{"persistentvolumes", "persistentvolumeclaims", "podtemplates", "resourcequotas", "services", "serviceaccounts",
		"deviceclasses.resource.k8s.io", "resourceclaims.resource.k8s.io", "resourceclaimtemplates.resource.k8s.io", "resourceslices.resource.k8s.io",
		"csidrivers.storage.k8s.io", "csinodes.storage.k8s.io", "storageclasses.storage.k8s.io", "volumeattachments.storage.k8s.io",
		"volumeattributesclasses.storage.k8s.io"}
	for _, r := range framework.ServedResources {
		gr := r.GVR.GroupResource().String()
		if r.GVR.Resource == "pods" { // graceful: the object, being deleted, whatever the store says
			continue
		}
		t.Run(gr, func(t *testing.T) {
			obj := framework.NewObject(r.GVR.GroupVersion().String(), r.Kind, "deleted", r.Body)
			if _, err := r.Client(dyn).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			body, err := client.(*kubernetes.Clientset).RESTClient().Delete().AbsPath(r.CollectionPath(), "deleted").DoRaw(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var got metav1.TypeMeta
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			want := "Status"
			if slices.Contains(returnsObject, gr) {
				want = r.Kind
			}
			if got.Kind != want {
				t.Errorf("DELETE answered a %s, want a %s", got.Kind, want)
			}
		})
	}
}

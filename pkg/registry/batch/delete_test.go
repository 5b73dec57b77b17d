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

package batch

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

type warnings []string

func (w *warnings) AddWarning(_, text string) { *w = append(*w, text) }

// TestJobDeletionOrphansByDefault: as upstream's batch/v1 jobs, a deletion
// that names no propagation policy orphans the Job's pods, and is warned
// of in upstream's words (one naming a policy is not); cron jobs are not.
func TestJobDeletionOrphansByDefault(t *testing.T) {
	const want = "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"
	jobs := registrytest.REST(t, NewStorage, "jobs")
	gc, ok := jobs.DeleteStrategy.(rest.GarbageCollectionDeleteStrategy)
	if !ok || gc.DefaultGarbageCollectionPolicy(context.Background()) != rest.OrphanDependents {
		t.Errorf("jobs' delete strategy: got %T, want one whose default policy is OrphanDependents", jobs.DeleteStrategy)
	}
	if _, ok := registrytest.REST(t, NewStorage, "cronjobs").DeleteStrategy.(rest.GarbageCollectionDeleteStrategy); ok {
		t.Error("cronjobs' delete strategy has a default policy, want none (background)")
	}
	for _, tt := range []struct {
		name    string
		options *metav1.DeleteOptions
		want    []string
	}{
		{"no policy", &metav1.DeleteOptions{}, []string{want}},
		{"Background", &metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}, nil},
		{"orphanDependents", &metav1.DeleteOptions{OrphanDependents: ptr.To(false)}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := registrytest.NewMemStorage()
			storages, err := NewStorage(mem.Options("jobs"))
			if err != nil {
				t.Fatal(err)
			}
			store := storages["jobs"].(rest.GracefulDeleter)
			var got warnings
			ctx := warning.WithWarningRecorder(genericapirequest.WithNamespace(context.Background(), "default"), &got)
			_, _, _ = store.Delete(ctx, "missing", rest.ValidateAllObjectFunc, tt.options)
			if !slices.Equal(got, tt.want) {
				t.Errorf("delete warnings: got %q, want %q", got, tt.want)
			}
			got = nil
			_, _ = storages["jobs"].(rest.CollectionDeleter).DeleteCollection(ctx, rest.ValidateAllObjectFunc, tt.options, nil)
			if !slices.Equal(got, tt.want) {
				t.Errorf("deletecollection warnings: got %q, want %q", got, tt.want)
			}
		})
	}
}

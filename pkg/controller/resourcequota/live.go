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

package resourcequota

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/metadata"
)

// liveListers list the objects of a resource no informer holds, with a
// metadata-only list, each time a quota of them is recomputed (a resync
// period at most, not on every change).
type liveListers struct {
	meta   metadata.Interface
	mapper meta.ResettableRESTMapper
}

// list returns a generic.ListFuncByNamespace for gr, its version found
// when it lists (a custom resource may be served later than its quota
// is made).
func (l *liveListers) list(gr schema.GroupResource) generic.ListFuncByNamespace {
	return func(ns string) ([]runtime.Object, error) {
		gvr, err := l.mapper.ResourceFor(gr.WithVersion(""))
		if err != nil {
			l.mapper.Reset()
			if gvr, err = l.mapper.ResourceFor(gr.WithVersion("")); err != nil {
				return nil, err
			}
		}
		list, err := l.meta.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		items := make([]runtime.Object, len(list.Items))
		for i := range list.Items {
			items[i] = &list.Items[i]
		}
		return items, nil
	}
}

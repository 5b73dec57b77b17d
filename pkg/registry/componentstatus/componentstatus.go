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

package componentstatus

import (
	"context"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of componentstatuses: read-only (get and
// list, no watch), each status probed when asked, from servers.
func NewStorage(servers map[string]Server) map[string]rest.Storage {
	return map[string]rest.Storage{"componentstatuses": &REST{servers: servers}}
}

// REST is upstream's componentstatus REST: a status per server, probed
// on each request, stored nowhere.
type REST struct {
	servers map[string]Server
}

var (
	_ rest.Getter               = &REST{}
	_ rest.Lister               = &REST{}
	_ rest.Scoper               = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

func (*REST) New() runtime.Object     { return &corev1.ComponentStatus{} }
func (*REST) NewList() runtime.Object { return &corev1.ComponentStatusList{} }
func (*REST) NamespaceScoped() bool   { return false }
func (*REST) ShortNames() []string    { return []string{"cs"} }
func (*REST) GetSingularName() string { return "componentstatus" }
func (*REST) Destroy()                {}

// Get implements rest.Getter: the named server's status, probed now.
func (r *REST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	server, ok := r.servers[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "componentstatus"}, name)
	}
	return status(ctx, name, server), nil
}

// List implements rest.Lister: every server's status, probed at once,
// sorted by name (upstream's come in the order the probes end). Label and
// field selectors match the metadata only, as upstream's.
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	statuses := make([]corev1.ComponentStatus, 0, len(r.servers))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, server := range r.servers {
		wg.Go(func() {
			s := status(ctx, name, server)
			mu.Lock()
			defer mu.Unlock()
			statuses = append(statuses, *s)
		})
	}
	wg.Wait()
	slices.SortFunc(statuses, func(a, b corev1.ComponentStatus) int { return strings.Compare(a.Name, b.Name) })
	pred := storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything()}
	if options != nil && options.LabelSelector != nil {
		pred.Label = options.LabelSelector
	}
	if options != nil && options.FieldSelector != nil {
		pred.Field = options.FieldSelector
	}
	list := &corev1.ComponentStatusList{Items: []corev1.ComponentStatus{}}
	for _, s := range statuses {
		if pred.MatchesObjectAttributes(s.Labels, generic.AddObjectMetaFieldsSet(fields.Set{}, &s.ObjectMeta, true)) {
			list.Items = append(list.Items, s)
		}
	}
	return list, nil
}

// status is upstream's getComponentStatus: one Healthy condition, True on
// success, False on failure, Unknown otherwise, with the probe's message
// and error.
func status(ctx context.Context, name string, server Server) *corev1.ComponentStatus {
	result, message, err := server.DoServerCheck(ctx)
	condition := corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionUnknown, Message: message}
	switch result {
	case Success:
		condition.Status = corev1.ConditionTrue
	case Failure:
		condition.Status = corev1.ConditionFalse
	}
	if err != nil {
		condition.Error = err.Error()
	}
	return &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: name}, Conditions: []corev1.ComponentCondition{condition}}
}

// ConvertToTable implements rest.TableConvertor with upstream's columns.
func (*REST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return table.ConvertToTable(ctx, object, tableOptions)
}

// table is upstream's printComponentStatus: NAME, STATUS (Healthy when
// the Healthy condition is True, Unhealthy when it is not, Unknown without
// one), MESSAGE and ERROR.
var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Status", Type: "string", Description: "Status of the component conditions"},
		{Name: "Message", Type: "string", Description: "Message of the component conditions"},
		{Name: "Error", Type: "string", Description: "Error of the component conditions"},
	},
	Cells: func(obj runtime.Object) []any {
		cs := obj.(*corev1.ComponentStatus)
		health, message, errorMessage := "Unknown", "", ""
		for _, c := range cs.Conditions {
			if c.Type == corev1.ComponentHealthy {
				health = "Unhealthy"
				if c.Status == corev1.ConditionTrue {
					health = "Healthy"
				}
				message, errorMessage = c.Message, c.Error
				break
			}
		}
		return []any{cs.Name, health, message, errorMessage}
	},
}

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
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Table prints a resource as kubectl shows it, with the columns upstream's
// printers (k8s.io/kubernetes pkg/printers/internalversion) define for it.
type Table struct {
	Columns []metav1.TableColumnDefinition
	// Cells returns one value per column.
	Cells func(obj runtime.Object) []any
}

var _ rest.TableConvertor = Table{}

var objectMetaDescriptions = metav1.ObjectMeta{}.SwaggerDoc()

// NameColumn and AgeColumn are the columns nearly every type prints.
var (
	NameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDescriptions["name"]}
	AgeColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDescriptions["creationTimestamp"]}
)

// The wide columns of the tables of types with a pod template
// (Deployments, Jobs, ...), as upstream's printers define them.
var (
	ContainersColumn = metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."}
	ImagesColumn     = metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."}
	SelectorColumn   = metav1.TableColumnDefinition{Name: "Selector", Type: "string", Priority: 1, Description: "Label selector for pods."}
)

// ContainersAndImages returns the comma-joined container names and images of a pod template.
func ContainersAndImages(t *corev1.PodTemplateSpec) (string, string) {
	var names, images []string
	for _, c := range t.Spec.Containers {
		names = append(names, c.Name)
		images = append(images, c.Image)
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

// ConvertToTable implements rest.TableConvertor.
func (t Table) ConvertToTable(_ context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	row := func(obj runtime.Object) error {
		table.Rows = append(table.Rows, metav1.TableRow{Cells: t.Cells(obj), Object: runtime.RawExtension{Object: obj}})
		return nil
	}
	var err error
	if meta.IsListType(object) {
		err = meta.EachListItem(object, row)
	} else {
		err = row(object)
	}
	if err != nil {
		return nil, err
	}
	if l, err := meta.ListAccessor(object); err == nil {
		table.ResourceVersion = l.GetResourceVersion()
		table.Continue = l.GetContinue()
		table.RemainingItemCount = l.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(object); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || !opts.NoHeaders {
		table.ColumnDefinitions = t.Columns
	}
	return table, nil
}

// Age prints how long ago t was, as kubectl's AGE column does ("<unknown>" for zero).
func Age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

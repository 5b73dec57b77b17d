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

package apps

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// The tables are upstream's printers (pkg/printers/internalversion) for these types.

func column(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: description}
}

func replicas(p *int32) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

var deploymentTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Ready", "string", "Number of the pod with ready state"),
		column("Up-to-date", "string", "Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
		column("Available", "string", "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."),
		registry.AgeColumn,
		registry.ContainersColumn, registry.ImagesColumn, registry.SelectorColumn,
	},
	Cells: func(obj runtime.Object) []any {
		d := obj.(*appsv1.Deployment)
		containers, images := registry.ContainersAndImages(&d.Spec.Template)
		return []any{d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)), int64(d.Status.UpdatedReplicas),
			int64(d.Status.AvailableReplicas), registry.Age(d.CreationTimestamp), containers, images, metav1.FormatLabelSelector(d.Spec.Selector)}
	},
}

var replicaSetTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Desired", "integer", "Number of desired pods."),
		column("Current", "integer", "Number of actual replicas."),
		column("Ready", "integer", "The number of ready replicas for this replica set."),
		registry.AgeColumn,
		registry.ContainersColumn, registry.ImagesColumn, registry.SelectorColumn,
	},
	Cells: func(obj runtime.Object) []any {
		rs := obj.(*appsv1.ReplicaSet)
		containers, images := registry.ContainersAndImages(&rs.Spec.Template)
		return []any{rs.Name, replicas(rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
			registry.Age(rs.CreationTimestamp), containers, images, metav1.FormatLabelSelector(rs.Spec.Selector)}
	},
}

var statefulSetTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Ready", "string", "Number of the pod with ready state"),
		registry.AgeColumn,
		registry.ContainersColumn, registry.ImagesColumn,
	},
	Cells: func(obj runtime.Object) []any {
		ss := obj.(*appsv1.StatefulSet)
		containers, images := registry.ContainersAndImages(&ss.Spec.Template)
		return []any{ss.Name, fmt.Sprintf("%d/%d", ss.Status.ReadyReplicas, replicas(ss.Spec.Replicas)), registry.Age(ss.CreationTimestamp), containers, images}
	},
}

var daemonSetTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
		column("Current", "integer", "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod."),
		column("Ready", "integer", "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready."),
		column("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
		column("Available", "integer", "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"),
		column("Node Selector", "string", "NodeSelector is a selector which must be true for the pod to fit on a node."),
		registry.AgeColumn,
		registry.ContainersColumn, registry.ImagesColumn, registry.SelectorColumn,
	},
	Cells: func(obj runtime.Object) []any {
		ds := obj.(*appsv1.DaemonSet)
		containers, images := registry.ContainersAndImages(&ds.Spec.Template)
		nodeSelector := labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector)
		return []any{ds.Name, int64(ds.Status.DesiredNumberScheduled), int64(ds.Status.CurrentNumberScheduled), int64(ds.Status.NumberReady),
			int64(ds.Status.UpdatedNumberScheduled), int64(ds.Status.NumberAvailable), nodeSelector, registry.Age(ds.CreationTimestamp),
			containers, images, metav1.FormatLabelSelector(ds.Spec.Selector)}
	},
}

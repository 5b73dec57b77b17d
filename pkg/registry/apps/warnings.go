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
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolumeclaim"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// The warnings kube-apiserver sends for the workloads: on create, of the
// pod template (and a Deployment's or ReplicaSet's name); on an update,
// of the template if the generation changed (a DaemonSet's template
// generation).

var templatePath = field.NewPath("spec", "template")

// podWarnings returns the Warnings of a Deployment or a ReplicaSet.
func (w *workload) podWarnings(obj, old runtime.Object) []string {
	_, _, template := w.spec(obj)
	m, _ := meta.Accessor(obj)
	if old == nil {
		return append(pod.NameWarnings(m.GetName()), pod.TemplateWarnings(templatePath, template)...)
	}
	if oldMeta, _ := meta.Accessor(old); m.GetGeneration() != oldMeta.GetGeneration() {
		return pod.TemplateWarnings(templatePath, template)
	}
	return nil
}

func daemonSetWarnings(obj, old runtime.Object) []string {
	ds := obj.(*appsv1.DaemonSet)
	if old == nil || templateGeneration(ds) != templateGeneration(old.(*appsv1.DaemonSet)) {
		return pod.TemplateWarnings(templatePath, &ds.Spec.Template)
	}
	return nil
}

func statefulSetWarnings(obj, old runtime.Object) []string {
	ss := obj.(*appsv1.StatefulSet)
	var warnings []string
	if old == nil || ss.Generation != old.(*appsv1.StatefulSet).Generation {
		warnings = pod.TemplateWarnings(templatePath, &ss.Spec.Template)
	}
	for i := range ss.Spec.VolumeClaimTemplates {
		p := field.NewPath("spec", "volumeClaimTemplates").Index(i)
		if old != nil {
			p = p.Child("Spec") // upstream's path on update, as it writes it
		}
		warnings = append(warnings, persistentvolumeclaim.SpecWarnings(p, &ss.Spec.VolumeClaimTemplates[i].Spec)...)
	}
	if ss.Spec.RevisionHistoryLimit != nil && *ss.Spec.RevisionHistoryLimit < 0 {
		warnings = append(warnings, "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended")
	}
	return warnings
}

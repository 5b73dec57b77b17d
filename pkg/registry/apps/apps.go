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
	"maps"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// workload describes one of the four types: what differs between them.
type workload struct {
	resource, singular string
	shortNames         []string
	newObj, newList    func() runtime.Object
	scale              bool
	// validateName checks metadata.name; a DNS subdomain if nil.
	validateName apimachineryvalidation.ValidateNameFunc
	// spec returns the parts of the spec every workload validates
	// (replicas is nil for DaemonSets, which have none).
	spec   func(obj runtime.Object) (replicas *int32, selector *metav1.LabelSelector, template *corev1.PodTemplateSpec)
	fields func(obj runtime.Object) fields.Set
	// validate checks the spec of a create (old is nil) or an update.
	validate func(obj, old runtime.Object) field.ErrorList
	// onCreate runs after the create strategy has cleared status.
	onCreate func(obj runtime.Object)
	// onUpdate runs after the update strategy has kept status and counted a spec change.
	onUpdate func(obj, old runtime.Object)
	// onStatusUpdate runs after the status strategy has kept spec and labels.
	onStatusUpdate func(obj, old runtime.Object)
	// validateStatus checks an update of the status subresource.
	validateStatus func(obj, old runtime.Object) field.ErrorList
	// warnings are the Warnings of the type; podWarnings if nil.
	warnings func(obj, old runtime.Object) []string
	table    registry.Table
}

var workloads = []workload{
	{
		resource: "deployments", singular: "deployment", shortNames: []string{"deploy"}, scale: true,
		newObj:  func() runtime.Object { return &appsv1.Deployment{} },
		newList: func() runtime.Object { return &appsv1.DeploymentList{} },
		spec: func(obj runtime.Object) (*int32, *metav1.LabelSelector, *corev1.PodTemplateSpec) {
			d := obj.(*appsv1.Deployment)
			return d.Spec.Replicas, d.Spec.Selector, &d.Spec.Template
		},
		validate: func(obj, old runtime.Object) field.ErrorList {
			oldD, _ := old.(*appsv1.Deployment)
			return validateDeployment(obj.(*appsv1.Deployment), oldD)
		},
		// Upstream counts annotation changes too: the deployment controller copies them to its ReplicaSets.
		onUpdate: func(obj, old runtime.Object) {
			d, oldD := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
			if d.Generation == oldD.Generation && !apiequality.Semantic.DeepEqual(d.Annotations, oldD.Annotations) {
				d.Generation++
			}
		},
		validateStatus: validateDeploymentStatus,
		table:          deploymentTable,
	},
	{
		resource: "statefulsets", singular: "statefulset", shortNames: []string{"sts"}, scale: true,
		validateName: apimachineryvalidation.NameIsDNSLabel, // its pods' hostnames are "<name>-<ordinal>"
		newObj:       func() runtime.Object { return &appsv1.StatefulSet{} },
		newList:      func() runtime.Object { return &appsv1.StatefulSetList{} },
		spec: func(obj runtime.Object) (*int32, *metav1.LabelSelector, *corev1.PodTemplateSpec) {
			ss := obj.(*appsv1.StatefulSet)
			return ss.Spec.Replicas, ss.Spec.Selector, &ss.Spec.Template
		},
		validate: func(obj, old runtime.Object) field.ErrorList {
			oldSS, _ := old.(*appsv1.StatefulSet)
			return validateStatefulSet(obj.(*appsv1.StatefulSet), oldSS)
		},
		validateStatus: validateStatefulSetStatus,
		warnings:       statefulSetWarnings,
		table:          statefulSetTable,
	},
	{
		resource: "daemonsets", singular: "daemonset", shortNames: []string{"ds"},
		newObj:  func() runtime.Object { return &appsv1.DaemonSet{} },
		newList: func() runtime.Object { return &appsv1.DaemonSetList{} },
		spec: func(obj runtime.Object) (*int32, *metav1.LabelSelector, *corev1.PodTemplateSpec) {
			ds := obj.(*appsv1.DaemonSet)
			return nil, ds.Spec.Selector, &ds.Spec.Template
		},
		validate: func(obj, old runtime.Object) field.ErrorList {
			oldDS, _ := old.(*appsv1.DaemonSet)
			return validateDaemonSet(obj.(*appsv1.DaemonSet), oldDS)
		},
		// The template generation upstream keeps in its internal spec, in
		// the annotation its v1 conversion writes: at least 1 on create,
		// the stored one on update, counting a template change.
		onCreate: func(obj runtime.Object) {
			ds := obj.(*appsv1.DaemonSet)
			setTemplateGeneration(ds, max(templateGeneration(ds), 1))
		},
		onUpdate: func(obj, old runtime.Object) {
			ds, oldDS := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
			generation := templateGeneration(oldDS)
			if !apiequality.Semantic.DeepEqual(ds.Spec.Template, oldDS.Spec.Template) {
				generation++
			}
			setTemplateGeneration(ds, generation)
		},
		// Upstream's status update keeps the stored spec, its template generation included.
		onStatusUpdate: func(obj, old runtime.Object) {
			setTemplateGeneration(obj.(*appsv1.DaemonSet), templateGeneration(old.(*appsv1.DaemonSet)))
		},
		validateStatus: validateDaemonSetStatus,
		warnings:       daemonSetWarnings,
		table:          daemonSetTable,
	},
	{
		resource: "replicasets", singular: "replicaset", shortNames: []string{"rs"}, scale: true,
		newObj:  func() runtime.Object { return &appsv1.ReplicaSet{} },
		newList: func() runtime.Object { return &appsv1.ReplicaSetList{} },
		spec: func(obj runtime.Object) (*int32, *metav1.LabelSelector, *corev1.PodTemplateSpec) {
			rs := obj.(*appsv1.ReplicaSet)
			return rs.Spec.Replicas, rs.Spec.Selector, &rs.Spec.Template
		},
		fields: func(obj runtime.Object) fields.Set { return api.ReplicaSetFields(obj.(*appsv1.ReplicaSet)) },
		validate: func(obj, old runtime.Object) field.ErrorList {
			oldRS, _ := old.(*appsv1.ReplicaSet)
			return validateReplicaSet(obj.(*appsv1.ReplicaSet), oldRS)
		},
		validateStatus: validateReplicaSetStatus,
		table:          replicaSetTable,
	},
}

// template returns obj's pod template.
func (w workload) template(obj runtime.Object) *corev1.PodTemplateSpec {
	_, _, template := w.spec(obj)
	return template
}

// NewStorage returns the storage of the four workload types and their
// status (and, but for DaemonSets, scale) subresources.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	storage := map[string]rest.Storage{}
	for _, w := range workloads {
		base := registry.NewStrategy(true)
		base.ValidateName = w.validateName
		base.ValidateFields = func(obj runtime.Object) field.ErrorList { return w.validate(obj, nil) }
		base.ValidateFieldsUpdate = w.validate
		base.OnCreate, base.OnUpdate = w.onCreate, w.onUpdate
		base.Warnings = w.warnings
		if base.Warnings == nil {
			base.Warnings = w.podWarnings
		}
		main, status := registry.SpecAndStatus{GroupVersion: "apps/v1", Generation: true, StatusKeepsLabels: true, Drop: pod.TemplateDropper(w.template)}.Strategies(base)
		status.ValidateFieldsUpdate = w.validateStatus
		if keep, onStatusUpdate := status.OnUpdate, w.onStatusUpdate; onStatusUpdate != nil {
			status.OnUpdate = func(obj, old runtime.Object) {
				keep(obj, old)
				onStatusUpdate(obj, old)
			}
		}
		store, err := registry.NewREST(optsGetter, registry.Resource{
			Resource:   appsv1.Resource(w.resource),
			Singular:   w.singular,
			ShortNames: w.shortNames,
			Categories: []string{"all"},
			New:        w.newObj,
			NewList:    w.newList,
			Strategy:   main,
			Fields:     w.fields,
			Table:      w.table,
		})
		if err != nil {
			return nil, err
		}
		storage[w.resource] = store
		storage[w.resource+"/status"] = registry.NewStatusREST(store, status)
		if w.scale {
			storage[w.resource+"/scale"] = registry.NewScaleREST(store)
		}
	}
	return storage, nil
}

func templateGeneration(ds *appsv1.DaemonSet) int64 {
	generation, _ := strconv.ParseInt(ds.Annotations[appsv1.DeprecatedTemplateGeneration], 10, 64)
	return generation
}

func setTemplateGeneration(ds *appsv1.DaemonSet, generation int64) {
	ds.Annotations = maps.Clone(ds.Annotations)
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(generation, 10)
}

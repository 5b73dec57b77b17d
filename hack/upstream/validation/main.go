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

// Command validation writes what kube-apiserver's validation says of the
// cases in each NAME.yaml of the directories it is given (their objects of
// one kind, the file's kind: Pod unless it says otherwise) to NAME.txt
// there, as registrytest.CompareUpstream expects them (see there). It runs
// k8s.io/kubernetes' own strategies, with its default feature gates, as
// kube-apiserver's generic store runs them: rest.BeforeCreate (the
// strategy's PrepareForCreate, then its validation, declarative
// validation included) for a create, rest.BeforeUpdate for an update, and
// with the status strategy for a status update.
//
//	go run ./validation ../../pkg/registry/pod/testdata/validation ../../pkg/registry/service/testdata/validation
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	"k8s.io/kubernetes/pkg/apis/batch"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/apis/discovery"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	"k8s.io/kubernetes/pkg/apis/networking"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolume"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/podtemplate"
	"k8s.io/kubernetes/pkg/registry/core/replicationcontroller"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/discovery/endpointslice"
	"k8s.io/kubernetes/pkg/registry/networking/ingress"
	"sigs.k8s.io/yaml"
)

// cases is a file's shape.
type cases struct {
	Kind  string
	Base  json.RawMessage
	Cases []struct {
		Verb, Name string
		Old, New   json.RawMessage
	}
}

// A kind is how upstream validates objects of one kind.
type kind struct {
	gv schema.GroupVersion
	// versioned and internal return new objects of the kind.
	versioned, internal func() runtime.Object
	// strategy and status are its strategies, and its status's.
	strategy, status interface {
		rest.RESTCreateStrategy
		rest.RESTUpdateStrategy
	}
}

var kinds = map[string]kind{
	"Pod": {corev1.SchemeGroupVersion, func() runtime.Object { return &corev1.Pod{} }, func() runtime.Object { return &core.Pod{} },
		pod.Strategy, pod.StatusStrategy},
	"Service": {corev1.SchemeGroupVersion, func() runtime.Object { return &corev1.Service{} }, func() runtime.Object { return &core.Service{} },
		service.Strategy, service.StatusStrategy},
	"ReplicationController": {corev1.SchemeGroupVersion, func() runtime.Object { return &corev1.ReplicationController{} }, func() runtime.Object { return &core.ReplicationController{} },
		replicationcontroller.Strategy, replicationcontroller.StatusStrategy},
	"PodTemplate": {corev1.SchemeGroupVersion, func() runtime.Object { return &corev1.PodTemplate{} }, func() runtime.Object { return &core.PodTemplate{} },
		podtemplate.Strategy, podtemplate.Strategy}, // no status
	"Job": {batchv1.SchemeGroupVersion, func() runtime.Object { return &batchv1.Job{} }, func() runtime.Object { return &batch.Job{} },
		job.Strategy, job.StatusStrategy},
	"CronJob": {batchv1.SchemeGroupVersion, func() runtime.Object { return &batchv1.CronJob{} }, func() runtime.Object { return &batch.CronJob{} },
		cronjob.Strategy, cronjob.StatusStrategy},
	"PersistentVolumeClaim": {corev1.SchemeGroupVersion, func() runtime.Object { return &corev1.PersistentVolumeClaim{} }, func() runtime.Object { return &core.PersistentVolumeClaim{} },
		persistentvolumeclaim.Strategy, persistentvolumeclaim.StatusStrategy},
	"PersistentVolume": {corev1.SchemeGroupVersion, func() runtime.Object { return &corev1.PersistentVolume{} }, func() runtime.Object { return &core.PersistentVolume{} },
		persistentvolume.Strategy, persistentvolume.StatusStrategy},
	"Node": {corev1.SchemeGroupVersion, func() runtime.Object { return &corev1.Node{} }, func() runtime.Object { return &core.Node{} },
		node.Strategy, node.StatusStrategy},
	"Ingress": {networkingv1.SchemeGroupVersion, func() runtime.Object { return &networkingv1.Ingress{} }, func() runtime.Object { return &networking.Ingress{} },
		ingress.Strategy, ingress.StatusStrategy},
	"EndpointSlice": {discoveryv1.SchemeGroupVersion, func() runtime.Object { return &discoveryv1.EndpointSlice{} }, func() runtime.Object { return &discovery.EndpointSlice{} },
		endpointslice.Strategy, endpointslice.Strategy}, // no status
	"Deployment": {appsv1.SchemeGroupVersion, func() runtime.Object { return &appsv1.Deployment{} }, func() runtime.Object { return &apps.Deployment{} },
		deployment.Strategy, deployment.StatusStrategy},
	"ReplicaSet": {appsv1.SchemeGroupVersion, func() runtime.Object { return &appsv1.ReplicaSet{} }, func() runtime.Object { return &apps.ReplicaSet{} },
		replicaset.Strategy, replicaset.StatusStrategy},
	"StatefulSet": {appsv1.SchemeGroupVersion, func() runtime.Object { return &appsv1.StatefulSet{} }, func() runtime.Object { return &apps.StatefulSet{} },
		statefulset.Strategy, statefulset.StatusStrategy},
	"DaemonSet": {appsv1.SchemeGroupVersion, func() runtime.Object { return &appsv1.DaemonSet{} }, func() runtime.Object { return &apps.DaemonSet{} },
		daemonset.Strategy, daemonset.StatusStrategy},
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: validation DIR...")
		os.Exit(1)
	}
	var err error
	for _, dir := range os.Args[1:] {
		files, globErr := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err == nil && (globErr != nil || len(files) == 0) {
			err = fmt.Errorf("no .yaml file in %s", dir)
		}
		for _, file := range files {
			if err == nil {
				err = write(file)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "validation:", err)
		os.Exit(1)
	}
}

// write writes upstream's messages for the cases in file to its .txt.
func write(file string) error {
	var out strings.Builder
	if err := run(file, &out); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(strings.TrimSuffix(file, ".yaml")+".txt", []byte(out.String()), 0o644)
}

func run(path string, out *strings.Builder) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f := cases{Kind: "Pod"}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return err
	}
	k, ok := kinds[f.Kind]
	if !ok {
		return fmt.Errorf("kind %q is not one of %v", f.Kind, slices.Sorted(maps.Keys(kinds)))
	}
	for _, c := range f.Cases {
		if c.Verb != "create" && c.Verb != "update" && c.Verb != "status" {
			return fmt.Errorf("%s: verb %q is not create, update or status", c.Name, c.Verb)
		}
		old, err := k.patched(f.Base, c.Old)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		now, err := k.patched(old, c.New)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		o, err := k.toInternal(old)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		n, err := k.toInternal(now)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		info := &genericapirequest.RequestInfo{APIGroup: k.gv.Group, APIVersion: k.gv.Version}
		ctx := genericapirequest.WithNamespace(context.Background(), n.(metav1.Object).GetNamespace())
		var result error
		switch c.Verb {
		case "create":
			result = rest.BeforeCreate(k.strategy, genericapirequest.WithRequestInfo(ctx, info), n)
		case "update":
			result = rest.BeforeUpdate(k.strategy, genericapirequest.WithRequestInfo(ctx, info), n, o)
		case "status":
			info.Subresource = "status"
			result = rest.BeforeUpdate(k.status, genericapirequest.WithRequestInfo(ctx, info), n, o)
		}
		fmt.Fprintf(out, "=== %s %s\n%v\n", c.Verb, c.Name, result)
	}
	return nil
}

// patched is obj with patch applied as a strategic merge patch.
func (k kind) patched(obj, patch json.RawMessage) (json.RawMessage, error) {
	if len(patch) == 0 {
		return obj, nil
	}
	return strategicpatch.StrategicMergePatch(obj, patch, k.versioned())
}

// toInternal is the object, defaulted, as kube-apiserver validates it.
func (k kind) toInternal(data json.RawMessage) (runtime.Object, error) {
	v := k.versioned()
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(v)
	out := k.internal()
	err := legacyscheme.Scheme.Convert(v, out, nil)
	return out, err
}

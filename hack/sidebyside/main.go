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

// Command sidebyside sends the validation cases of the registry packages
// (their testdata/validation/*.yaml, see registrytest.CompareUpstream) through a running server's API, and prints
// what it answers, in the .txt files' format (and its warnings): run it against miniapiserver
// and kube-apiserver (hack/cluster.sh up --upstream) and diff the two to
// compare the whole request path (allocation and admission included), not
// only validation.
//
//	go run ./hack/sidebyside -kubeconfig FILE [-context NAME] DIR...
//
// A case's objects go to the namespace sidebyside (made if missing; nodes and persistent volumes to none). A
// create sends base patched with new; an update and a status update create
// base patched with old, then send new as a strategic merge patch of it
// (its status for status). What a case made is deleted after it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

const namespace = "sidebyside"

// kinds are the kinds cases may hold: their resource and Go type.
var kinds = map[string]struct {
	resource schema.GroupVersionResource
	new      func() runtime.Object
}{
	"Pod":                   {corev1.SchemeGroupVersion.WithResource("pods"), func() runtime.Object { return &corev1.Pod{} }},
	"Service":               {corev1.SchemeGroupVersion.WithResource("services"), func() runtime.Object { return &corev1.Service{} }},
	"ReplicationController": {corev1.SchemeGroupVersion.WithResource("replicationcontrollers"), func() runtime.Object { return &corev1.ReplicationController{} }},
	"PodTemplate":           {corev1.SchemeGroupVersion.WithResource("podtemplates"), func() runtime.Object { return &corev1.PodTemplate{} }},
	"Job":                   {batchv1.SchemeGroupVersion.WithResource("jobs"), func() runtime.Object { return &batchv1.Job{} }},
	"CronJob":               {batchv1.SchemeGroupVersion.WithResource("cronjobs"), func() runtime.Object { return &batchv1.CronJob{} }},
	"PersistentVolume":      {corev1.SchemeGroupVersion.WithResource("persistentvolumes"), func() runtime.Object { return &corev1.PersistentVolume{} }},
	"PersistentVolumeClaim": {corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), func() runtime.Object { return &corev1.PersistentVolumeClaim{} }},
	"Node":                  {corev1.SchemeGroupVersion.WithResource("nodes"), func() runtime.Object { return &corev1.Node{} }},
	"Ingress":               {networkingv1.SchemeGroupVersion.WithResource("ingresses"), func() runtime.Object { return &networkingv1.Ingress{} }},
	"EndpointSlice":         {discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), func() runtime.Object { return &discoveryv1.EndpointSlice{} }},
	"Deployment":            {appsv1.SchemeGroupVersion.WithResource("deployments"), func() runtime.Object { return &appsv1.Deployment{} }},
	"ReplicaSet":            {appsv1.SchemeGroupVersion.WithResource("replicasets"), func() runtime.Object { return &appsv1.ReplicaSet{} }},
	"StatefulSet":           {appsv1.SchemeGroupVersion.WithResource("statefulsets"), func() runtime.Object { return &appsv1.StatefulSet{} }},
	"DaemonSet":             {appsv1.SchemeGroupVersion.WithResource("daemonsets"), func() runtime.Object { return &appsv1.DaemonSet{} }},
}

type cases struct {
	Kind  string
	Base  json.RawMessage
	Cases []struct {
		Verb, Name string
		Old, New   json.RawMessage
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the server's kubeconfig")
	kubecontext := flag.String("context", "", "its context, if not the current one")
	flag.Parse()
	if err := run(*kubeconfig, *kubecontext, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, kubecontext string, dirs []string) error {
	if len(dirs) == 0 {
		return fmt.Errorf("no DIR given")
	}
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: kubecontext}).ClientConfig()
	if err != nil {
		return err
	}
	config.WarningHandler = warnings
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(config)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	dyn := dynamic.NewForConfigOrDie(config)
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return err
		}
		for _, file := range files {
			if err := runFile(ctx, dyn, file); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
		}
	}
	return nil
}

func runFile(ctx context.Context, dyn dynamic.Interface, file string) error {
	data, err := os.ReadFile(file)
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
	var c dynamic.ResourceInterface = dyn.Resource(k.resource).Namespace(namespace)
	clusterScoped := k.resource.Resource == "nodes" || k.resource.Resource == "persistentvolumes"
	if clusterScoped {
		c = dyn.Resource(k.resource)
	}
	fmt.Printf("### %s\n", filepath.Base(file))
	for _, tc := range f.Cases {
		patch := func(obj, p json.RawMessage) (json.RawMessage, error) {
			if len(p) == 0 {
				return obj, nil
			}
			return strategicpatch.StrategicMergePatch(obj, p, k.new())
		}
		first, err := patch(f.Base, tc.Old)
		if err == nil && tc.Verb == "create" {
			first, err = patch(first, tc.New)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", tc.Name, err)
		}
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal(first, &obj.Object); err != nil {
			return fmt.Errorf("%s: %w", tc.Name, err)
		}
		obj.SetAPIVersion(k.resource.GroupVersion().String())
		obj.SetKind(f.Kind)
		if !clusterScoped {
			obj.SetNamespace(namespace)
		}
		obj.SetUID("")
		obj.SetResourceVersion("")
		_, err = c.Create(ctx, obj, metav1.CreateOptions{})
		switch {
		case tc.Verb == "create":
		case err != nil:
			err = fmt.Errorf("the old object: %w", err)
		case tc.Verb == "status":
			_, err = c.Patch(ctx, obj.GetName(), types.StrategicMergePatchType, tc.New, metav1.PatchOptions{}, "status")
		default:
			_, err = c.Patch(ctx, obj.GetName(), types.StrategicMergePatchType, tc.New, metav1.PatchOptions{})
		}
		fmt.Printf("=== %s %s\n%v\n", tc.Verb, tc.Name, err)
		for _, w := range warnings.take() {
			fmt.Printf("warning: %s\n", w)
		}
		if err := deleted(ctx, c, obj.GetName()); err != nil {
			return fmt.Errorf("%s: %w", tc.Name, err)
		}
	}
	return nil
}

// warnings keeps the warnings of the requests until taken.
var warnings = &warningList{}

type warningList struct {
	mu   sync.Mutex
	list []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (l *warningList) HandleWarningHeader(_ int, _ string, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, text)
}

func (l *warningList) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.list
	l.list = nil
	return list
}

// deleted deletes name at once, if there, and waits until it is gone.
func deleted(ctx context.Context, c dynamic.ResourceInterface, name string) error {
	err := c.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		obj, err := c.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		// Finalizers no controller removes here (kube-apiserver's
		// StorageObjectInUseProtection adds pv-protection) would hold it.
		if err == nil && len(obj.GetFinalizers()) > 0 {
			_, _ = c.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s still there after 30s", name)
}

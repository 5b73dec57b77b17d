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

package framework

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// CreateNamespace creates a namespace of its own for the (sub)test.
func CreateNamespace(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// CreateConfigMaps creates n configmaps cm-000 ... in namespace ns and
// returns them as created.
func CreateConfigMaps(t *testing.T, client kubernetes.Interface, ns string, n int) []*corev1.ConfigMap {
	t.Helper()
	created := make([]*corev1.ConfigMap, 0, n)
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}, Data: map[string]string{"i": fmt.Sprint(i)}}
		cm, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, cm)
	}
	return created
}

// CreateCM creates cm in namespace default.
func CreateCM(ctx context.Context, client kubernetes.Interface, cm *corev1.ConfigMap) error {
	_, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	return err
}

// CreateCMNamed creates an empty configmap name in namespace default.
func CreateCMNamed(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	if err := CreateCM(t.Context(), client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// Deployment is a Deployment name of replicas nginx pods labelled app=name.
func Deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

// CreateCMIn creates an empty configmap name, with labels, in namespace ns.
func CreateCMIn(t *testing.T, client kubernetes.Interface, ns, name string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// UpdateCMLabels sets the labels of configmap name in namespace ns.
func UpdateCMLabels(t *testing.T, client kubernetes.Interface, ns, name string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Labels = labels
	if cm, err = client.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return cm
}

// ResourceVersionNow is the resourceVersion of a consistent LIST.
func ResourceVersionNow(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	list, err := client.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.ResourceVersion
}

// ObjectName is obj's name.
func ObjectName(t *testing.T, obj runtime.Object) string {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m.GetName()
}

// ResourceVersionOf is obj's resourceVersion.
func ResourceVersionOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m.GetResourceVersion()
}

// ParseRV parses a resourceVersion.
func ParseRV(t *testing.T, rv string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// DeleteNamespace deletes namespace ns and waits until the namespace
// controller has emptied and removed it. It empties every namespaced
// resource (about 50, a DeleteCollection and a LIST each): under a full
// suite's load that has taken over 30 s, so it waits up to 2 minutes.
func DeleteNamespace(t *testing.T, client kubernetes.Interface, ns string) {
	t.Helper()
	if err := client.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Poll(t, "namespace "+ns+" gone", 2*time.Minute, func() bool {
		_, err := client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

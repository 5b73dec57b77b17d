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

package resources

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

func TestNamespaceLifecycle(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		_, client := framework.Start(t, path)
		ctx := t.Context()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}

		_, err := client.CoreV1().ConfigMaps("missing").Create(ctx, cm, metav1.CreateOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("create in a missing namespace: got %v, want 404 NotFound", err)
		}
		for _, name := range []string{"default", "kube-system", "kube-public"} {
			if err := client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
				t.Errorf("delete %s: got %v, want 403 Forbidden", name, err)
			}
		}
		// As kube-apiserver's, namespaces have no deletecollection (nor
		// has client-go's typed client): a 405, and every namespace stays.
		err = client.CoreV1().RESTClient().Delete().Resource("namespaces").Do(ctx).Error()
		if !apierrors.IsMethodNotSupported(err) {
			t.Errorf("deletecollection of namespaces: got %v, want 405 MethodNotAllowed", err)
		}
		// kube-apiserver creates kube-node-lease too (a namespace like any other).
		if _, err := client.CoreV1().Namespaces().Get(ctx, corev1.NamespaceNodeLease, metav1.GetOptions{}); err != nil {
			t.Errorf("get kube-node-lease: %v", err)
		}

		ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ns.Status.Phase != corev1.NamespaceActive || len(ns.Spec.Finalizers) != 1 || ns.Labels[corev1.LabelMetadataName] != "doomed" {
			t.Errorf("created namespace: got phase %q finalizers %v labels %v", ns.Status.Phase, ns.Spec.Finalizers, ns.Labels)
		}
		framework.CreateConfigMaps(t, client, "doomed", 3)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := client.CoreV1().Pods("doomed").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := client.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// Terminating until emptied: no new content is accepted meanwhile.
		if ns, err := client.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{}); err == nil {
			if ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
				t.Errorf("deleted namespace: got phase %q, deletionTimestamp %v; want Terminating", ns.Status.Phase, ns.DeletionTimestamp)
			}
			_, err := client.CoreV1().ConfigMaps("doomed").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) {
				t.Errorf("create in a terminating namespace: got %v, want 403 Forbidden", err)
			}
		}
		err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Fatalf("namespace not removed: %v", err)
		}
		if list, err := client.CoreV1().ConfigMaps("doomed").List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
			t.Errorf("after removal: got %d configmaps, %v; want none", len(list.Items), err)
		}
	})
}

func TestValidationReturns422WithCauses(t *testing.T) {
	t.Parallel()
	_, client := framework.Start(t)
	ctx := t.Context()
	big := strings.Repeat("x", corev1.MaxSecretSize+1)
	for _, tc := range []struct {
		name   string
		create func() error
		field  string
	}{
		{"configmap name", func() error {
			return framework.CreateCM(ctx, client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Not_Valid"}})
		}, "metadata.name"},
		{"configmap key", func() error {
			return framework.CreateCM(ctx, client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "k"}, Data: map[string]string{"bad key": "v"}})
		}, "data[bad key]"},
		{"configmap size", func() error {
			return framework.CreateCM(ctx, client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string]string{"k": big}})
		}, ""},
		{"label value", func() error {
			return framework.CreateCM(ctx, client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "l", Labels: map[string]string{"a": "-bad-"}}})
		}, "metadata.labels"},
		{"pod without containers", func() error {
			_, err := client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{})
			return err
		}, "spec.containers"},
		{"pod container without image", func() error {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
			_, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
			return err
		}, "spec.containers[0].image"},
		{"namespace name", func() error {
			_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}}, metav1.CreateOptions{})
			return err
		}, "metadata.name"},
		{"lease duration", func() error {
			return createLease(ctx, client, ptr.To[int32](0))
		}, "spec.leaseDurationSeconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.create()
			if !apierrors.IsInvalid(err) {
				t.Fatalf("got %v, want 422 Invalid", err)
			}
			status := err.(apierrors.APIStatus).Status()
			if status.Code != http.StatusUnprocessableEntity || status.Details == nil || len(status.Details.Causes) == 0 {
				t.Fatalf("got %+v, want 422 with causes", status)
			}
			if got := status.Details.Causes[0].Field; tc.field != "" && !strings.HasPrefix(got, tc.field) {
				t.Errorf("got cause field %q, want %q", got, tc.field)
			}
		})
	}
}

func TestImmutableConfigMapAndUpdatesWithoutResourceVersion(t *testing.T) {
	t.Parallel()
	_, client := framework.Start(t)
	ctx := t.Context()
	cms := client.CoreV1().ConfigMaps("default")
	if err := framework.CreateCM(ctx, client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Data: map[string]string{"k": "1"}}); err != nil {
		t.Fatal(err)
	}
	// ConfigMaps accept unconditional updates (no resourceVersion), as upstream.
	if _, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Data: map[string]string{"k": "2"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update without resourceVersion: %v", err)
	}
	frozen := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "frozen"}, Data: map[string]string{"k": "1"}, Immutable: ptr.To(true)}
	if err := framework.CreateCM(ctx, client, frozen); err != nil {
		t.Fatal(err)
	}
	frozen.Data["k"] = "2"
	if _, err := cms.Update(ctx, frozen, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("update of an immutable configmap: got %v, want 422", err)
	}
}

func TestSecretStringDataIsStoredAsData(t *testing.T) {
	t.Parallel()
	_, client := framework.Start(t)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"user": "admin"}, Data: map[string][]byte{"user": []byte("old"), "x": []byte("y")}}
	got, err := client.CoreV1().Secrets("default").Create(t.Context(), sec, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data["user"]) != "admin" || string(got.Data["x"]) != "y" || got.StringData != nil || got.Type != corev1.SecretTypeOpaque {
		t.Errorf("got data %v stringData %v type %q; want stringData merged into data, type Opaque", got.Data, got.StringData, got.Type)
	}
}

func TestPodStatusSubresourceAndFieldSelectors(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		_, client := framework.Start(t, path)
		ctx := t.Context()
		pods := client.CoreV1().Pods("default")
		for _, p := range []struct{ name, node string }{{"a", "node-1"}, {"b", "node-2"}, {"c", ""}} {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name}, Spec: corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning}}
			created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if created.Status.Phase != corev1.PodPending || created.Spec.RestartPolicy != corev1.RestartPolicyAlways || created.Spec.Containers[0].ImagePullPolicy != corev1.PullAlways {
				t.Errorf("created pod: got phase %q restartPolicy %q pullPolicy %q; want Pending (status is not settable on create) and defaults",
					created.Status.Phase, created.Spec.RestartPolicy, created.Spec.Containers[0].ImagePullPolicy)
			}
		}
		a, err := pods.Get(ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a.Status.Phase = corev1.PodRunning
		a.Spec.Containers[0].Image = "ignored-by-status"
		a, err = pods.UpdateStatus(ctx, a, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Status.Phase != corev1.PodRunning || a.Spec.Containers[0].Image != "busybox" {
			t.Errorf("after UpdateStatus: got phase %q image %q; want Running, busybox", a.Status.Phase, a.Spec.Containers[0].Image)
		}
		a.Status.Phase = corev1.PodFailed
		if a, err = pods.Update(ctx, a, metav1.UpdateOptions{}); err != nil || a.Status.Phase != corev1.PodRunning {
			t.Errorf("Update of the main resource: got phase %q, %v; want status unchanged (Running)", a.Status.Phase, err)
		}
		a.Spec.RestartPolicy = corev1.RestartPolicyNever
		if _, err := pods.Update(ctx, a, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("changing an immutable pod field: got %v, want 422", err)
		}

		for _, tc := range []struct{ selector, want string }{
			{"spec.nodeName=node-1", "a"},
			{"spec.nodeName=", "c"},
			{"status.phase=Running", "a"},
			{"status.phase!=Running,metadata.name!=c", "b"},
		} {
			list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: tc.selector})
			if err != nil {
				t.Fatalf("%s: %v", tc.selector, err)
			}
			var names []string
			for _, p := range list.Items {
				names = append(names, p.Name)
			}
			if strings.Join(names, ",") != tc.want {
				t.Errorf("fieldSelector %s: got %v, want %s", tc.selector, names, tc.want)
			}
		}
		_, err = pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.unknown=x"})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "field label not supported") {
			t.Errorf("unsupported field selector: got %v, want 400 field label not supported", err)
		}
		if _, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.unknown=x"}); !apierrors.IsBadRequest(err) {
			t.Errorf("watch with an unsupported field selector: got %v, want 400", err)
		}

		// A watch by spec.nodeName (the cache's index) sees only the pods on that node.
		list, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, FieldSelector: "spec.nodeName=node-1"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		for _, p := range []struct{ name, node string }{{"d", "node-2"}, {"e", "node-1"}} {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name}, Spec: corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
			if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"d", "a"} {
			if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		framework.ExpectEvents(t, w, "ADDED e", "DELETED a")
	})
}

func createLease(ctx context.Context, client kubernetes.Interface, duration *int32) error {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}, Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: duration}}
	_, err := client.CoordinationV1().Leases("default").Create(ctx, l, metav1.CreateOptions{})
	return err
}

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

package cluster

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// TestControlPlane: kube-controller-manager and kube-scheduler hold their
// leader leases and find the authentication info they need, the server
// has logged no error, and it runs none of its own controllers (a
// post-start hook each) where kube-controller-manager runs them.
func TestControlPlane(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	for _, lease := range []string{"kube-controller-manager", "kube-scheduler"} {
		poll(t, "a holder of the lease "+lease, time.Minute, func(ctx context.Context) (bool, error) {
			l, err := c.client.CoordinationV1().Leases("kube-system").Get(ctx, lease, metav1.GetOptions{})
			return err == nil && ptr.Deref(l.Spec.HolderIdentity, "") != "", err
		})
	}
	cm, err := c.client.CoreV1().ConfigMaps("kube-system").Get(t.Context(), "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Data["client-ca-file"], "BEGIN CERTIFICATE") {
		t.Errorf("extension-apiserver-authentication has no client-ca-file: %v", cm.Data)
	}
	// kube-apiserver 1.37 logs this too (k8s.io/streaming's wsstream) when
	// an exec over WebSocket ends, as TestDeployment's does.
	errs := slices.DeleteFunc(c.logLines(t, "kube-apiserver", "E"), func(line string) bool {
		return strings.Contains(line, `"Error on socket receive" err="read tcp`) && strings.HasSuffix(line, `use of closed network connection"`)
	})
	if len(errs) > 0 {
		t.Errorf("the server logged errors:\n%s", strings.Join(errs, "\n"))
	}
	hooks := c.kubectl(t, "get", "--raw", "/readyz?verbose")
	for _, inServer := range []string{"namespace-controller", "namespace-defaults", "clusterrole-aggregation", "garbage-collector", "validatingadmissionpolicy-status", "csrsigning-controller", "resourcequota-controller"} {
		if strings.Contains(hooks, "poststarthook/"+inServer+" ") {
			t.Errorf("the server runs its %s:\n%s", inServer, hooks)
		}
	}
}

// TestNamespaceDefaults: a new namespace gets its default ServiceAccount
// and kube-root-ca.crt from kube-controller-manager, written by it alone.
func TestNamespaceDefaults(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t)
	poll(t, "the default ServiceAccount and kube-root-ca.crt", time.Minute, func(ctx context.Context) (bool, error) {
		sa, err := c.client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cm, err := c.client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, obj := range []metav1.Object{sa, cm} {
			for _, f := range obj.GetManagedFields() {
				if f.Manager != "kube-controller-manager" {
					t.Errorf("%s written by %s, want kube-controller-manager only", obj.GetName(), f.Manager)
				}
			}
		}
		return true, nil
	})
}

// TestGarbageCollection: kube-controller-manager's garbage collector
// deletes a Deployment's ReplicaSets and pods after it, in the background
// and in the foreground (the Deployment kept until they are gone).
func TestGarbageCollection(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
		t.Run(string(policy), func(t *testing.T) {
			ns := c.namespace(t)
			c.kubectl(t, "-n", ns, "create", "deployment", "web", "--image=nginx", "--replicas=2")
			c.kubectl(t, "-n", ns, "rollout", "status", "deployment/web", "--timeout=2m")
			deployments := c.client.AppsV1().Deployments(ns)
			if err := deployments.Delete(t.Context(), "web", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
				t.Fatal(err)
			}
			if policy == metav1.DeletePropagationForeground {
				d, err := deployments.Get(t.Context(), "web", metav1.GetOptions{})
				if err != nil {
					t.Fatalf("the Deployment is gone before its dependents: %v", err)
				}
				if !strings.Contains(strings.Join(d.Finalizers, ","), metav1.FinalizerDeleteDependents) {
					t.Errorf("finalizers %v, want %s", d.Finalizers, metav1.FinalizerDeleteDependents)
				}
			}
			poll(t, "the Deployment, its ReplicaSets and pods gone", 2*time.Minute, func(ctx context.Context) (bool, error) {
				if _, err := deployments.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return false, err
				}
				rs, err := c.client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					return false, err
				}
				pods, err := c.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
				return len(rs.Items) == 0 && len(pods.Items) == 0, err
			})
		})
	}
}

// TestNamespaceDeletion: kube-controller-manager's namespace controller
// empties a deleted namespace and removes it.
func TestNamespaceDeletion(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t)
	c.kubectl(t, "-n", ns, "create", "deployment", "web", "--image=nginx", "--replicas=1")
	c.kubectl(t, "-n", ns, "create", "configmap", "settings", "--from-literal=a=b")
	c.kubectl(t, "delete", "namespace", ns, "--wait=false")
	poll(t, "the namespace gone", 2*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := c.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// TestNodeNotReady: a node nobody heartbeats (not kwok's) goes Unknown
// after kube-controller-manager's grace period, is tainted unreachable,
// and a pod on it that tolerates that for a second is evicted.
func TestNodeNotReady(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "lonely-"},
		// Kept from the other tests' workloads.
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "test", Value: "lonely", Effect: corev1.TaintEffectNoSchedule}}},
	}
	node, err := c.client.CoreV1().Nodes().Create(t.Context(), node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.client.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "stranded"},
		Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Tolerations: []corev1.Toleration{
				{Key: "test", Operator: corev1.TolerationOpExists},
				{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](1)},
			}},
	}
	if _, err := c.client.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the node tainted unreachable", 2*time.Minute, func(ctx context.Context) (bool, error) {
		n, err := c.client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == corev1.TaintNodeUnreachable && taint.Effect == corev1.TaintEffectNoExecute {
				return true, nil
			}
		}
		return false, nil
	})
	poll(t, "the pod evicted", time.Minute, func(ctx context.Context) (bool, error) {
		_, err := c.client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// TestDisruptionBudget: kube-controller-manager's disruption controller
// keeps a PodDisruptionBudget's status, and evictions honour it.
func TestDisruptionBudget(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t)
	c.kubectl(t, "-n", ns, "create", "deployment", "guarded", "--image=nginx", "--replicas=3")
	c.kubectl(t, "-n", ns, "rollout", "status", "deployment/guarded", "--timeout=2m")
	budgets := c.client.PolicyV1().PodDisruptionBudgets(ns)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "guarded"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
	}
	if _, err := budgets.Create(t.Context(), pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allowed := func(want int32) {
		t.Helper()
		poll(t, "the budget's status", time.Minute, func(ctx context.Context) (bool, error) {
			got, err := budgets.Get(ctx, "guarded", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			s := got.Status
			return s.ObservedGeneration == got.Generation && s.CurrentHealthy == 3 && s.ExpectedPods == 3 && s.DisruptionsAllowed == want, nil
		})
	}
	allowed(0)
	pods, err := c.readyPods(t.Context(), t, ns, "app=guarded")
	if err != nil || len(pods) == 0 {
		t.Fatalf("pods: %v, %v", pods, err)
	}
	evict := func() error {
		return c.client.PolicyV1().Evictions(ns).Evict(t.Context(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pods[0].Name, Namespace: ns}})
	}
	if err := evict(); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evicting with no disruption allowed: %v, want 429", err)
	}
	c.kubectl(t, "-n", ns, "patch", "pdb", "guarded", "--type=merge", "-p", `{"spec":{"minAvailable":2}}`)
	allowed(1)
	if err := evict(); err != nil {
		t.Fatalf("evicting with a disruption allowed: %v", err)
	}
}

// TestServiceAccountTokens: a service-account token Secret is filled by
// kube-controller-manager's token controller (signed with the key it
// shares with the server), and the token authenticates as the account.
func TestServiceAccountTokens(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t)
	poll(t, "the default ServiceAccount", time.Minute, func(ctx context.Context) (bool, error) {
		_, err := c.client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "default-token", Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}
	if _, err := c.client.CoreV1().Secrets(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var token string
	poll(t, "the token", time.Minute, func(ctx context.Context) (bool, error) {
		s, err := c.client.CoreV1().Secrets(ns).Get(ctx, "default-token", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		token = string(s.Data[corev1.ServiceAccountTokenKey])
		return token != "", nil
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	anonymous := rest.AnonymousClientConfig(cfg)
	anonymous.BearerToken = token
	client, err := kubernetes.NewForConfig(anonymous)
	if err != nil {
		t.Fatal(err)
	}
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "system:serviceaccount:" + ns + ":default"; review.Status.UserInfo.Username != want {
		t.Errorf("the token authenticates %q, want %q", review.Status.UserInfo.Username, want)
	}
}

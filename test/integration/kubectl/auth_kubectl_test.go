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

package kubectl

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestKubectlAuth: kubectl auth whoami and can-i (with --as and --list)
// answer as on kube-apiserver, through SelfSubjectReview,
// SelfSubjectAccessReview and SelfSubjectRulesReview.
func TestKubectlAuth(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	if got := framework.Kubectl(t, s, "", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); got != "admin" {
		t.Errorf("whoami: got %q, want admin", got)
	}
	if got := framework.Kubectl(t, s, "", "auth", "can-i", "delete", "secrets", "--all-namespaces"); strings.TrimSpace(got) != "yes" {
		t.Errorf("can-i delete secrets as admin: got %q, want yes", got)
	}
	framework.Kubectl(t, s, "", "create", "rolebinding", "bob-view", "--clusterrole=view", "--user=bob", "--namespace=default")
	framework.Poll(t, "bob's binding to take effect", 30*time.Second, func() bool {
		out, _, err := framework.RunKubectl(t, s, "", "auth", "can-i", "list", "configmaps", "--as=bob", "--namespace=default")
		return err == nil && strings.TrimSpace(out) == "yes"
	})
	// "no" exits 1, as kubectl's can-i does.
	out, _, err := framework.RunKubectl(t, s, "", "auth", "can-i", "list", "secrets", "--as=bob", "--namespace=default")
	if err == nil || strings.TrimSpace(out) != "no" {
		t.Errorf("can-i list secrets as bob: got %q, %v; want no and exit 1", out, err)
	}
	list := framework.Kubectl(t, s, "", "auth", "can-i", "--list", "--as=bob", "--namespace=default")
	for _, want := range []string{"configmaps", "selfsubjectaccessreviews.authorization.k8s.io", "[/version]"} {
		if !strings.Contains(list, want) {
			t.Errorf("can-i --list as bob does not show %s:\n%s", want, list)
		}
	}
	if strings.Contains(list, "secrets ") {
		t.Errorf("can-i --list as bob shows secrets, which view does not grant:\n%s", list)
	}
	if got := framework.Kubectl(t, s, "", "auth", "whoami", "--as=bob", "-o", "jsonpath={.status.userInfo.username}"); got != "bob" {
		t.Errorf("whoami --as bob: got %q, want bob", got)
	}
}

// TestKubectlAuthAnswersAsUpstream: kubectl's output, errors and exit
// codes for what a bound user may and may not do (can-i, --list, 403s on
// resources and paths, whoami) are those recorded from kube-apiserver in
// testdata/kubectl-auth-upstream.txt, for the same Roles and bindings.
func TestKubectlAuthAnswersAsUpstream(t *testing.T) {
	t.Parallel()
	recorded, err := os.ReadFile("testdata/kubectl-auth-upstream.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	var commands []string
	for line := range strings.Lines(string(recorded)) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		want.WriteString(line)
		if c, ok := strings.CutPrefix(line, "$ kubectl "); ok {
			commands = append(commands, strings.TrimSuffix(c, "\n"))
		}
	}
	if len(commands) == 0 {
		t.Fatal("no commands in testdata/kubectl-auth-upstream.txt")
	}
	s := testserver.Start(t)
	framework.Kubectl(t, s, "", "create", "role", "reader", "--verb=get,list,watch", "--resource=configmaps", "-n", "default")
	framework.Kubectl(t, s, "", "create", "role", "secret-reader", "--verb=get", "--resource=secrets", "--resource-name=allowed", "-n", "default")
	framework.Kubectl(t, s, "", "create", "rolebinding", "bob-reads", "--role=reader", "--user=bob", "-n", "default")
	framework.Kubectl(t, s, "", "create", "rolebinding", "bob-secret", "--role=secret-reader", "--user=bob", "-n", "default")
	framework.Poll(t, "bob's bindings to take effect", 30*time.Second, func() bool {
		out, _, err := framework.RunKubectl(t, s, "", "auth", "can-i", "get", "secrets/allowed", "--as=bob", "-n", "default")
		return err == nil && strings.TrimSpace(out) == "yes"
	})
	var got strings.Builder
	for _, c := range commands {
		stdout, stderr, err := framework.RunKubectl(t, s, "", strings.Fields(c)...)
		code := 0
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("kubectl %s: %v", c, err)
		}
		fmt.Fprintf(&got, "$ kubectl %s\n%s%s(exit %d)\n", c, stdout, stderr, code)
	}
	if diff := cmp.Diff(want.String(), got.String()); diff != "" {
		t.Errorf("kubectl's answers (-kube-apiserver +ours):\n%s", diff)
	}
}

// TestServiceAccountTokens: a TokenRequest's token authenticates as its
// service account, with what RBAC grants it, in TokenReview too; it stops
// authenticating when the service account is deleted (or the Pod it is
// bound to), and a token for another audience does not authenticate.
func TestServiceAccountTokens(t *testing.T) {
	// Serial: it reads LoggedErrors, which has every running server's klog
	// errors.
	s := testserver.Start(t)
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(s.Config)
	sa, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	framework.Kubectl(t, s, "", "create", "rolebinding", "robot-view", "--clusterrole=view", "--serviceaccount=default:robot", "--namespace=default")
	tokenFor := func(spec authenticationv1.TokenRequestSpec) string {
		t.Helper()
		tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Status.Token == "" || tr.Status.ExpirationTimestamp.Time.Before(time.Now().Add(50*time.Minute)) {
			t.Fatalf("TokenRequest: got token %q expiring %s, want one valid an hour", tr.Status.Token, tr.Status.ExpirationTimestamp)
		}
		return tr.Status.Token
	}
	as := func(token string) kubernetes.Interface {
		cfg := rest.AnonymousClientConfig(s.Config)
		cfg.BearerToken = token
		return kubernetes.NewForConfigOrDie(cfg)
	}
	token := tokenFor(authenticationv1.TokenRequestSpec{})
	robot := as(token)
	framework.Poll(t, "the robot's binding to take effect", 30*time.Second, func() bool {
		_, err := robot.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err == nil
	})
	if _, err := robot.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), `User "system:serviceaccount:default:robot" cannot list resource "secrets"`) {
		t.Errorf("the robot lists secrets: got %v, want 403 naming system:serviceaccount:default:robot", err)
	}
	review, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := review.Status.User; !review.Status.Authenticated || u.Username != "system:serviceaccount:default:robot" || u.UID != string(sa.UID) {
		t.Errorf("TokenReview: got %+v, want the robot authenticated", review.Status)
	}
	sar, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:default:robot", Groups: []string{"system:serviceaccounts"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "configmaps", Namespace: "default"},
	}}, metav1.CreateOptions{})
	if err != nil || !sar.Status.Allowed {
		t.Errorf("SubjectAccessReview for the robot's get configmaps: got %+v, %v; want allowed", sar, err)
	}

	// Bound to a pod: valid while the pod lives.
	pod, err := admin.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{ServiceAccountName: "robot", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podToken := tokenFor(authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web", UID: pod.UID}})
	if _, err := as(podToken).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the pod-bound token: %v", err)
	}
	if err := admin.CoreV1().Pods("default").Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	framework.Poll(t, "the pod to be gone", 30*time.Second, func() bool {
		_, err := admin.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := as(podToken).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("the token of a deleted pod: got %v, want 401", err)
	}

	// Another audience: no entry to the API.
	if _, err := as(tokenFor(authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}})).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("a token for another audience: got %v, want 401", err)
	}
	// Too short a life.
	if _, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](60)}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "may not specify a duration less than 10 minutes") {
		t.Errorf("a 60 s token: got %v, want 422", err)
	}

	// The service account deleted: its tokens stop working.
	if err := admin.CoreV1().ServiceAccounts("default").Delete(ctx, "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := robot.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("the token of a deleted service account: got %v, want 401", err)
	}
	if errs := s.LoggedErrors(); len(errs) > 0 {
		t.Errorf("logged errors: %q", errs)
	}
}

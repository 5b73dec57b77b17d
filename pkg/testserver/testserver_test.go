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

package testserver_test

import (
	"context"
	"net"
	"net/url"
	"os"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

func TestStartServesAndStopReleasesThePort(t *testing.T) {
	s := testserver.Start(t)
	client := kubernetes.NewForConfigOrDie(s.Config)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	u, err := url.Parse(s.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		t.Fatalf("port %s still in use after Stop: %v", u.Host, err)
	}
	l.Close()
}

func TestRestartOnTheSameDataDirKeepsObjects(t *testing.T) {
	s := testserver.Start(t)
	client := kubernetes.NewForConfigOrDie(s.Config)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	s2 := testserver.Start(t, func(o *server.Options) { o.DataDir = s.DataDir })
	client = kubernetes.NewForConfigOrDie(s2.Config)
	if _, err := client.CoreV1().ConfigMaps("default").Get(t.Context(), "kept", metav1.GetOptions{}); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if s2.Config.BearerToken != s.Config.BearerToken {
		t.Errorf("admin token changed across restart")
	}
}

// TestNewNeedsNoTestingTB: New starts a server outside any test (as
// TestMain or a Ginkgo BeforeSuite does); Stop removes the data dir it made.
func TestNewNeedsNoTestingTB(t *testing.T) {
	s, err := testserver.New()
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(s.Config)
	if _, err := client.CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
		t.Errorf("get namespace default: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.DataDir); !os.IsNotExist(err) {
		t.Errorf("data dir %s after Stop: %v, want it removed", s.DataDir, err)
	}
}

// TestLogsBelongToTheirServer: two servers run in parallel; one is sent
// bad tokens, and asked for what is not there. It answers 401 and 404,
// and the other's LoggedErrors stays empty.
func TestLogsBelongToTheirServer(t *testing.T) {
	quiet := testserver.Start(t)
	noisy := testserver.Start(t)
	cfg := rest.CopyConfig(noisy.Config)
	cfg.BearerToken = "not-the-token"
	bad := kubernetes.NewForConfigOrDie(cfg)
	for range 5 {
		_, err := bad.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Fatalf("a bad token: got %v, want 401", err)
		}
	}
	good := kubernetes.NewForConfigOrDie(noisy.Config)
	if _, err := good.CoreV1().ConfigMaps("default").Get(t.Context(), "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a missing object: got %v, want 404", err)
	}
	if errs := quiet.LoggedErrors(); len(errs) > 0 {
		t.Errorf("the quiet server's test got the other's errors: %q", errs)
	}
	if errs := noisy.LoggedErrors(); len(errs) > 0 {
		t.Errorf("bad tokens logged errors: %q; want 401 answered quietly", errs)
	}
}

// TestServiceAccountConfig: the config is the service account's, allowed
// what its binding grants, and refused once the account is deleted.
func TestServiceAccountConfig(t *testing.T) {
	s := testserver.Start(t)
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(s.Config)
	cfg, err := s.ServiceAccountConfig(ctx, "default", "robot")
	if err != nil {
		t.Fatal(err)
	}
	robot := kubernetes.NewForConfigOrDie(cfg)
	review, err := robot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantGroups := []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}
	if got := review.Status.UserInfo; got.Username != "system:serviceaccount:default:robot" || !slices.Equal(got.Groups, wantGroups) {
		t.Errorf("got %s in %v, want system:serviceaccount:default:robot in %v", got.Username, got.Groups, wantGroups)
	}
	if _, err := robot.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("before a binding: got %v, want 403", err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "robot-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "robot", Namespace: "default"}},
	}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the binding to apply", func() bool {
		_, err := robot.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err == nil
	})
	if err := admin.CoreV1().ServiceAccounts("default").Delete(ctx, "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the token to stop working", func() bool {
		_, err := robot.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return apierrors.IsUnauthorized(err)
	})
}

// poll waits up to 30 s for cond.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

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

package rbac

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestControllerMetricsAreAuthorized runs a controller-runtime manager whose
// metrics endpoint is protected as kubebuilder scaffolds it
// (filters.WithAuthenticationAndAuthorization: a TokenReview, then a
// SubjectAccessReview for GET /metrics): a service account bound to a role
// allowing it scrapes, another gets 403, no token 401.
func TestControllerMetricsAreAuthorized(t *testing.T) {
	s := testserver.Start(t)
	admin := kubernetes.NewForConfigOrDie(s.Config)
	ctx := t.Context()
	for _, sa := range []string{"scraper", "stranger"} {
		if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "scraper"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := func(sa string) string {
		tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	mgr, err := ctrl.NewManager(s.Config, ctrl.Options{Metrics: metricsserver.Options{
		BindAddress: addr, SecureServing: true, FilterProvider: filters.WithAuthenticationAndAuthorization, CertDir: t.TempDir(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	mgrCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	// The manager's certificate is its own self-signed one.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(ctx context.Context, bearer string) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
		if err != nil {
			return 0, err
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	scraper := token("scraper")
	var code int
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		code, err = get(ctx, scraper)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return false, nil // the metrics server is starting
		}
		return true, err
	})
	if err != nil || code != http.StatusOK {
		t.Fatalf("the bound service account: %d, %v; want 200", code, err)
	}
	for _, tc := range []struct {
		who    string
		bearer string
		want   int
	}{
		{"an unbound service account", token("stranger"), http.StatusForbidden},
		{"no token", "", http.StatusUnauthorized},
	} {
		if code, err := get(ctx, tc.bearer); err != nil || code != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.who, code, err, tc.want)
		}
	}
}

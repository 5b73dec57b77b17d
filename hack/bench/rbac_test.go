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

package bench

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

var rbacBindings = flag.Int("rbac-bindings", 1000, "RoleBindings (one of them driver.User's) in BenchmarkRBAC's namespace")

// rbacListed is how many ConfigMaps BenchmarkRBAC lists.
const rbacListed = 10

// BenchmarkRBAC times, one request at a time, a LIST of rbacListed
// ConfigMaps and a ConfigMap create, as the admin (system:masters, which
// RBAC never sees) and as the bound user driver.User (a token of a token
// file), whose RoleBinding, to a Role that may list and create ConfigMaps,
// is one of -rbac-bindings in the namespace.
func BenchmarkRBAC(b *testing.B) {
	clients := map[driver.Kind]map[string]kubernetes.Interface{}
	for _, kind := range kinds() {
		var args []string
		if kind == driver.Mini {
			args = []string{"--token-auth-file=" + env.UserTokenFile} // kube-apiserver's token file has the user
		}
		s := start(b, kind, b.TempDir(), args...)
		user, err := bindUser(b.Context(), s)
		if err != nil {
			b.Fatal(err)
		}
		clients[kind] = map[string]kubernetes.Interface{"admin": s.Client(), "bound-user": user}
	}
	for _, op := range []string{"list", "create"} {
		for _, who := range []string{"admin", "bound-user"} {
			b.Run("op="+op+"-as-the-"+who, func(b *testing.B) {
				onEach(b, func(b *testing.B, kind driver.Kind) {
					c := clients[kind][who]
					loop(b, func(i int) error {
						if op == "create" {
							return createConfigMap(b.Context(), c, fmt.Sprintf("%s-%05d", who, i), map[string]string{"created": "true"}, false)
						}
						// The label keeps out what the creates add.
						l, err := c.CoreV1().ConfigMaps(driver.Namespace).List(b.Context(), metav1.ListOptions{LabelSelector: "!created"})
						if err == nil && len(l.Items) != rbacListed {
							err = fmt.Errorf("listed %d ConfigMaps, want %d", len(l.Items), rbacListed)
						}
						return err
					})
				})
			})
		}
	}
}

// bindUser creates the Role, the -rbac-bindings RoleBindings (driver.User's
// in the middle) and the rbacListed ConfigMaps, and returns the user's
// client once the user may create ConfigMaps.
func bindUser(ctx context.Context, s *driver.Server) (kubernetes.Interface, error) {
	admin := s.Client()
	// A Role of its own: kube-apiserver's edit ClusterRole has rules only
	// once kube-controller-manager has aggregated them.
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "configmaps"},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch", "create"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}},
	}
	if _, err := admin.RbacV1().Roles(driver.Namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	err := driver.ForEach(ctx, *rbacBindings, workers, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("user-%d", i)
		if i == *rbacBindings/2 {
			name = driver.User
		}
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
		}
		_, err := admin.RbacV1().RoleBindings(driver.Namespace).Create(ctx, rb, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	for i := range rbacListed {
		if err := createConfigMap(ctx, admin, fmt.Sprintf("listed-%d", i), nil, false); err != nil {
			return nil, err
		}
	}
	rc := rest.AnonymousClientConfig(s.RESTConfig())
	rc.BearerToken = env.UserToken
	user, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return createConfigMap(ctx, user, "probe", nil, true) == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for %s's binding: %w", driver.User, err)
	}
	return user, nil
}

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
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// forEachStoragePath runs test on the watch cache and on the etcd path.
func forEachStoragePath(t *testing.T, test func(t *testing.T, path func(*server.Options))) {
	for _, watchCache := range []bool{true, false} {
		name := "watch-cache"
		if !watchCache {
			name = "etcd"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, func(o *server.Options) { o.WatchCache = watchCache })
		})
	}
}

// request is one call a user makes, and the error it gets.
type request struct {
	name    string
	do      func(ctx context.Context, c kubernetes.Interface) error
	wantErr string // "" allowed; else the exact message of the 403
}

func listConfigMaps(ns string) func(context.Context, kubernetes.Interface) error {
	return func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		return err
	}
}

func listSecrets(ns string) func(context.Context, kubernetes.Interface) error {
	return func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		return err
	}
}

func getSecret(ns, name string) func(context.Context, kubernetes.Interface) error {
	return func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	}
}

// check makes each request as client and compares what it gets.
func check(t *testing.T, client kubernetes.Interface, requests []request) {
	t.Helper()
	for _, r := range requests {
		err := r.do(t.Context(), client)
		switch {
		case r.wantErr == "" && err != nil:
			t.Errorf("%s: got %v, want it allowed", r.name, err)
		case r.wantErr != "" && !apierrors.IsForbidden(err):
			t.Errorf("%s: got %v, want 403 %q", r.name, err, r.wantErr)
		case r.wantErr != "" && err.Error() != r.wantErr:
			t.Errorf("%s: got 403 %q, want %q", r.name, err.Error(), r.wantErr)
		}
	}
}

// eventually polls until the request is allowed: RBAC objects take effect
// once the authorizer's informers have them, as upstream's.
func eventually(t *testing.T, client kubernetes.Interface, do func(context.Context, kubernetes.Interface) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		last = do(ctx, client)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("never allowed: %v", last)
	}
}

// TestBoundUserCanDoWhatItsBindingAllows: a user by client certificate
// can do what the Role bound to it allows (verbs, resources, names, its
// namespace) and nothing else; the 403s carry upstream's messages; paging
// and watch-list answer it as they answer the admin.
func TestBoundUserCanDoWhatItsBindingAllows(t *testing.T) {
	forEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		s := testserver.Start(t, path)
		ctx := t.Context()
		admin := kubernetes.NewForConfigOrDie(s.Config)
		for _, name := range []string{"allowed", "other"} {
			if _, err := admin.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"allowed"}, Verbs: []string{"get"}},
		}}
		if _, err := admin.RbacV1().Roles("default").Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bob-reads"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "bob"}}}
		if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cfg, err := s.AddUser("bob")
		if err != nil {
			t.Fatal(err)
		}
		bob := kubernetes.NewForConfigOrDie(cfg)
		eventually(t, bob, listConfigMaps("default"))
		check(t, bob, []request{
			{name: "list configmaps in default", do: listConfigMaps("default")},
			{name: "get the secret named in the rule", do: getSecret("default", "allowed")},
			{name: "get another secret", do: getSecret("default", "other"),
				wantErr: `secrets "other" is forbidden: User "bob" cannot get resource "secrets" in API group "" in the namespace "default"`},
			{name: "list secrets", do: listSecrets("default"),
				wantErr: `secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "default"`},
			{name: "list configmaps in kube-system", do: listConfigMaps("kube-system"),
				wantErr: `configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "kube-system"`},
			{name: "create a configmap", do: func(ctx context.Context, c kubernetes.Interface) error {
				_, err := c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
				return err
			}, wantErr: `configmaps is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "default"`},
			{name: "list namespaces", do: func(ctx context.Context, c kubernetes.Interface) error {
				_, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
				return err
			}, wantErr: `namespaces is forbidden: User "bob" cannot list resource "namespaces" in API group "" at the cluster scope`},
			{name: "discovery (system:discovery, bound to every authenticated user)", do: func(_ context.Context, c kubernetes.Interface) error {
				_, err := c.Discovery().ServerGroups()
				return err
			}},
		})

		// A watch where the binding allows it works; elsewhere it is 403.
		w, err := bob.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("watch configmaps in default: %v", err)
		}
		w.Stop()
		if _, err := bob.CoreV1().ConfigMaps("kube-system").Watch(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("watch configmaps in kube-system: got %v, want 403", err)
		}

		// Paging and watch-list answer bob as they answer the admin.
		for i := range 3 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("page-%d", i)}}
			if _, err := admin.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := pagedNames(t, bob), pagedNames(t, admin); !slices.Equal(got, want) || len(want) < 3 {
			t.Errorf("paged by 2: bob got %v, the admin %v", got, want)
		}
		if got, want := watchListEvents(t, bob), watchListEvents(t, admin); !slices.Equal(got, want) || len(want) < 4 {
			t.Errorf("watch-list: bob got %v, the admin %v", got, want)
		}

		// The admin impersonating bob gets bob's answers.
		as := rest.CopyConfig(s.Config)
		as.Impersonate = rest.ImpersonationConfig{UserName: "bob"}
		check(t, kubernetes.NewForConfigOrDie(as), []request{
			{name: "impersonated: list configmaps", do: listConfigMaps("default")},
			{name: "impersonated: list secrets", do: listSecrets("default"),
				wantErr: `secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "default"`},
		})
		// bob may not impersonate.
		bobAs := rest.CopyConfig(cfg)
		bobAs.Impersonate = rest.ImpersonationConfig{UserName: "admin"}
		if _, err := kubernetes.NewForConfigOrDie(bobAs).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("bob impersonating: got %v, want 403", err)
		}
	})
}

// pagedNames lists default's ConfigMaps two at a time, and returns their
// names and how many pages it took.
func pagedNames(t *testing.T, c kubernetes.Interface) []string {
	t.Helper()
	var names []string
	opts := metav1.ListOptions{Limit: 2}
	for page := 1; ; page++ {
		l, err := c.CoreV1().ConfigMaps("default").List(t.Context(), opts)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		for _, cm := range l.Items {
			names = append(names, cm.Name)
		}
		if opts.Continue = l.Continue; opts.Continue == "" {
			return append(names, fmt.Sprintf("(%d pages)", page))
		}
	}
}

// watchListEvents streams default's ConfigMaps by watch-list (client-go's
// informers' way) and returns each event's type and name until the
// bookmark that ends the initial events.
func watchListEvents(t *testing.T, c kubernetes.Interface) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	w, err := c.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{
		SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
	})
	if err != nil {
		t.Fatalf("watch-list: %v", err)
	}
	defer w.Stop()
	var events []string
	for e := range w.ResultChan() {
		cm, ok := e.Object.(*corev1.ConfigMap)
		if !ok {
			t.Fatalf("watch-list: got %s %T", e.Type, e.Object)
		}
		if e.Type == watch.Bookmark {
			if cm.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
				return append(events, "BOOKMARK initial-events-end")
			}
			continue
		}
		events = append(events, string(e.Type)+" "+cm.Name)
	}
	t.Fatalf("watch-list ended after %v, before its initial-events-end bookmark", events)
	return nil
}

// TestGroupsAggregationAndMasters: a group bound to the default ClusterRole
// view can read what view aggregates, a ClusterRole labelled
// aggregate-to-view included, and not secrets; system:masters can do
// anything.
func TestGroupsAggregationAndMasters(t *testing.T) {
	s := testserver.Start(t)
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(s.Config)
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "devs-view"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "devs"}}}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.AddUser("alice", "devs")
	if err != nil {
		t.Fatal(err)
	}
	alice := kubernetes.NewForConfigOrDie(cfg)
	eventually(t, alice, listConfigMaps("kube-system"))
	check(t, alice, []request{
		{name: "view: list configmaps anywhere", do: listConfigMaps("default")},
		{name: "view: not secrets", do: listSecrets("default"),
			wantErr: `secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default"`},
	})

	// A ClusterRole labelled aggregate-to-view joins view.
	extra := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "secrets-viewer", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}}}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, extra, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, alice, listSecrets("default"))

	root, err := s.AddUser("root", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	check(t, kubernetes.NewForConfigOrDie(root), []request{
		{name: "system:masters: list namespaces", do: func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			return err
		}},
	})
}

// TestDefaultRolesAreUpstreams: the default ClusterRoles and bindings exist
// with upstream's labels, and a user's change to one is kept across a
// restart while what is missing is restored.
func TestDefaultRolesAreUpstreams(t *testing.T) {
	s := testserver.Start(t)
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(s.Config)
	for _, name := range []string{"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user", "system:public-info-viewer", "system:auth-delegator"} {
		r, err := admin.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("ClusterRole %s: %v", name, err)
			continue
		}
		if r.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" || r.Annotations["rbac.authorization.kubernetes.io/autoupdate"] != "true" {
			t.Errorf("ClusterRole %s: labels %v, annotations %v, want upstream's", name, r.Labels, r.Annotations)
		}
	}
	b, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, "cluster-admin", metav1.GetOptions{})
	if err != nil || len(b.Subjects) != 1 || b.Subjects[0].Name != "system:masters" {
		t.Errorf("ClusterRoleBinding cluster-admin: got %v, %v; want it to bind system:masters", b, err)
	}

	// A subject added to a default binding stays; a deleted role comes back.
	b.Subjects = append(b.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "ops"})
	if _, err := admin.RbacV1().ClusterRoleBindings().Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := admin.RbacV1().ClusterRoles().Delete(ctx, "system:basic-user", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	s2 := testserver.Start(t, func(o *server.Options) { o.DataDir = s.DataDir })
	admin = kubernetes.NewForConfigOrDie(s2.Config)
	if _, err := admin.RbacV1().ClusterRoles().Get(ctx, "system:basic-user", metav1.GetOptions{}); err != nil {
		t.Errorf("the deleted default role after a restart: %v", err)
	}
	b, err = admin.RbacV1().ClusterRoleBindings().Get(ctx, "cluster-admin", metav1.GetOptions{})
	if err != nil || len(b.Subjects) != 2 {
		t.Errorf("cluster-admin's binding after a restart: got %v, %v; want the added subject kept", b, err)
	}
}

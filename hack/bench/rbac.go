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

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// rbacResult is the rbac section: LIST and create latencies of the admin
// (system:masters, which RBAC never sees) and of a user whose RoleBinding
// is one of cfg.rbacBindings in its namespace, on miniapiserver and, with
// -upstream, on kube-apiserver.
type rbacResult struct {
	ours     rbacRun
	upstream *rbacRun
}

// rbacRun is one server's latencies, in order, per rbacOps entry.
type rbacRun [][]time.Duration

// rbacOps name a run's operations, in the order each round does them.
var rbacOps = []string{"LIST as the admin", "LIST as the bound user", "create as the admin", "create as the bound user"}

// The bound user of the rbac section: a bearer token of a token file, on
// both servers (kube-apiserver's from upstreamPKI).
const (
	rbacUser       = "bench-user"
	rbacListed     = 10 // ConfigMaps in the namespace the section LISTs
	rbacTokensFile = "tokens.csv"
)

// benchRBAC times the operations on miniapiserver, then on kube-apiserver
// (with ub), each on a fresh data dir.
func benchRBAC(ctx context.Context, cfg config, root string, ub *upstreamBench) (res rbacResult, err error) {
	token := "bench-user-token"
	if ub != nil {
		token = ub.pki.userToken
	}
	tokens := filepath.Join(root, rbacTokensFile)
	if err := os.WriteFile(tokens, []byte(token+","+rbacUser+","+rbacUser+"\n"), 0o600); err != nil {
		return rbacResult{}, err
	}
	res.ours, err = onOurs(ctx, withArgs(cfg, "--token-auth-file="+tokens), root, "rbac", func(s *server) (rbacRun, error) { return rbacOnce(ctx, cfg, s, token) })
	if err != nil {
		return rbacResult{}, err
	}
	progressRBAC("miniapiserver", res.ours)
	if ub == nil {
		return res, nil
	}
	up, err := onUpstream(ctx, ub, "rbac", func(s *server) (rbacRun, error) { return rbacOnce(ctx, cfg, s, token) })
	if err != nil {
		return rbacResult{}, err
	}
	progressRBAC("kube-apiserver", up)
	res.upstream = &up
	return res, nil
}

func progressRBAC(name string, r rbacRun) {
	progress("rbac (%s): medians %s and %s for LISTs, %s and %s for creates (admin, then bound user)", name,
		fmtDuration(median(r[0])), fmtDuration(median(r[1])), fmtDuration(median(r[2])), fmtDuration(median(r[3])))
}

// rbacOnce binds cfg.rbacBindings users (rbacUser among them) to a Role
// that may list and create ConfigMaps in the namespace, creates rbacListed ConfigMaps, waits until
// the user may create, then times cfg.rbacRounds rounds of rbacOps (after
// a tenth as many untimed), each round doing each operation once.
func rbacOnce(ctx context.Context, cfg config, s *server, token string) (rbacRun, error) {
	rc, err := s.restConfig()
	if err != nil {
		return nil, err
	}
	admin, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	urc := rest.AnonymousClientConfig(rc)
	urc.BearerToken = token
	user, err := kubernetes.NewForConfig(urc)
	if err != nil {
		return nil, err
	}
	// A Role of its own: kube-apiserver's edit ClusterRole has rules only
	// once kube-controller-manager has aggregated them.
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "configmaps"},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch", "create"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}},
	}
	if _, err := admin.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	for i := range cfg.rbacBindings {
		name := fmt.Sprintf("user-%d", i)
		if i == cfg.rbacBindings/2 {
			name = rbacUser
		}
		b := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
		}
		if _, err := admin.RbacV1().RoleBindings(namespace).Create(ctx, b, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("creating RoleBinding %s: %w", name, err)
		}
	}
	for i := range rbacListed {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("listed-%d", i)}, Data: map[string]string{"k": "v"}}
		if _, err := admin.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := user.CoreV1().ConfigMaps(namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil, nil
	}); err != nil {
		return nil, fmt.Errorf("waiting for %s's binding: %w", rbacUser, err)
	}
	ops := []func(context.Context, int) error{
		func(ctx context.Context, _ int) error { return rbacList(ctx, admin) },
		func(ctx context.Context, _ int) error { return rbacList(ctx, user) },
		func(ctx context.Context, i int) error { return rbacCreate(ctx, admin, fmt.Sprintf("admin-%05d", i)) },
		func(ctx context.Context, i int) error { return rbacCreate(ctx, user, fmt.Sprintf("user-%05d", i)) },
	}
	warmup := cfg.rbacRounds / 10
	run := make(rbacRun, len(rbacOps))
	for i := range warmup + cfg.rbacRounds {
		for o, op := range ops {
			began := time.Now()
			if err := op(ctx, i); err != nil {
				return nil, fmt.Errorf("%s: %w", rbacOps[o], err)
			}
			if i >= warmup {
				run[o] = append(run[o], time.Since(began))
			}
		}
	}
	return run, nil
}

// rbacList LISTs the rbacListed ConfigMaps (the label keeps out what the
// creates add).
func rbacList(ctx context.Context, client kubernetes.Interface) error {
	l, err := client.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{LabelSelector: "!created"})
	if err == nil && len(l.Items) != rbacListed {
		err = fmt.Errorf("listed %d ConfigMaps, want %d", len(l.Items), rbacListed)
	}
	return err
}

func rbacCreate(ctx context.Context, client kubernetes.Interface, name string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"created": "true"}}, Data: map[string]string{"k": "v"}}
	_, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{})
	return err
}

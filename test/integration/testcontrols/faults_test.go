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

package testcontrols

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// copyReconciler keeps, for each ConfigMap "x" without a "copy-of" label,
// a ConfigMap "x-copy" with the same data.
type copyReconciler struct {
	client.Client
}

func (r *copyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var src corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &src); err != nil || src.Labels["copy-of"] != "" {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var cp corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: src.Namespace, Name: src.Name + "-copy"}, &cp)
	switch {
	case apierrors.IsNotFound(err):
		cp = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name + "-copy", Labels: map[string]string{"copy-of": src.Name}}, Data: src.Data}
		return ctrl.Result{}, r.Create(ctx, &cp)
	case err != nil:
		return ctrl.Result{}, err
	case maps.Equal(cp.Data, src.Data):
		return ctrl.Result{}, nil
	}
	cp.Data = src.Data
	return ctrl.Result{}, r.Update(ctx, &cp)
}

// controllerUser is who the reconciler runs as (with the admin's rights).
const controllerUser = "system:serviceaccount:default:copier"

// TestFaultReconcilerConverges runs a controller-runtime reconciler whose
// creates get injected 500s and whose updates get injected 409s: it
// converges, its retries counted in the rules' hits, while the test's own
// writes to the same resource are never hit.
func TestFaultReconcilerConverges(t *testing.T) {
	t.Parallel()
	s, admin := framework.Start(t)
	ctx := t.Context()
	ns := framework.CreateNamespace(t, admin)
	scoped := v1alpha1.FaultMatch{Resources: []string{"configmaps"}, Namespaces: []string{ns}, Users: []string{controllerUser}}
	serverErrors := inject(t, s, "creates-fail", v1alpha1.FaultRuleSpec{Match: withVerbs(scoped, "create"), Count: 2, Error: &v1alpha1.FaultError{Code: 500}})
	conflicts := inject(t, s, "updates-conflict", v1alpha1.FaultRuleSpec{Match: withVerbs(scoped, "update"), Count: 3, Error: &v1alpha1.FaultError{Code: 409}})
	startReconciler(t, s, ns)

	framework.CreateCMIn(t, admin, ns, "src", nil)
	waitForCopy(t, admin, ns, nil)
	for i, v := range []string{"a", "b", "c", "d"} {
		cm, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, "src", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data = map[string]string{"v": v}
		if _, err := admin.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update %d by the test's own client (not the rules' user): %v", i, err)
		}
		waitForCopy(t, admin, ns, cm.Data)
	}
	if got := hits(t, s, serverErrors); got != 2 {
		t.Errorf("rule %s hit %d creates, want its count 2 (the reconciler retried past them)", serverErrors, got)
	}
	if got := hits(t, s, conflicts); got != 3 {
		t.Errorf("rule %s hit %d updates, want its count 3 (the reconciler retried past them)", conflicts, got)
	}
}

func startReconciler(t *testing.T, s *testserver.Server, ns string) {
	cfg := rest.CopyConfig(s.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: controllerUser, Groups: []string{"system:masters", "system:authenticated"}}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     scheme.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(&copyReconciler{Client: mgr.GetClient()}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(t.Context()) {
		t.Fatal("the manager's caches did not sync")
	}
}

func waitForCopy(t *testing.T, c kubernetes.Interface, ns string, data map[string]string) {
	t.Helper()
	framework.WaitUntil(t, func() bool {
		cp, err := c.CoreV1().ConfigMaps(ns).Get(t.Context(), "src-copy", metav1.GetOptions{})
		return err == nil && maps.Equal(cp.Data, data)
	}, "the reconciler to copy the ConfigMap")
}

// TestFaultScopedToUser: a rule for one user, and one for a group, hit
// only requests of that user or group; the rules' hits count them.
func TestFaultScopedToUser(t *testing.T) {
	t.Parallel()
	s, admin := framework.Start(t)
	ctx := t.Context()
	framework.CreateCMIn(t, admin, "default", "target", nil)
	get := v1alpha1.FaultMatch{Verbs: []string{"get"}, Resources: []string{"configmaps"}, Names: []string{"target"}}
	byUser := get
	byUser.Users = []string{"alice"}
	byGroup := get
	byGroup.Groups = []string{"team-b"}
	alice := inject(t, s, "alice", v1alpha1.FaultRuleSpec{Match: byUser, Error: &v1alpha1.FaultError{Code: 503}})
	teamB := inject(t, s, "team-b", v1alpha1.FaultRuleSpec{Match: byGroup, Error: &v1alpha1.FaultError{Code: 403, Message: "team b may not"}})

	as := func(user string, groups ...string) error {
		cfg := rest.CopyConfig(s.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:masters")}
		_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").Get(ctx, "target", metav1.GetOptions{})
		return err
	}
	if err := as("alice"); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("alice's GET answered %v, want 503 ServiceUnavailable", err)
	}
	if err := as("bob", "team-b"); !apierrors.IsForbidden(err) || err.Error() != `configmaps "target" is forbidden: team b may not` {
		t.Errorf("bob (team-b)'s GET answered %v, want 403 with the rule's message", err)
	}
	if err := as("carol", "team-c"); err != nil {
		t.Errorf("carol's GET, whom no rule names: %v", err)
	}
	if _, err := admin.CoreV1().ConfigMaps("default").Get(ctx, "target", metav1.GetOptions{}); err != nil {
		t.Errorf("the admin's GET, whom no rule names: %v", err)
	}
	if got := hits(t, s, alice); got != 1 {
		t.Errorf("rule %s hit %d requests, want 1", alice, got)
	}
	if got := hits(t, s, teamB); got != 1 {
		t.Errorf("rule %s hit %d requests, want 1", teamB, got)
	}
}

// TestFaultLatency: a delay before the write holds the request that long;
// a delay after it holds the answer while the object is already stored.
func TestFaultLatency(t *testing.T) {
	t.Parallel()
	s, admin := framework.Start(t)
	ctx := t.Context()
	const delay = 400 * time.Millisecond
	match := v1alpha1.FaultMatch{Verbs: []string{"create"}, Resources: []string{"configmaps"}, Namespaces: []string{"default"}}
	remove, err := s.InjectFault(v1alpha1.FaultRule{ObjectMeta: metav1.ObjectMeta{Name: "before"},
		Spec: v1alpha1.FaultRuleSpec{Match: match, Count: 1, Delay: &v1alpha1.FaultDelay{Before: metav1.Duration{Duration: delay}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	start := time.Now()
	framework.CreateCMIn(t, admin, "default", "held-before", nil)
	if took := time.Since(start); took < delay {
		t.Errorf("create with a %s delay before took %s", delay, took)
	}

	// Long enough that the test reads the stored object before the answer
	// even on a loaded machine.
	const after = 10 * time.Second
	inject(t, s, "after", v1alpha1.FaultRuleSpec{Match: match, Count: 1, Delay: &v1alpha1.FaultDelay{After: metav1.Duration{Duration: after}}})
	created := make(chan time.Time, 1)
	start = time.Now()
	go func() {
		_, err := admin.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held-after"}}, metav1.CreateOptions{})
		if err != nil {
			t.Error(err)
		}
		created <- time.Now()
	}()
	framework.WaitUntil(t, func() bool {
		_, err := admin.CoreV1().ConfigMaps("default").Get(ctx, "held-after", metav1.GetOptions{})
		return err == nil
	}, "the held create to be stored")
	select {
	case <-created:
		t.Error("the create with a delay after it answered before the test read what it stored")
	default:
	}
	if took := (<-created).Sub(start); took < after {
		t.Errorf("create with a %s delay after took %s", after, took)
	}
}

// TestFaultDropConnection: the request a rule drops fails with no status;
// the next, past the rule's count, is served.
func TestFaultDropConnection(t *testing.T) {
	t.Parallel()
	s, admin := framework.Start(t)
	rule := inject(t, s, "drop", v1alpha1.FaultRuleSpec{Match: v1alpha1.FaultMatch{Verbs: []string{"list"}, Resources: []string{"secrets"}},
		Count: 1, DropConnection: true})
	_, err := admin.CoreV1().Secrets("default").List(t.Context(), metav1.ListOptions{})
	if err == nil {
		t.Fatal("a dropped LIST answered, want an error")
	}
	if _, isStatus := err.(apierrors.APIStatus); isStatus {
		t.Errorf("a dropped LIST answered status %v, want a connection error", err)
	}
	if _, err := admin.CoreV1().Secrets("default").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Errorf("the LIST after the rule's count: %v", err)
	}
	if got := hits(t, s, rule); got != 1 {
		t.Errorf("rule %s hit %d requests, want 1", rule, got)
	}
}

// TestFaultWatchCacheLag: with a lag, a read from the watch cache
// (resourceVersion 0) misses a new object until the lag has passed.
func TestFaultWatchCacheLag(t *testing.T) {
	t.Parallel()
	s, admin := framework.Start(t)
	ctx := t.Context()
	const lag = 5 * time.Second // the read right after the create comes well within it, even on a loaded machine
	rule := inject(t, s, "lag", v1alpha1.FaultRuleSpec{Match: v1alpha1.FaultMatch{Resources: []string{"configmaps"}},
		WatchCacheLag: &metav1.Duration{Duration: lag}})
	start := time.Now()
	framework.CreateCMIn(t, admin, "default", "late", nil)
	cached := func() bool {
		_, err := admin.CoreV1().ConfigMaps("default").Get(ctx, "late", metav1.GetOptions{ResourceVersion: "0"})
		return err == nil
	}
	if cached() {
		t.Fatalf("the watch cache served a new ConfigMap at once, want it %s behind etcd", lag)
	}
	framework.WaitUntil(t, cached, "the lagging watch cache to serve the ConfigMap")
	if took := time.Since(start); took < lag {
		t.Errorf("the watch cache served the ConfigMap after %s, want no sooner than its lag %s", took, lag)
	}
	if got := hits(t, s, rule); got < 1 {
		t.Errorf("rule %s hit %d events, want at least the ConfigMap's", rule, got)
	}
}

// inject makes a rule named name, removed when the test ends.
func inject(t *testing.T, s *testserver.Server, name string, spec v1alpha1.FaultRuleSpec) string {
	t.Helper()
	remove, err := s.InjectFault(v1alpha1.FaultRule{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	if err != nil {
		t.Fatalf("injecting %s: %v", name, err)
	}
	t.Cleanup(remove)
	return name
}

func hits(t *testing.T, s *testserver.Server, name string) int64 {
	t.Helper()
	rule, err := s.FaultRule(name)
	if err != nil {
		t.Fatal(err)
	}
	return rule.Status.Hits
}

func withVerbs(m v1alpha1.FaultMatch, verbs ...string) v1alpha1.FaultMatch {
	m.Verbs = verbs
	return m
}

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
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	flowcontrolbootstrap "k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestPriorityAndFairness: the server makes kube-apiserver's bootstrap
// FlowSchemas and PriorityLevelConfigurations; a FlowSchema of the test's
// sends a user's requests to a priority level that rejects what it cannot
// run at once, and the user's second request while one is held (by a
// delay fault) gets upstream's 429; the FlowSchema's status says its
// priority level is found. Without priority and fairness (the negative
// control), the same second request is served, with no X-Kubernetes-PF-*
// headers.
func TestPriorityAndFairness(t *testing.T) {
	for _, apf := range []bool{true, false} {
		name := "on"
		if !apf {
			name = "off"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := testserver.Start(t, func(o *server.Options) { o.PriorityAndFairness = apf; o.TestControls = true })
			admin := kubernetes.NewForConfigOrDie(s.Config)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if apf {
				checkBootstrapConfiguration(ctx, t, admin)
			}
			fs := rejectUser(ctx, t, admin, "alice")
			if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-view"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			alice, err := s.AddUser("alice")
			if err != nil {
				t.Fatal(err)
			}
			get := getAs(t, alice)
			// Until alice's binding reaches the authorizer (else her held
			// request is refused before the storage) and, with priority
			// and fairness, the server classifies her requests by the FlowSchema.
			if err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
				resp, _ := get(ctx, "/api/v1/namespaces/default/configmaps")
				return resp.StatusCode == http.StatusOK && (!apf || resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID) == string(fs.UID)), nil
			}); err != nil {
				t.Fatalf("alice's requests are never served (and classified by FlowSchema %s): %v", fs.Name, err)
			}
			// A request of alice's held in the storage for a minute, once.
			remove, err := s.InjectFault(v1alpha1.FaultRule{ObjectMeta: metav1.ObjectMeta{Name: "hold"}, Spec: v1alpha1.FaultRuleSpec{
				Match: v1alpha1.FaultMatch{Resources: []string{"configmaps"}, Users: []string{"alice"}}, Count: 1,
				Delay: &v1alpha1.FaultDelay{Before: metav1.Duration{Duration: time.Minute}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer remove()
			heldCtx, release := context.WithCancel(ctx)
			held := make(chan struct{})
			go func() {
				defer close(held)
				_, _ = get(heldCtx, "/api/v1/namespaces/default/configmaps/held")
			}()
			defer func() { release(); <-held }()
			if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
				rule, err := s.FaultRule("hold")
				return err == nil && rule.Status.Hits == 1, nil
			}); err != nil {
				t.Fatalf("alice's first request never held: %v", err)
			}

			resp, body := get(ctx, "/api/v1/namespaces/default/configmaps")
			var pfHeaders []string
			for k := range resp.Header {
				if strings.HasPrefix(k, "X-Kubernetes-Pf-") {
					pfHeaders = append(pfHeaders, k)
				}
			}
			if !apf {
				if resp.StatusCode != http.StatusOK || len(pfHeaders) != 0 {
					t.Fatalf("without priority and fairness, alice's second request: %d %v, want 200 with no X-Kubernetes-PF-* headers", resp.StatusCode, pfHeaders)
				}
				return
			}
			if resp.StatusCode != http.StatusTooManyRequests || body != "Too many requests, please try again later.\n" {
				t.Errorf("alice's second request while one is held: %d %q, want upstream's 429", resp.StatusCode, body)
			}
			if got := resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID); got != string(fs.UID) {
				t.Errorf("%s: %q, want the FlowSchema's UID %s", flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, got, fs.UID)
			}
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("the 429 has no Retry-After header")
			}
			checkFound(ctx, t, admin, fs.Name)
			dump, err := admin.Discovery().RESTClient().Get().AbsPath("/debug/api_priority_and_fairness/dump_priority_levels").DoRaw(ctx)
			if err != nil || !strings.Contains(string(dump), "reject-alice") {
				t.Errorf("dump_priority_levels: %v, want a line of priority level reject-alice:\n%s", err, dump)
			}
		})
	}
}

// checkBootstrapConfiguration checks that the bootstrap FlowSchemas and
// priority levels exist, marked for the server to keep up to date.
func checkBootstrapConfiguration(ctx context.Context, t *testing.T, admin kubernetes.Interface) {
	t.Helper()
	schemas, err := admin.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	levels, err := admin.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, fs := range schemas.Items {
		got = append(got, "FlowSchema "+fs.Name+" "+fs.Annotations[flowcontrolv1.AutoUpdateAnnotationKey])
	}
	for _, pl := range levels.Items {
		got = append(got, "PriorityLevelConfiguration "+pl.Name+" "+pl.Annotations[flowcontrolv1.AutoUpdateAnnotationKey])
	}
	for _, fs := range slices.Concat(flowcontrolbootstrap.MandatoryFlowSchemas, flowcontrolbootstrap.SuggestedFlowSchemas) {
		want = append(want, "FlowSchema "+fs.Name+" true")
	}
	for _, pl := range slices.Concat(flowcontrolbootstrap.MandatoryPriorityLevelConfigurations, flowcontrolbootstrap.SuggestedPriorityLevelConfigurations) {
		want = append(want, "PriorityLevelConfiguration "+pl.Name+" true")
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("bootstrap configuration (kind, name, autoupdate-spec):\n got %q\nwant %q", got, want)
	}
}

// rejectUser makes a priority level with no seats of its own that rejects
// what waits, and a FlowSchema sending user's requests to it.
func rejectUser(ctx context.Context, t *testing.T, admin kubernetes.Interface, user string) *flowcontrolv1.FlowSchema {
	t.Helper()
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "reject-" + user}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](0), LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
			LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
	if _, err := admin.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, pl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: user}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl.Name}, MatchingPrecedence: 100,
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
				Namespaces: []string{"*"}, ClusterScope: true}},
		}}}}
	fs, err := admin.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// checkFound waits for the server to write FlowSchema name's Dangling
// condition: False, its priority level found.
func checkFound(ctx context.Context, t *testing.T, admin kubernetes.Interface, name string) {
	t.Helper()
	var last []flowcontrolv1.FlowSchemaCondition
	if err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		fs, err := admin.FlowcontrolV1().FlowSchemas().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = fs.Status.Conditions
		return len(last) == 1 && last[0].Type == flowcontrolv1.FlowSchemaConditionDangling && last[0].Status == flowcontrolv1.ConditionFalse &&
			last[0].Reason == "Found", nil
	}); err != nil {
		t.Errorf("FlowSchema %s's conditions: %+v, want Dangling False (Found): %v", name, last, err)
	}
}

// getAs returns a GET of a path as the user of cfg, with its response and body.
func getAs(t *testing.T, cfg *rest.Config) func(ctx context.Context, path string) (*http.Response, string) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, path string) (*http.Response, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+path, nil)
		if err != nil {
			t.Error(err)
			return &http.Response{Header: http.Header{}}, ""
		}
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				t.Error(err)
			}
			return &http.Response{Header: http.Header{}}, ""
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
}

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
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/authentication/user"
	apistorage "k8s.io/apiserver/pkg/storage"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

func errorRule(name string, m v1alpha1.FaultMatch) *v1alpha1.FaultRule {
	return &v1alpha1.FaultRule{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.FaultRuleSpec{Match: m, Error: &v1alpha1.FaultError{Code: 500}}}
}

// TestFaultRuleInvalid: each malformed rule, or one that can match
// nothing, is refused with 422 naming its field; a valid one is made.
func TestFaultRuleInvalid(t *testing.T) {
	pods := v1alpha1.FaultMatch{Resources: []string{"pods"}}
	for _, tc := range []struct {
		name  string
		edit  func(*v1alpha1.FaultRule)
		field string
	}{
		{"no resources", func(r *v1alpha1.FaultRule) { r.Spec.Match.Resources = nil }, "spec.match.resources"},
		{"malformed resource", func(r *v1alpha1.FaultRule) { r.Spec.Match.Resources = []string{"pods/a/b"} }, "spec.match.resources[0]"},
		{"the test controls", func(r *v1alpha1.FaultRule) {
			r.Spec.Match.Resources = []string{"faultrules.testcontrol.miniapiserver.io"}
		}, "spec.match.resources[0]"},
		{"unknown verb", func(r *v1alpha1.FaultRule) { r.Spec.Match.Verbs = []string{"get", "fetch"} }, "spec.match.verbs[1]"},
		{"negative count", func(r *v1alpha1.FaultRule) { r.Spec.Count = -1 }, "spec.count"},
		{"probability above 1", func(r *v1alpha1.FaultRule) { r.Spec.Probability = ptr.To(1.5) }, "spec.probability"},
		{"probability below 0", func(r *v1alpha1.FaultRule) { r.Spec.Probability = ptr.To(-0.1) }, "spec.probability"},
		{"status below 400", func(r *v1alpha1.FaultRule) { r.Spec.Error.Code = 302 }, "spec.error.code"},
		{"status above 599", func(r *v1alpha1.FaultRule) { r.Spec.Error.Code = 600 }, "spec.error.code"},
		{"no action", func(r *v1alpha1.FaultRule) { r.Spec.Error = nil }, "spec"},
		{"two actions", func(r *v1alpha1.FaultRule) { r.Spec.DropConnection = true }, "spec"},
		{"no delay", func(r *v1alpha1.FaultRule) { r.Spec.Error, r.Spec.Delay = nil, &v1alpha1.FaultDelay{} }, "spec.delay"},
		{"ending watches, no watch", func(r *v1alpha1.FaultRule) {
			r.Spec.Error, r.Spec.EndWatch, r.Spec.Match.Verbs = nil, &v1alpha1.FaultEndWatch{}, []string{"create"}
		}, "spec.match.verbs"},
		{"a lag for a user", func(r *v1alpha1.FaultRule) {
			r.Spec.Error, r.Spec.WatchCacheLag, r.Spec.Match.Users = nil, &metav1.Duration{Duration: time.Second}, []string{"u"}
		}, "spec.match"},
		{"a lag for a subresource", func(r *v1alpha1.FaultRule) {
			r.Spec.Error, r.Spec.WatchCacheLag, r.Spec.Match.Resources = nil, &metav1.Duration{Duration: time.Second}, []string{"pods/status"}
		}, "spec.match.resources[0]"},
		{"bad name", func(r *v1alpha1.FaultRule) { r.Name = "Not_A_Name" }, "metadata.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFaults(nil)
			r := errorRule("r", pods)
			tc.edit(r)
			_, err := f.Inject(r)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("got %v, want 422 Invalid", err)
			}
			if causes := err.(apierrors.APIStatus).Status().Details.Causes; len(causes) == 0 || causes[0].Field != tc.field {
				t.Errorf("got causes %+v, want one for %s", causes, tc.field)
			}
			if rules := f.list(); len(rules) != 0 {
				t.Errorf("a refused rule was kept: %v", rules)
			}
		})
	}
	f := NewFaults(nil)
	if _, err := f.Inject(errorRule("r", pods)); err != nil {
		t.Fatalf("a valid rule: %v", err)
	}
	if _, err := f.Inject(errorRule("r", pods)); !apierrors.IsAlreadyExists(err) {
		t.Errorf("a second rule r: got %v, want AlreadyExists", err)
	}
	if err := f.Remove("unknown"); !apierrors.IsNotFound(err) {
		t.Errorf("removing an unknown rule: got %v, want NotFound", err)
	}
}

// TestFaultMatch: what each FaultMatch field matches.
func TestFaultMatch(t *testing.T) {
	pod := attributes{verb: "get", resource: "pods", namespace: "ns", name: "p", user: &user.DefaultInfo{Name: "alice", Groups: []string{"dev"}}}
	podStatus := pod
	podStatus.subresource = "status"
	scale := attributes{verb: "update", group: "apps", resource: "deployments", subresource: "scale", namespace: "ns", name: "d"}
	anonymous := pod
	anonymous.user = nil
	for _, tc := range []struct {
		match v1alpha1.FaultMatch
		a     attributes
		want  bool
	}{
		{v1alpha1.FaultMatch{Resources: []string{"pods"}}, pod, true},
		{v1alpha1.FaultMatch{Resources: []string{"pods"}}, podStatus, false},
		{v1alpha1.FaultMatch{Resources: []string{"pods/status"}}, podStatus, true},
		{v1alpha1.FaultMatch{Resources: []string{"pods/*"}}, podStatus, true},
		{v1alpha1.FaultMatch{Resources: []string{"pods/*"}}, pod, false},
		{v1alpha1.FaultMatch{Resources: []string{"*"}}, scale, true},
		{v1alpha1.FaultMatch{Resources: []string{"*/scale"}}, scale, true},
		{v1alpha1.FaultMatch{Resources: []string{"deployments.apps/scale"}}, scale, true},
		{v1alpha1.FaultMatch{Resources: []string{"deployments/scale"}}, scale, false}, // the core group
		{v1alpha1.FaultMatch{Resources: []string{"pods"}, Verbs: []string{"list", "get"}}, pod, true},
		{v1alpha1.FaultMatch{Resources: []string{"pods"}, Verbs: []string{"*"}}, pod, true},
		{v1alpha1.FaultMatch{Resources: []string{"pods"}, Verbs: []string{"list"}}, pod, false},
		{v1alpha1.FaultMatch{Resources: []string{"pods"}, Namespaces: []string{"other"}}, pod, false},
		{v1alpha1.FaultMatch{Resources: []string{"pods"}, Names: []string{"p"}}, pod, true},
		{v1alpha1.FaultMatch{Resources: []string{"pods"}, Users: []string{"bob"}}, pod, false},
		{v1alpha1.FaultMatch{Resources: []string{"pods"}, Users: []string{"bob"}, Groups: []string{"dev"}}, pod, true},
		{v1alpha1.FaultMatch{Resources: []string{"pods"}, Groups: []string{"dev"}}, anonymous, false},
	} {
		m, err := newMatcher(tc.match)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.matches(tc.a); got != tc.want {
			t.Errorf("%+v matches %+v: %v, want %v", tc.match, tc.a, got, tc.want)
		}
	}
}

// TestFaultStatus: each code answers as upstream's errors of that code do.
func TestFaultStatus(t *testing.T) {
	a := attributes{verb: "update", resource: "configmaps", name: "c"}
	for _, tc := range []struct {
		code       int32
		reason     metav1.StatusReason
		message    string
		retryAfter int32
	}{
		{409, metav1.StatusReasonConflict, `Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again`, 0},
		{429, metav1.StatusReasonTooManyRequests, "Too many requests, please try again later.", 3},
		{500, metav1.StatusReasonInternalError, "Internal error occurred: injected fault", 0},
		{503, metav1.StatusReasonServiceUnavailable, "the server is currently unable to handle the request", 2},
		{504, metav1.StatusReasonTimeout, "Timeout: request did not complete within requested timeout - context deadline exceeded", 0},
		{410, metav1.StatusReasonExpired, "The resourceVersion for the provided list is too old.", 0},
		{418, metav1.StatusReasonUnknown, "the server responded with the status code 418 but did not return more information (update configmaps c)", 0},
	} {
		err := statusError(&v1alpha1.FaultError{Code: tc.code, RetryAfterSeconds: tc.retryAfter}, a)
		s := err.ErrStatus
		if s.Code != tc.code || s.Reason != tc.reason || s.Message != tc.message {
			t.Errorf("code %d: got %d %s %q, want %s %q", tc.code, s.Code, s.Reason, s.Message, tc.reason, tc.message)
		}
		if got, _ := apierrors.SuggestsClientDelay(err); int32(got) != tc.retryAfter {
			t.Errorf("code %d: retry after %d, want %d", tc.code, got, tc.retryAfter)
		}
	}
}

// TestFaultCountAndProbability: a rule hits no more than its count, and
// only requests its probability draws.
func TestFaultCountAndProbability(t *testing.T) {
	f := NewFaults(nil)
	draws := []float64{0.1, 0.9, 0.2, 0.3, 0.0}
	f.chance = func() float64 { d := draws[0]; draws = draws[1:]; return d }
	r := errorRule("half", v1alpha1.FaultMatch{Resources: []string{"pods"}})
	r.Spec.Probability, r.Spec.Count = ptr.To(0.5), 2
	if _, err := f.Inject(r); err != nil {
		t.Fatal(err)
	}
	a := attributes{verb: "get", resource: "pods"}
	var hit []bool
	for range 5 {
		hit = append(hit, len(f.hit(a)) == 1)
	}
	if want := []bool{true, false, true, false, false}; !slices.Equal(hit, want) {
		t.Errorf("hits %v, want %v (drawn below 0.5, until the count of 2)", hit, want)
	}
	if got, _ := f.Rule("half"); got.Status.Hits != 2 {
		t.Errorf("status.hits %d, want 2", got.Status.Hits)
	}
}

// TestFaultLag: a lagging watch passes an event on its lag after it came,
// and at once when the rule is deleted.
func TestFaultLag(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	f := NewFaults(clock)
	if _, err := f.Inject(&v1alpha1.FaultRule{ObjectMeta: metav1.ObjectMeta{Name: "lag"}, Spec: v1alpha1.FaultRuleSpec{
		Match: v1alpha1.FaultMatch{Resources: []string{"configmaps"}}, WatchCacheLag: &metav1.Duration{Duration: time.Second}}}); err != nil {
		t.Fatal(err)
	}
	source := watch.NewFake()
	s := f.Followed(schema.GroupResource{Resource: "configmaps"}, fakeWatchStorage{w: source})
	w, err := s.Watch(context.Background(), "/", apistorage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	source.Add(&metav1.Status{Message: "first"})
	waitForTimer(t, clock)
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("got %v before its lag", ev.Object)
	default:
	}
	clock.Step(time.Second)
	expectMessage(t, w, "first")

	source.Add(&metav1.Status{Message: "second"})
	waitForTimer(t, clock)
	if err := f.Remove("lag"); err != nil {
		t.Fatal(err)
	}
	expectMessage(t, w, "second") // the clock has not moved
	if got := f.list(); len(got) != 0 {
		t.Errorf("rules after Remove: %v", got)
	}
}

// waitForTimer waits until the lagging watch waits on the clock.
func waitForTimer(t *testing.T, clock *clocktesting.FakeClock) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return clock.HasWaiters(), nil
	})
	if err != nil {
		t.Fatal("the lagging watch never waited for its event's lag")
	}
}

func expectMessage(t *testing.T, w watch.Interface, want string) {
	t.Helper()
	select {
	case ev := <-w.ResultChan():
		if got := ev.Object.(*metav1.Status).Message; got != want {
			t.Fatalf("got event %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no event, want %q", want)
	}
}

type fakeWatchStorage struct {
	apistorage.Interface
	w *watch.FakeWatcher
}

func (s fakeWatchStorage) Watch(context.Context, string, apistorage.ListOptions) (watch.Interface, error) {
	return s.w, nil
}

// TestFaultFirstErrorEndsRequest: a rule made after one that answers the
// request with an error neither acts nor counts a hit; one made before
// does both.
func TestFaultFirstErrorEndsRequest(t *testing.T) {
	f := NewFaults(nil)
	pods := v1alpha1.FaultMatch{Resources: []string{"pods"}}
	delay := func(name string) *v1alpha1.FaultRule {
		return &v1alpha1.FaultRule{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.FaultRuleSpec{Match: pods,
			Delay: &v1alpha1.FaultDelay{Before: metav1.Duration{Duration: time.Second}}}}
	}
	for _, r := range []*v1alpha1.FaultRule{delay("before"), errorRule("error", pods), delay("after")} {
		if _, err := f.Inject(r); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, r := range f.hit(attributes{verb: "get", resource: "pods"}) {
		names = append(names, r.obj.Name)
	}
	if want := []string{"before", "error"}; !slices.Equal(names, want) {
		t.Errorf("rules hit %v, want %v", names, want)
	}
	if after, _ := f.Rule("after"); after.Status.Hits != 0 {
		t.Errorf("the rule after the error counted %d hits, want 0", after.Status.Hits)
	}
}

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

package componentstatus

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// check is a Server that answers with its fields.
type check struct {
	result  Result
	message string
	err     error
}

func (c check) DoServerCheck(context.Context) (Result, string, error) {
	return c.result, c.message, c.err
}

func newREST() *REST {
	return NewStorage(map[string]Server{
		"etcd-0":             check{result: Success, message: "ok"},
		"scheduler":          check{result: Failure, message: "HTTP probe failed with statuscode: 500"},
		"controller-manager": check{result: Unknown, err: errors.New("failed to construct probe request")},
		"etcd-1":             check{result: Warning, message: "Probe terminated redirects, Response body: "},
	})["componentstatuses"].(*REST)
}

func healthy(status corev1.ConditionStatus, message, err string) []corev1.ComponentCondition {
	return []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: status, Message: message, Error: err}}
}

func names(list *corev1.ComponentStatusList) []string {
	out := []string{}
	for _, s := range list.Items {
		out = append(out, s.Name)
	}
	return out
}

func TestREST(t *testing.T) {
	r := newREST()
	if r.NamespaceScoped() || r.GetSingularName() != "componentstatus" || !cmp.Equal(r.ShortNames(), []string{"cs"}) {
		t.Errorf("shape: got namespaced %t, singular %q, short names %v; want cluster-scoped, componentstatus, [cs]", r.NamespaceScoped(), r.GetSingularName(), r.ShortNames())
	}
}

// TestList: every server's status, by name, the probe's result as the
// Healthy condition's status (True, False, else Unknown).
func TestList(t *testing.T) {
	obj, err := newREST().List(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.ComponentStatusList{Items: []corev1.ComponentStatus{
		{ObjectMeta: metav1.ObjectMeta{Name: "controller-manager"}, Conditions: healthy(corev1.ConditionUnknown, "", "failed to construct probe request")},
		{ObjectMeta: metav1.ObjectMeta{Name: "etcd-0"}, Conditions: healthy(corev1.ConditionTrue, "ok", "")},
		{ObjectMeta: metav1.ObjectMeta{Name: "etcd-1"}, Conditions: healthy(corev1.ConditionUnknown, "Probe terminated redirects, Response body: ", "")},
		{ObjectMeta: metav1.ObjectMeta{Name: "scheduler"}, Conditions: healthy(corev1.ConditionFalse, "HTTP probe failed with statuscode: 500", "")},
	}}
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
}

// TestListSelectors: selectors see the metadata only, as upstream's (a
// status has no labels: any label selector but everything matches none).
func TestListSelectors(t *testing.T) {
	tests := []struct {
		name string
		opts *metainternalversion.ListOptions
		want []string
	}{
		{name: "by name", opts: &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "etcd-0")}, want: []string{"etcd-0"}},
		{name: "not by name", opts: &metainternalversion.ListOptions{FieldSelector: fields.OneTermNotEqualSelector("metadata.name", "etcd-0")},
			want: []string{"controller-manager", "etcd-1", "scheduler"}},
		{name: "no namespace", opts: &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.namespace", "")},
			want: []string{"controller-manager", "etcd-0", "etcd-1", "scheduler"}},
		{name: "a label", opts: &metainternalversion.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"a": "b"})}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := newREST().List(t.Context(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(obj.(*corev1.ComponentStatusList))); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}

// barrier is a Server that succeeds once all of its group have been asked.
type barrier struct{ wg *sync.WaitGroup }

func (b barrier) DoServerCheck(ctx context.Context) (Result, string, error) {
	b.wg.Done()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
		return Success, "ok", nil
	case <-ctx.Done():
		return Failure, "", ctx.Err()
	}
}

// TestListProbesAtOnce: each probe may take upstream's 20s; a list asks
// every server at once, not one after the other.
func TestListProbesAtOnce(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(3)
	r := NewStorage(map[string]Server{"a": barrier{&wg}, "b": barrier{&wg}, "c": barrier{&wg}})["componentstatuses"].(*REST)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	obj, err := r.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range obj.(*corev1.ComponentStatusList).Items {
		if s.Conditions[0].Status != corev1.ConditionTrue {
			t.Errorf("%s: got %+v, want Healthy (the probes ran one after the other)", s.Name, s.Conditions[0])
		}
	}
}

func TestGet(t *testing.T) {
	r := newREST()
	obj, err := r.Get(t.Context(), "etcd-0", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "etcd-0"}, Conditions: healthy(corev1.ConditionTrue, "ok", "")}
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}
	// kube-apiserver 1.37.2's message.
	if _, err := r.Get(t.Context(), "etcd-9", &metav1.GetOptions{}); err == nil || err.Error() != `componentstatus "etcd-9" not found` {
		t.Errorf("get of etcd-9: got %v, want componentstatus \"etcd-9\" not found", err)
	}
}

// TestTable: upstream's columns, NAME, STATUS, MESSAGE and ERROR.
func TestTable(t *testing.T) {
	status := func(conditions ...corev1.ComponentCondition) *corev1.ComponentStatus {
		return &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "etcd-0"}, Conditions: conditions}
	}
	registrytest.CheckTable(t, newREST(), []string{"Name", "Status", "Message", "Error"},
		registrytest.Row{Name: "healthy", Obj: status(healthy(corev1.ConditionTrue, "ok", "")...), Want: []any{"etcd-0", "Healthy", "ok", ""}},
		registrytest.Row{Name: "unhealthy", Obj: status(healthy(corev1.ConditionFalse, "refused", "")...), Want: []any{"etcd-0", "Unhealthy", "refused", ""}},
		registrytest.Row{Name: "unknown", Obj: status(healthy(corev1.ConditionUnknown, "", "broken")...), Want: []any{"etcd-0", "Unhealthy", "", "broken"}},
		registrytest.Row{Name: "no condition", Obj: status(), Want: []any{"etcd-0", "Unknown", "", ""}},
		registrytest.Row{Name: "another condition", Obj: status(corev1.ComponentCondition{Type: "Other", Status: corev1.ConditionTrue, Message: "m"}),
			Want: []any{"etcd-0", "Unknown", "", ""}},
	)
}

// TestListOfServers: upstream's components probed at once, with what the
// race detector sees of their clients (whether anything listens on their
// ports here or not).
func TestListOfServers(t *testing.T) {
	r := NewStorage(Servers("kube-probe/1.37"))["componentstatuses"].(*REST)
	for range 2 {
		obj, err := r.List(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		list := obj.(*corev1.ComponentStatusList)
		if diff := cmp.Diff([]string{"controller-manager", "scheduler"}, names(list)); diff != "" {
			t.Errorf("names (-want +got):\n%s", diff)
		}
		for _, s := range list.Items {
			if c := s.Conditions[0]; c.Status == corev1.ConditionUnknown {
				t.Errorf("%s: got %+v, want True or False", s.Name, c)
			}
		}
	}
}

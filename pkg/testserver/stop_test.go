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
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestStopAnswersRequestsInFlight: a request in flight when the server
// stops (held here by a fault rule) is answered, and its object stored,
// before the server closes its connection. Its connection was last
// written long before: it once counted as quiet, and was closed under the
// answer (about 1 run in 6).
func TestStopAnswersRequestsInFlight(t *testing.T) {
	for run := range 6 {
		s := testserver.Start(t)
		if _, err := s.InjectFault(v1alpha1.FaultRule{ObjectMeta: metav1.ObjectMeta{Name: "hold"}, Spec: v1alpha1.FaultRuleSpec{
			Match: v1alpha1.FaultMatch{Verbs: []string{"create"}, Resources: []string{"configmaps"}},
			Delay: &v1alpha1.FaultDelay{Before: metav1.Duration{Duration: 300 * time.Millisecond}},
		}}); err != nil {
			t.Fatal(err)
		}
		client := kubernetes.NewForConfigOrDie(s.Config)
		answered := make(chan error, 1)
		go func() {
			_, err := client.CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held"}}, metav1.CreateOptions{})
			answered <- err
		}()
		// The create is held once the rule has hit it.
		err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			rule, err := s.FaultRule("hold")
			return err == nil && rule.Status.Hits == 1, nil
		})
		if err != nil {
			t.Fatal("the create never reached the server")
		}
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := <-answered; err != nil {
			t.Errorf("run %d: the create in flight at the stop: %v, want it answered", run, err)
		}
		if errs := s.LoggedErrors(); len(errs) > 0 {
			t.Errorf("run %d: logged errors: %q", run, errs)
		}
	}
}

// TestStopIsQuiet: a server stopped while its own controllers are busy
// (giving namespaces just made their defaults) logs no error: the
// requests they have in flight run to their end.
func TestStopIsQuiet(t *testing.T) {
	for run := range 4 {
		s := testserver.Start(t, testserver.WithNamespaceDefaults())
		client := kubernetes.NewForConfigOrDie(s.Config)
		for i := range 20 {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("busy-", i)}}
			if _, err := client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		if errs := s.LoggedErrors(); len(errs) > 0 {
			t.Errorf("run %d: logged errors: %q", run, errs)
		}
	}
}

// TestStopWaitsForFlowSchemaStatus: a server stopped while priority and
// fairness is still writing FlowSchemas' status (made slow here: each
// write is held) lets it finish, and logs no error. With the wait bounded
// at 2 s, its later writes found the server gone (a make test under load).
func TestStopWaitsForFlowSchemaStatus(t *testing.T) {
	s := testserver.Start(t)
	const schemas = 12
	var names []string
	for i := range schemas {
		names = append(names, fmt.Sprint("slow-", i))
	}
	if _, err := s.InjectFault(v1alpha1.FaultRule{ObjectMeta: metav1.ObjectMeta{Name: "slow-status"}, Spec: v1alpha1.FaultRuleSpec{
		Match: v1alpha1.FaultMatch{Verbs: []string{"patch"}, Resources: []string{"flowschemas.flowcontrol.apiserver.k8s.io/status"}, Names: names},
		Delay: &v1alpha1.FaultDelay{Before: metav1.Duration{Duration: 250 * time.Millisecond}},
	}}); err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(s.Config)
	for _, name := range names {
		fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"},
			MatchingPrecedence:         5000,
		}}
		if _, err := client.FlowcontrolV1().FlowSchemas().Create(t.Context(), fs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if errs := s.LoggedErrors(); len(errs) > 0 {
		t.Errorf("logged errors: %q", errs)
	}
	// The stop waited for the writes: all were made.
	rule, err := s.FaultRule("slow-status")
	if err != nil {
		t.Fatal(err)
	}
	if rule.Status.Hits < schemas {
		t.Errorf("%d status writes before the stop, want %d", rule.Status.Hits, schemas)
	}
}

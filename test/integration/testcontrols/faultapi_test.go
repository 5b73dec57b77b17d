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
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestFaultRulesWithKubectl makes, updates, reads and deletes a fault rule
// with the real kubectl, as a suite in any language would; its hits show
// in its status and in /metrics.
func TestFaultRulesWithKubectl(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	manifest := func(code string) string {
		return `apiVersion: testcontrol.miniapiserver.io/v1alpha1
kind: FaultRule
metadata:
  name: throttled
spec:
  match: {verbs: [get], resources: [configmaps], names: [target]}
  count: 1
  error: {code: ` + code + `, retryAfterSeconds: 1}
`
	}
	framework.CreateCMIn(t, client, "default", "target", nil)
	framework.Kubectl(t, s, manifest("503"), "apply", "-f", "-")
	framework.Kubectl(t, s, manifest("429"), "apply", "-f", "-") // an update
	// client-go retries a 429 with Retry-After: the GET succeeds, once hit.
	if _, err := client.CoreV1().ConfigMaps("default").Get(t.Context(), "target", metav1.GetOptions{}); err != nil {
		t.Fatalf("GET retried past the 429: %v", err)
	}
	if out := framework.Kubectl(t, s, "", "get", "faultrule", "throttled", "-o", "jsonpath={.spec.error.code} {.status.hits}"); out != "429 1" {
		t.Errorf("kubectl get faultrule: %q, want the updated code and 1 hit", out)
	}
	table := strings.Split(strings.TrimSpace(framework.Kubectl(t, s, "", "get", "faultrules")), "\n")
	if len(table) != 2 || strings.Join(strings.Fields(table[0]), " ") != "NAME VERBS RESOURCES ACTION HITS COUNT AGE" ||
		!strings.HasPrefix(strings.Join(strings.Fields(table[1]), " "), "throttled get configmaps error 429 1 1 ") {
		t.Errorf("kubectl get faultrules:\n%s\nwant the rule, its action and its 1 hit", strings.Join(table, "\n"))
	}
	metrics := framework.ScrapeMetrics(t, s)
	if got := framework.SumSamples(metrics, "miniapiserver_testcontrol_fault_hits_total", map[string]string{"rule": "throttled"}); got != 1 {
		t.Errorf("miniapiserver_testcontrol_fault_hits_total{rule=throttled} = %v, want 1", got)
	}

	_, stderr, err := framework.RunKubectl(t, s, strings.Replace(manifest("600"), "throttled", "bad", 1), "apply", "-f", "-")
	if err == nil || !strings.Contains(stderr, "spec.error.code: Invalid value: 600: must be from 400 to 599") {
		t.Errorf("a rule with status 600: %v, stderr %q, want 422 naming spec.error.code", err, stderr)
	}
	framework.Kubectl(t, s, "", "delete", "faultrule", "throttled")
	if _, err := s.FaultRule("throttled"); !apierrors.IsNotFound(err) {
		t.Errorf("the rule after kubectl delete: %v, want NotFound", err)
	}
	_, stderr, err = framework.RunKubectl(t, s, "", "delete", "faultrule", "throttled")
	if err == nil || !strings.Contains(stderr, "NotFound") {
		t.Errorf("deleting it again: %v, stderr %q, want NotFound", err, stderr)
	}
}

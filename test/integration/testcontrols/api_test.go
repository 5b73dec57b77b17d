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
	"encoding/json"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

const restorePath = "/apis/testcontrol.miniapiserver.io/v1alpha1/checkpoints/clean/restore"

// TestCheckpointsWithKubectl takes, lists, restores and deletes a
// checkpoint with the real kubectl, as a suite in any language would.
func TestCheckpointsWithKubectl(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	const manifest = `apiVersion: testcontrol.miniapiserver.io/v1alpha1
kind: Checkpoint
metadata:
  name: clean
  labels: {suite: e2e}
`
	framework.Kubectl(t, s, manifest, "apply", "-f", "-")
	framework.Kubectl(t, s, manifest, "apply", "-f", "-") // unchanged: no error
	framework.Kubectl(t, s, "", "label", "checkpoint", "clean", "team=a")
	if out := framework.Kubectl(t, s, "", "get", "checkpoints", "-l", "suite=e2e,team=a"); !framework.ContainsField(out, "clean") {
		t.Errorf("kubectl get checkpoints -l suite=e2e,team=a:\n%s\nwant the checkpoint clean", out)
	}
	if out := framework.Kubectl(t, s, "", "get", "checkpoints", "-l", "team=b"); framework.ContainsField(out, "clean") {
		t.Errorf("kubectl get checkpoints -l team=b:\n%s\nwant no checkpoint", out)
	}
	framework.CreateCMIn(t, client, "default", "made", nil)

	out := framework.Kubectl(t, s, `{"apiVersion":"testcontrol.miniapiserver.io/v1alpha1","kind":"Restore"}`, "create", "--raw", restorePath, "-f", "-")
	var restore v1alpha1.Restore
	if err := json.Unmarshal([]byte(out), &restore); err != nil {
		t.Fatalf("restore answered %q: %v", out, err)
	}
	if restore.Kind != "Restore" || restore.Status.Deleted != 1 || restore.Status.ResourceVersion == "" {
		t.Errorf("restore answered %s, want a Restore that deleted 1 object, with a resourceVersion", out)
	}
	if _, err := client.CoreV1().ConfigMaps("default").Get(t.Context(), "made", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap made after the checkpoint: GET answered %v, want NotFound", err)
	}

	framework.Kubectl(t, s, "", "delete", "checkpoint", "clean")
	_, stderr, err := framework.RunKubectl(t, s, `{"apiVersion":"testcontrol.miniapiserver.io/v1alpha1","kind":"Restore"}`, "create", "--raw", restorePath, "-f", "-")
	if err == nil || !strings.Contains(stderr, "NotFound") {
		t.Errorf("restore of a deleted checkpoint: %v, stderr %q, want NotFound", err, stderr)
	}
	_, stderr, err = framework.RunKubectl(t, s, "", "create", "--raw", "/apis/testcontrol.miniapiserver.io/v1alpha1/checkpoints", "-f", "-")
	if err == nil {
		t.Errorf("a checkpoint of no body: no error, want one (stderr %q)", stderr)
	}
}

// TestCheckpointsNeedRBAC: the test controls are the admin's
// (system:masters) unless RBAC grants them; a user without a grant gets
// 403, and nothing is restored.
func TestCheckpointsNeedRBAC(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	if _, err := s.Checkpoint(t.Context(), "clean"); err != nil {
		t.Fatal(err)
	}
	framework.CreateCMIn(t, client, "default", "made", nil)
	cfg, err := s.AddUser("bob")
	if err != nil {
		t.Fatal(err)
	}
	bob := kubernetes.NewForConfigOrDie(cfg).Discovery().RESTClient()
	err = bob.Post().AbsPath(restorePath).Body([]byte(`{"apiVersion":"testcontrol.miniapiserver.io/v1alpha1","kind":"Restore"}`)).Do(t.Context()).Error()
	if !apierrors.IsForbidden(err) {
		t.Errorf("restore by a user without a grant: %v, want Forbidden", err)
	}
	if _, err := client.CoreV1().ConfigMaps("default").Get(t.Context(), "made", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap made after the checkpoint, after a forbidden restore: %v, want it kept", err)
	}
	err = bob.Post().AbsPath(faultRulesPath).Body([]byte(dropRule)).Do(t.Context()).Error()
	if !apierrors.IsForbidden(err) {
		t.Errorf("a fault rule by a user without a grant: %v, want Forbidden", err)
	}
	if _, err := s.FaultRule("drop"); !apierrors.IsNotFound(err) {
		t.Errorf("the fault rule after a forbidden create: %v, want NotFound", err)
	}
}

const (
	faultRulesPath = "/apis/testcontrol.miniapiserver.io/v1alpha1/faultrules"
	dropRule       = `{"apiVersion":"testcontrol.miniapiserver.io/v1alpha1","kind":"FaultRule","metadata":{"name":"drop"},
		"spec":{"match":{"resources":["secrets"]},"dropConnection":true}}`
)

// TestTestControlsOff: without Options.TestControls the group is not
// served, and the Go methods say why.
func TestTestControlsOff(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t, func(o *server.Options) { o.TestControls = false })
	if _, err := client.Discovery().ServerResourcesForGroupVersion(v1alpha1.SchemeGroupVersion.String()); !apierrors.IsNotFound(err) {
		t.Errorf("discovery of %s with the test controls off: %v, want NotFound", v1alpha1.SchemeGroupVersion, err)
	}
	if _, err := s.Checkpoint(t.Context(), "clean"); err == nil || !strings.Contains(err.Error(), "test controls are off") {
		t.Errorf("Checkpoint with the test controls off: %v, want an error saying they are off", err)
	}
	if _, err := s.InjectFault(v1alpha1.FaultRule{}); err == nil || !strings.Contains(err.Error(), "test controls are off") {
		t.Errorf("InjectFault with the test controls off: %v, want an error saying they are off", err)
	}
}

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

package resources

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// deprecated is kube-apiserver's warning on every componentstatuses request.
const deprecated = "v1 ComponentStatus is deprecated in v1.19+"

// componentWarnings records the warnings a client is sent.
type componentWarnings []string

func (w *componentWarnings) HandleWarningHeader(_ int, _ string, text string) { *w = append(*w, text) }

// TestComponentStatuses: componentstatuses are served read-only, with
// kube-apiserver's deprecation warning: etcd-0 is the server's etcd,
// Healthy, and kube-controller-manager and kube-scheduler are probed where
// upstream probes them (nothing listens there in this test, unless a
// cluster test's do); kubectl get cs prints upstream's columns.
func TestComponentStatuses(t *testing.T) {
	t.Parallel()
	s, _ := framework.Start(t)
	ctx := t.Context()
	var warnings componentWarnings
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = &warnings
	statuses := kubernetes.NewForConfigOrDie(cfg).CoreV1().ComponentStatuses()
	list, err := statuses.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cs := range list.Items {
		names = append(names, cs.Name)
		if len(cs.Conditions) != 1 || cs.Conditions[0].Type != corev1.ComponentHealthy {
			t.Errorf("%s: got conditions %+v, want one Healthy", cs.Name, cs.Conditions)
			continue
		}
		c := cs.Conditions[0]
		switch cs.Name {
		case "etcd-0":
			if c.Status != corev1.ConditionTrue || c.Message != "ok" || c.Error != "" {
				t.Errorf("etcd-0: got %+v, want True, ok", c)
			}
		case "controller-manager", "scheduler":
			address := map[string]string{"controller-manager": "https://127.0.0.1:10257/healthz", "scheduler": "https://127.0.0.1:10259/healthz"}[cs.Name]
			if c.Status != corev1.ConditionTrue && !strings.HasPrefix(c.Message, `Get "`+address+`": `) {
				t.Errorf("%s: got %+v, want True or the failed GET of %s", cs.Name, c, address)
			}
		}
	}
	if want := []string{"controller-manager", "etcd-0", "scheduler"}; !slices.Equal(names, want) {
		t.Errorf("componentstatuses: got %v, want %v", names, want)
	}
	if !slices.Equal(warnings, []string{deprecated}) {
		t.Errorf("warnings: got %q, want %q", warnings, deprecated)
	}

	etcd, err := statuses.Get(ctx, "etcd-0", metav1.GetOptions{})
	if err != nil || etcd.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("get etcd-0: got %+v, %v; want Healthy", etcd, err)
	}
	if _, err := statuses.Get(ctx, "etcd-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) || err.Error() != `componentstatus "etcd-1" not found` {
		t.Errorf("get etcd-1: got %v, want componentstatus \"etcd-1\" not found", err)
	}
	if _, err := statuses.Watch(ctx, metav1.ListOptions{}); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("watch: got %v, want MethodNotSupported (read-only, no watch)", err)
	}
	if _, err := statuses.Create(ctx, &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("create: got %v, want MethodNotSupported", err)
	}

	out, errOut, err := framework.RunKubectl(t, s, "", "get", "cs", "--field-selector", "metadata.name=etcd-0")
	if err != nil {
		t.Fatalf("kubectl get cs: %v\n%s", err, errOut)
	}
	if want := "NAME     STATUS    MESSAGE   ERROR\netcd-0   Healthy   ok        \n"; out != want {
		t.Errorf("kubectl get cs: got\n%q\nwant\n%q", out, want)
	}
	if !strings.Contains(errOut, "Warning: "+deprecated) {
		t.Errorf("kubectl get cs: stderr %q, want the deprecation warning", errOut)
	}
}

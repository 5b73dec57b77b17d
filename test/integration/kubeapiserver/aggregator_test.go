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

package kubeapiserver

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// TestAggregatedAPI: kube-apiserver's aggregator flags (a proxy client
// certificate its request-header flags trust), and an APIService for
// wardle, an extension API server written with k8s.io/apiserver that
// delegates authentication and authorization to the cluster, behind an
// ExternalName Service. kubectl reaches wardle's flunders through the
// server, as the user it is; discovery and the OpenAPI list them; once
// wardle stops, the proxy answers 503 and the APIService turns
// unavailable.
func TestAggregatedAPI(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	front, flags := frontProxy(t, p)
	proxyCert, proxyKey := proxyCertificate(t, front, "front-proxy-client")
	s := startAPIServer(t, startEtcd(t), p, append(flags,
		"--proxy-client-cert-file="+pkitest.WriteFile(t, p.dir, "front-proxy-client.crt", proxyCert),
		"--proxy-client-key-file="+pkitest.WriteFile(t, p.dir, "front-proxy-client.key", proxyKey))...)
	adminConfig := s.config(t, "admin", "system:masters")
	admin := kubernetes.NewForConfigOrDie(adminConfig)
	w := startWardle(t, adminConfig, "alpha", "beta")
	kubectl := kubectlAs(t, adminConfig)

	if out, err := kubectl("get", "flunders"); err == nil || !strings.Contains(out, `the server doesn't have a resource type "flunders"`) {
		t.Fatalf("kubectl get flunders before the APIService: got %v\n%s\nwant no such resource type", err, out)
	}
	available := registerWardle(t, adminConfig, w)
	framework.Poll(t, "the APIService available", time.Minute, func() bool { _, ok := available(); return ok })

	if out := getFlunders(t, kubectl); out != "flunder.wardle.example.com/alpha\nflunder.wardle.example.com/beta\n" {
		t.Errorf("kubectl get flunders: got\n%s\nwant alpha and beta", out)
	}
	if out, err := kubectl("api-resources", "--api-group=wardle.example.com", "-o", "name"); err != nil || out != "flunders.wardle.example.com\n" {
		t.Errorf("kubectl api-resources --api-group=wardle.example.com: got %v\n%s\nwant flunders", err, out)
	}
	var groups metav1.APIGroupList
	raw, err := admin.Discovery().RESTClient().Get().AbsPath("/apis").SetHeader("Accept", "application/json").DoRaw(ctx(t))
	if err != nil || json.Unmarshal(raw, &groups) != nil ||
		!slices.ContainsFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == wardleGV.Group }) {
		t.Errorf("the legacy /apis list: got %v\n%s\nwant wardle.example.com in it", err, raw)
	}
	// Its OpenAPI v3 is merged with the server's and the aggregator's own
	// (kubectl explain reads it).
	framework.Poll(t, "kubectl explain flunders", time.Minute, func() bool {
		out, err := kubectl("explain", "flunders")
		return err == nil && strings.Contains(out, "KIND:       Flunder\n")
	})
	if out, err := kubectl("explain", "apiservices.spec.service"); err != nil || !strings.Contains(out, "FIELD: service <ServiceReference>") {
		t.Errorf("kubectl explain apiservices.spec.service: got %v\n%s", err, out)
	}

	// bob, allowed by the cluster's RBAC, reaches wardle as bob: wardle
	// asks the cluster whether bob may.
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx(t), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "flunder-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{wardleGV.Group}, Resources: []string{"flunders"}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx(t), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "flunder-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "flunder-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bob := kubectlAs(t, s.config(t, "bob"))
	framework.Poll(t, "bob gets flunder alpha", 30*time.Second, func() bool {
		out, err := bob("get", "flunder", "alpha", "-o", "name")
		return err == nil && out == "flunder.wardle.example.com/alpha\n"
	})
	if readers := w.store.readers(); !slices.Contains(readers, "admin") || !slices.Contains(readers, "bob") {
		t.Errorf("the users wardle served: got %q, want admin and bob among them", readers)
	}

	w.Stop()
	if out, err := kubectl("get", "flunders"); err == nil || !strings.Contains(out, "ServiceUnavailable") {
		t.Errorf("kubectl get flunders once wardle stopped: got %v\n%s\nwant a 503", err, out)
	}
	framework.Poll(t, "the APIService unavailable", 2*time.Minute, func() bool {
		c, ok := available()
		return !ok && c.Status == apiregistrationv1.ConditionFalse && c.Reason == "FailedDiscoveryCheck"
	})
}

// TestAggregatedAPIFromTheDataDir: a server on a data dir (the plain
// command's, pkg/testserver's) proxies with the data dir's front proxy
// client certificate, which its request-header authentication trusts, as
// a kubeadm cluster's does: wardle sees who the user is.
func TestAggregatedAPIFromTheDataDir(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	w := startWardle(t, s.Config, "alpha")
	available := registerWardle(t, s.Config, w)
	framework.Poll(t, "the APIService available", time.Minute, func() bool { _, ok := available(); return ok })
	if out := getFlunders(t, kubectlAs(t, s.Config)); out != "flunder.wardle.example.com/alpha\n" {
		t.Errorf("kubectl get flunders: got\n%s\nwant alpha", out)
	}
	review, err := kubernetes.NewForConfigOrDie(s.Config).AuthenticationV1().SelfSubjectReviews().Create(ctx(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if readers, admin := w.store.readers(), review.Status.UserInfo.Username; !slices.Contains(readers, admin) {
		t.Errorf("the users wardle served: got %q, want %q", readers, admin)
	}
}

// getFlunders is the output of kubectl get flunders -o name, once it
// succeeds: the proxy learns that the APIService is available from an
// informer of its own, a moment after the APIService says so.
func getFlunders(t *testing.T, kubectl func(args ...string) (string, error)) string {
	t.Helper()
	var out string
	framework.Poll(t, "kubectl get flunders", 30*time.Second, func() bool {
		var err error
		out, err = kubectl("get", "flunders", "-o", "name")
		return err == nil
	})
	return out
}

// registerWardle registers w with the server admin reaches, behind an
// ExternalName Service, and returns a func that reports the APIService's
// Available condition.
func registerWardle(t *testing.T, admin *rest.Config, w *wardle) func() (apiregistrationv1.APIServiceCondition, bool) {
	t.Helper()
	port := int32(w.port)
	if _, err := kubernetes.NewForConfigOrDie(admin).CoreV1().Services("default").Create(ctx(t), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "wardle"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost", Ports: []corev1.ServicePort{{Port: port}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	apiServices := aggregatorclient.NewForConfigOrDie(admin).ApiregistrationV1().APIServices()
	apiService := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com"},
		Spec: apiregistrationv1.APIServiceSpec{Group: wardleGV.Group, Version: wardleGV.Version, CABundle: w.caPEM,
			Service:              &apiregistrationv1.ServiceReference{Namespace: "default", Name: "wardle", Port: &port},
			GroupPriorityMinimum: 1000, VersionPriority: 15}}
	if _, err := apiServices.Create(ctx(t), apiService, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return func() (apiregistrationv1.APIServiceCondition, bool) {
		got, err := apiServices.Get(ctx(t), apiService.Name, metav1.GetOptions{})
		if err != nil {
			return apiregistrationv1.APIServiceCondition{}, false
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiregistrationv1.Available {
				return c, c.Status == apiregistrationv1.ConditionTrue
			}
		}
		return apiregistrationv1.APIServiceCondition{}, false
	}
}

// kubectlAs returns a func that runs kubectl as cfg's user (a client
// certificate's), with a discovery cache of its own; it returns stdout and
// stderr together.
func kubectlAs(t *testing.T, cfg *rest.Config) func(args ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := writeKubeconfig(t, dir, cfg)
	return func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx(t), framework.KubectlPath(t), append([]string{"--kubeconfig", kubeconfig, "--cache-dir", dir + "/cache"}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

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
	"crypto/tls"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// TestEnvtestStart starts etcd and kube-apiserver as controller-runtime's
// envtest does, and checks what envtest's suites rely on: anonymous
// /healthz, /livez and /readyz; the admin (a client certificate in
// system:masters) may do anything; another user what RBAC allows; the
// bootstrap objects are there; --disable-admission-plugins=ServiceAccount
// lets a Pod be created without its ServiceAccount.
func TestEnvtestStart(t *testing.T) {
	t.Parallel()
	s := startAPIServer(t, startEtcd(t), newPKI(t))
	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		resp, err := s.anonymous().Get(s.host + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("anonymous GET %s: got %d, want 200", path, resp.StatusCode)
		}
	}
	admin := s.admin(t)
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		if _, err := admin.CoreV1().Namespaces().Get(ctx(t), ns, metav1.GetOptions{}); err != nil {
			t.Errorf("namespace %s: %v", ns, err)
		}
	}
	if _, err := admin.RbacV1().ClusterRoles().Get(ctx(t), "cluster-admin", metav1.GetOptions{}); err != nil {
		t.Errorf("cluster-admin: %v", err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	if _, err := admin.CoreV1().Pods("default").Create(ctx(t), pod, metav1.CreateOptions{}); err != nil {
		t.Errorf("a pod without its service account: %v", err)
	}

	bob := kubernetes.NewForConfigOrDie(s.config(t, "bob", "dev"))
	if _, err := bob.CoreV1().Secrets("default").List(ctx(t), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bob lists secrets without a binding: got %v, want 403", err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dev-view"}, RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "dev"}}}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// edit is bootstrapped with the rules it aggregates (kube-apiserver
	// leaves them to kube-controller-manager, which a cluster runs).
	framework.Poll(t, "bob lists configmaps", 10*time.Second, func() bool {
		_, err := bob.CoreV1().ConfigMaps("default").List(ctx(t), metav1.ListOptions{})
		return err == nil
	})
	if _, err := bob.CoreV1().ConfigMaps("kube-system").List(ctx(t), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bob lists configmaps in another namespace: got %v, want 403", err)
	}
}

// TestServiceClusterIPRange: --service-cluster-ip-range is where Services'
// addresses come from, the kubernetes Service's included (the first).
func TestServiceClusterIPRange(t *testing.T) {
	t.Parallel()
	s := startAPIServer(t, startEtcd(t), newPKI(t), "--service-cluster-ip-range=10.96.0.0/16", "--service-node-port-range=31000-31009")
	admin := s.admin(t)
	kubernetesSvc, err := admin.CoreV1().Services("default").Get(ctx(t), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := kubernetesSvc.Spec.ClusterIP; got != "10.96.0.1" {
		t.Errorf("the kubernetes Service's cluster IP: got %s, want 10.96.0.1", got)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}
	got, err := admin.CoreV1().Services("default").Create(ctx(t), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ip := netip.MustParseAddr(got.Spec.ClusterIP); !netip.MustParsePrefix("10.96.0.0/16").Contains(ip) {
		t.Errorf("cluster IP %s: not in 10.96.0.0/16", ip)
	}
	if p := got.Spec.Ports[0].NodePort; p < 31000 || p > 31009 {
		t.Errorf("node port %d: not in 31000-31009", p)
	}
	cidr, err := admin.NetworkingV1().ServiceCIDRs().Get(ctx(t), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cidr.Spec.CIDRs) != 1 || cidr.Spec.CIDRs[0] != "10.96.0.0/16" {
		t.Errorf("the default ServiceCIDR: got %v, want [10.96.0.0/16]", cidr.Spec.CIDRs)
	}
}

// TestAuthorizationModes: without --authorization-mode kube-apiserver
// allows everything (AlwaysAllow); AlwaysAllow lets a user without
// bindings list Secrets; RBAC does not.
func TestAuthorizationModes(t *testing.T) {
	t.Parallel()
	etcd := startEtcd(t)
	for _, tc := range []struct {
		name    string
		flags   []string
		allowed bool
	}{
		{name: "none", allowed: true},
		{name: "AlwaysAllow", flags: []string{"--authorization-mode=AlwaysAllow"}, allowed: true},
		{name: "NodeRBAC", flags: []string{"--authorization-mode=Node,RBAC"}},
		{name: "RBACAlwaysAllow", flags: []string{"--authorization-mode=RBAC,AlwaysAllow"}, allowed: true},
		{name: "AlwaysDeny", flags: []string{"--authorization-mode=AlwaysDeny"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// --authorization-mode is a list: repeated, it grows. With
			// AlwaysDeny, only system:masters may get /healthz.
			s := launch(t, etcd, withoutFlag(newPKI(t), "authorization-mode"), append(tc.flags, "--etcd-prefix=/"+tc.name)...)
			s.waitForAdmin(t)
			_, err := kubernetes.NewForConfigOrDie(s.config(t, "eve")).CoreV1().Secrets("kube-system").List(ctx(t), metav1.ListOptions{})
			if tc.allowed && err != nil || !tc.allowed && !apierrors.IsForbidden(err) {
				t.Errorf("eve lists kube-system's secrets: got %v, want allowed %t", err, tc.allowed)
			}
		})
	}
}

// TestEtcdPrefix: --etcd-prefix is where the objects are in etcd.
func TestEtcdPrefix(t *testing.T) {
	t.Parallel()
	etcd := startEtcd(t)
	s := startAPIServer(t, etcd, newPKI(t), "--etcd-prefix=/other")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "here"}}
	if _, err := s.admin(t).CoreV1().ConfigMaps("default").Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for key, want := range map[string]int64{"/other/configmaps/default/here": 1, "/registry/configmaps/default/here": 0} {
		resp, err := client.Get(ctx(t), key, clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != want {
			t.Errorf("%s: got %d keys, want %d", key, resp.Count, want)
		}
	}
}

// TestServiceAccountTokens: a token the server issues (TokenRequest, as
// `kubectl create token`) is signed by --service-account-signing-key-file,
// carries --service-account-issuer, and authenticates; one from a server
// with another key does not. The issuer's OpenID configuration names
// --service-account-jwks-uri.
func TestServiceAccountTokens(t *testing.T) {
	t.Parallel()
	etcd := startEtcd(t)
	s := startAPIServer(t, etcd, newPKI(t), "--etcd-prefix=/one")
	const jwksURI = "https://keys.example.com/openid/v1/jwks"
	other := startAPIServer(t, etcd, newPKI(t), "--etcd-prefix=/two", "--service-account-jwks-uri="+jwksURI)
	token := func(s *apiserver) string {
		admin := s.admin(t)
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}
		if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx(t), sa, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx(t), "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	whoami := func(s *apiserver, token string) (string, error) {
		cfg := &rest.Config{Host: s.host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: s.pki.servingCA}}
		review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return review.Status.UserInfo.Username, nil
	}
	mine := token(s)
	if got, err := whoami(s, mine); err != nil || got != "system:serviceaccount:default:robot" {
		t.Errorf("its own token: got %q, %v; want system:serviceaccount:default:robot", got, err)
	}
	token(other) // the same service account there, another key
	if _, err := whoami(other, mine); !apierrors.IsUnauthorized(err) {
		t.Errorf("a token of another key: got %v, want 401", err)
	}
	raw, err := other.admin(t).Discovery().RESTClient().Get().AbsPath("/.well-known/openid-configuration").DoRaw(ctx(t))
	if err != nil || !strings.Contains(string(raw), `"jwks_uri":"`+jwksURI+`"`) {
		t.Errorf("the OpenID configuration: got %v\n%s\nwant jwks_uri %s", err, raw, jwksURI)
	}
}

// TestAnonymousAuth: --anonymous-auth=false makes a request without
// credentials a 401, /healthz's included.
func TestAnonymousAuth(t *testing.T) {
	t.Parallel()
	s := launch(t, startEtcd(t), newPKI(t), "--anonymous-auth=false")
	s.waitForAdmin(t)
	resp, err := s.anonymous().Get(s.host + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous /healthz with --anonymous-auth=false: got %d, want 401", resp.StatusCode)
	}
}

// TestAuditLog: --audit-policy-file and --audit-log-path write kube-apiserver's
// audit events.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "audit.log")
	s := startAPIServer(t, startEtcd(t), newPKI(t), "--audit-policy-file="+policy, "--audit-log-path="+log)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audited"}}
	if _, err := s.admin(t).CoreV1().ConfigMaps("default").Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Poll(t, "the create in the audit log", 10*time.Second, func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), `"verb":"create"`) && strings.Contains(string(b), `"name":"audited"`)
	})
}

// TestServingCertificateFromCertDir: with no --tls-cert-file, the server
// serves apiserver.crt of --cert-dir, as envtest writes it there.
func TestServingCertificateFromCertDir(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	certDir := t.TempDir()
	for from, to := range map[string]string{p.tlsCert: "apiserver.crt", p.tlsKey: "apiserver.key"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(certDir, to), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port := framework.FreePort(t)
	proc := start(t, persona(t, "kube-apiserver"), envtestArgs(p, startEtcd(t), certDir, port)...)
	s := &apiserver{process: proc, host: fmt.Sprintf("https://127.0.0.1:%d", port), pki: p}
	// waitOK's client trusts only p's CA: it verifies the certificate.
	waitOK(t, proc, s.anonymous(), s.host+"/healthz")
}

// TestEtcdTransports: --etcd-servers over a unix socket, and over TLS
// with a client certificate (--etcd-cafile, --etcd-certfile,
// --etcd-keyfile), each to the etcd persona listening so.
func TestEtcdTransports(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	clientCert, clientKey := p.user(t, "apiserver-etcd-client")
	certFile, keyFile := pkitest.WriteFile(t, p.dir, "etcd-client.crt", clientCert), pkitest.WriteFile(t, p.dir, "etcd-client.key", clientKey)
	sock := filepath.Join(t.TempDir(), "etcd.sock")
	tlsURL := fmt.Sprintf("https://127.0.0.1:%d", framework.FreePort(t))
	for _, tc := range []struct {
		name      string
		etcdFlags []string
		url       string
		flags     []string
	}{
		{name: "unix", url: "unix://" + sock, etcdFlags: []string{"--listen-client-urls=unix://" + sock, "--advertise-client-urls=unix://" + sock}},
		{name: "tls", url: tlsURL, etcdFlags: []string{"--listen-client-urls=" + tlsURL, "--advertise-client-urls=" + tlsURL,
			"--cert-file=" + p.tlsCert, "--key-file=" + p.tlsKey, "--trusted-ca-file=" + p.clientCA, "--client-cert-auth"},
			flags: []string{"--etcd-cafile=" + p.clientCA, "--etcd-certfile=" + certFile, "--etcd-keyfile=" + keyFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start(t, persona(t, "etcd"), append([]string{"--data-dir=" + t.TempDir(), "--listen-peer-urls=http://127.0.0.1:0", "--unsafe-no-fsync"}, tc.etcdFlags...)...)
			var tlsConfig *tls.Config
			if tc.name == "tls" {
				cert, err := tls.X509KeyPair(clientCert, clientKey)
				if err != nil {
					t.Fatal(err)
				}
				tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: p.ca.Pool()}
			}
			framework.Poll(t, "etcd answers", time.Minute, func() bool {
				client, err := clientv3.New(clientv3.Config{Endpoints: []string{tc.url}, DialTimeout: time.Second, TLS: tlsConfig})
				if err != nil {
					return false
				}
				defer client.Close()
				_, err = client.Get(ctx(t), "health")
				return err == nil
			})
			s := launch(t, tc.url, p, tc.flags...)
			waitOK(t, s.process, s.anonymous(), s.host+"/readyz")
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: tc.name}}
			if _, err := s.admin(t).CoreV1().ConfigMaps("default").Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
				t.Errorf("a create over %s: %v", tc.name, err)
			}
		})
	}
}

// TestFirstCustomResourceCreate: apiextensions-apiserver holds the first
// creates of a CRD's custom resources for 2s after it is Established, for
// HA peers to see it. A kube-apiserver alone on its etcd (as envtest's)
// backdates the Established condition instead, and serves them at once;
// with another server's identity lease live on the etcd, it does not.
func TestFirstCustomResourceCreate(t *testing.T) {
	t.Parallel()
	etcd := startEtcd(t)
	for _, tc := range []struct {
		name   string
		shared bool
	}{{name: "alone"}, {name: "shared", shared: true}} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := "--etcd-prefix=/" + tc.name
			s := startAPIServer(t, etcd, newPKI(t), prefix)
			if tc.shared {
				startAPIServer(t, etcd, newPKI(t), prefix)
			}
			cfg := s.config(t, "admin", "system:masters")
			crd, established := installCRD(t, cfg)
			if backdated := established.Before(&crd.CreationTimestamp); backdated == tc.shared {
				t.Errorf("Established at %s, created at %s: backdated %t, want %t", established, crd.CreationTimestamp, backdated, !tc.shared)
			}
			widget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "first"}}}
			began := time.Now()
			if _, err := dynamic.NewForConfigOrDie(cfg).Resource(widgets).Namespace("default").Create(ctx(t), widget, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if took, held := time.Since(began), 2*time.Second; (took >= held) != tc.shared {
				t.Errorf("the first create took %s: held %t, want %t", took, took >= held, tc.shared)
			}
		})
	}
}

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// installCRD creates the Widget CRD and returns it and when it became
// Established, once it has.
func installCRD(t *testing.T, cfg *rest.Config) (*apiextensionsv1.CustomResourceDefinition, metav1.Time) {
	t.Helper()
	client := apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions()
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	crd, err := client.Create(ctx(t), crd, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var established metav1.Time
	framework.Poll(t, "the CRD Established", 30*time.Second, func() bool {
		got, err := client.Get(ctx(t), crd.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established = c.LastTransitionTime
				return true
			}
		}
		return false
	})
	return crd, established
}

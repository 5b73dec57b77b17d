package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestTwoInstancesShareAnExternalEtcd runs two servers with --etcd-servers
// on one etcd: what one writes the other serves, and a LIST paged on one
// continues on the other.
func TestTwoInstancesShareAnExternalEtcd(t *testing.T) {
	etcd, err := storage.StartEtcd(t.Context(), storage.EtcdConfig{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	external := func(o *server.Options) { o.EtcdServers = []string{etcd.URL()} }
	a := kubernetes.NewForConfigOrDie(testserver.Start(t, external).Config)
	b := kubernetes.NewForConfigOrDie(testserver.Start(t, external).Config)

	createConfigMaps(t, a, "default", 5)
	got, err := b.CoreV1().ConfigMaps("default").Get(t.Context(), "cm-003", metav1.GetOptions{})
	if err != nil || got.Data["i"] != "3" {
		t.Fatalf("instance B reading A's write: got %v, %v", got, err)
	}
	page, err := a.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	rest, err := b.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{Limit: 3, Continue: page.Continue})
	if err != nil {
		t.Fatalf("continuing A's list on B: %v", err)
	}
	var names []string
	for _, cm := range append(page.Items, rest.Items...) {
		names = append(names, cm.Name)
	}
	if len(names) != 5 || names[0] != "cm-000" || names[4] != "cm-004" || rest.Continue != "" {
		t.Errorf("paged across instances: got %v (continue %q), want cm-000..cm-004", names, rest.Continue)
	}
	ns, err := b.CoreV1().Namespaces().Get(t.Context(), "kube-system", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("kube-system on B: got %v, %v", ns, err)
	}
}

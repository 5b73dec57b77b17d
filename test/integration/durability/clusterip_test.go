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

package durability

import (
	"fmt"
	"maps"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestClusterIPsAreUniqueAcrossInstances: two servers on one etcd create
// Services at once; every cluster IP is recorded as an IPAddress whose
// parent is its Service, no two Services share one, a requested address
// another holds is refused, and a deleted Service frees its address.
func TestClusterIPsAreUniqueAcrossInstances(t *testing.T) {
	// A small range, nearly filled by both servers at once: they must
	// pick the same free addresses often.
	narrow := func(o *server.Options) {
		o.ServiceRanges = service.Ranges{ClusterIPs: netip.MustParsePrefix("10.0.0.0/27"), NodePorts: service.DefaultRanges.NodePorts}
	}
	external := framework.ExternalEtcd(t, 0)
	a := kubernetes.NewForConfigOrDie(testserver.Start(t, external, narrow).Config)
	b := kubernetes.NewForConfigOrDie(testserver.Start(t, external, narrow).Config)
	ctx := t.Context()

	const perServer = 14 // of the 29 usable addresses
	services := raceServiceCreates(t, []kubernetes.Interface{a, b}, perServer)
	// A requested address another Service holds is refused; one a deleted
	// Service held is free again.
	taken := services[1] // [0] is kubernetes
	want := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "wants-it"},
		Spec: corev1.ServiceSpec{ClusterIP: taken.Spec.ClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := b.CoreV1().Services("default").Create(ctx, want, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a taken address: got %v, want 422", err)
	}
	if err := a.CoreV1().Services("default").Delete(ctx, taken.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.NetworkingV1().IPAddresses().Get(ctx, taken.Spec.ClusterIP, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the IPAddress of a deleted Service: got %v, want NotFound", err)
	}
	if _, err := b.CoreV1().Services("default").Create(ctx, want, metav1.CreateOptions{}); err != nil {
		t.Errorf("the freed address: %v", err)
	}
}

// TestKubernetesService: the server makes default/kubernetes as
// kube-apiserver does (the first address of the range, 443 to the
// server's port, upstream's labels; no Endpoints or EndpointSlice for a
// loopback address), its address is refused to another Service, and, as
// upstream's, a restart on another port leaves it as it is.
// raceServiceCreates creates perServer Services through each of clients
// (servers on one etcd) at once, then checks that every cluster IP is
// recorded as an IPAddress whose parent is its Service and that no two
// Services share one. It returns the Services, default/kubernetes first.
// A create that times out is sent again (up to 3 times), as a controller
// would: its write may have been committed all the same (AlreadyExists
// then).
func raceServiceCreates(t *testing.T, clients []kubernetes.Interface, perServer int) []corev1.Service {
	t.Helper()
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, len(clients)*perServer)
	began := time.Now()
	for s, client := range clients {
		for i := range perServer {
			wg.Go(func() {
				svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d-%03d", s, i)},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
				for sent := 0; ; sent++ {
					_, err := client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
					if transient(err) && sent < 3 {
						continue
					}
					if err != nil && !(sent > 0 && apierrors.IsAlreadyExists(err)) {
						errs <- err
					}
					return
				}
			})
		}
	}
	wg.Wait()
	t.Logf("%d Services created in %s", len(clients)*perServer, time.Since(began))
	close(errs)
	for err := range errs {
		t.Errorf("create: %v", err)
	}
	services, err := clients[0].CoreV1().Services("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ips, err := clients[0].NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parents := map[string]string{}
	for _, ip := range ips.Items {
		if ref := ip.Spec.ParentRef; ref != nil && ref.Resource == "services" {
			parents[ip.Name] = ref.Namespace + "/" + ref.Name
		}
		if ip.Labels[networkingv1.LabelManagedBy] != "ipallocator.k8s.io" {
			t.Errorf("IPAddress %s: labels %v, want upstream's allocator's", ip.Name, ip.Labels)
		}
	}
	holder := map[string]string{}
	for _, svc := range services.Items {
		ip := svc.Spec.ClusterIP
		if other, ok := holder[ip]; ok {
			t.Errorf("Services %s and %s share cluster IP %s", other, svc.Name, ip)
		}
		holder[ip] = svc.Name
		if got, want := parents[ip], "default/"+svc.Name; got != want {
			t.Errorf("the IPAddress of %s's %s: parent %q, want %q", svc.Name, ip, got, want)
		}
	}
	if want := len(clients)*perServer + 1; len(services.Items) != want || services.Items[0].Name != "kubernetes" {
		t.Fatalf("got %d Services, want %d, kubernetes first", len(services.Items), want)
	}
	return services.Items
}

func TestKubernetesService(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	firstPort := 0
	for round := range 2 {
		s := testserver.Start(t, func(o *server.Options) { o.DataDir = dir })
		client := kubernetes.NewForConfigOrDie(s.Config)
		ctx := t.Context()
		port := framework.ServerPort(t, s)
		if firstPort == 0 {
			firstPort = port
		}
		svc, err := client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := corev1.ServiceSpec{
			Ports:           []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(int32(firstPort))}},
			ClusterIP:       "10.0.0.1",
			ClusterIPs:      []string{"10.0.0.1"},
			Type:            corev1.ServiceTypeClusterIP,
			SessionAffinity: corev1.ServiceAffinityNone,
		}
		got := corev1.ServiceSpec{Ports: svc.Spec.Ports, ClusterIP: svc.Spec.ClusterIP, ClusterIPs: svc.Spec.ClusterIPs, Type: svc.Spec.Type, SessionAffinity: svc.Spec.SessionAffinity}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("round %d: the kubernetes Service (-want +got):\n%s", round, diff)
		}
		if want := map[string]string{"provider": "kubernetes", "component": "apiserver"}; !maps.Equal(svc.Labels, want) {
			t.Errorf("round %d: labels %v, want %v", round, svc.Labels, want)
		}
		ip, err := client.NetworkingV1().IPAddresses().Get(ctx, "10.0.0.1", metav1.GetOptions{})
		if err != nil || ip.Spec.ParentRef == nil || ip.Spec.ParentRef.Namespace != "default" || ip.Spec.ParentRef.Name != "kubernetes" {
			t.Errorf("round %d: IPAddress 10.0.0.1: got %v, %v; want held by default/kubernetes", round, ip, err)
		}
		if _, err := client.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("round %d: Endpoints kubernetes: got %v, want NotFound (a loopback address is no endpoint)", round, err)
		}
		other := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("wants-it-", round)},
			Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1", Ports: []corev1.ServicePort{{Port: 80}}}}
		if _, err := client.CoreV1().Services("default").Create(ctx, other, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "already allocated") {
			t.Errorf("round %d: another Service asking for 10.0.0.1: got %v, want 422 already allocated", round, err)
		}
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// transient reports whether err is one a loaded etcd cluster gives for a
// while, as kube-apiserver passes it on: a timeout, or etcd's own request
// timeout or leader change, in which the write may or may not be done.
func transient(err error) bool {
	if apierrors.IsTimeout(err) {
		return true
	}
	return err != nil && (strings.Contains(err.Error(), "etcdserver: request timed out") || strings.Contains(err.Error(), "etcdserver: leader changed"))
}

// TestClusterIPRepairAtStart: a server that starts repairs the
// IPAddresses of cluster IPs before it is ready: a Service whose
// IPAddress was lost (deleted from etcd behind the server's back) has it
// again, naming it.
func TestClusterIPRepairAtStart(t *testing.T) {
	dir := t.TempDir()
	onDir := func(o *server.Options) { o.DataDir = dir }
	s := testserver.Start(t, onDir)
	client := kubernetes.NewForConfigOrDie(s.Config)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lost"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}}}
	svc, err := client.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	behindItsBack(t, s, "/registry/ipaddresses/"+svc.Spec.ClusterIP)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	client = kubernetes.NewForConfigOrDie(testserver.Start(t, onDir).Config)
	ip, err := client.NetworkingV1().IPAddresses().Get(t.Context(), svc.Spec.ClusterIP, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after a restart, the lost IPAddress of %s: %v, want it made again", svc.Spec.ClusterIP, err)
	}
	want := &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "lost"}
	if diff := cmp.Diff(want, ip.Spec.ParentRef); diff != "" {
		t.Errorf("its parentRef (-want +got):\n%s", diff)
	}
}

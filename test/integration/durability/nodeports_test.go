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
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// nodePortService is a NodePort Service named name, asking for nodePort
// (0: any).
func nodePortService(name string, nodePort int32) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: nodePort}}}}
}

// TestNodePortsAreUniqueAcrossInstances: two servers on one etcd create
// 100 NodePort Services each, 10 at a time on each, in a range of 300
// ports; half ask for a port the other server's twin asks for too (each
// server allocates one at a time: more at once would only queue them,
// past the request timeout on a loaded machine). No port is held
// twice, a port asked for is refused only when another Service holds
// it, and a deleted Service's port is free again on the other server.
func TestNodePortsAreUniqueAcrossInstances(t *testing.T) {
	narrow := func(o *server.Options) {
		o.ServiceRanges = service.Ranges{ClusterIPs: service.DefaultRanges.ClusterIPs, NodePorts: service.PortRange{Base: 30000, Size: 300}}
	}
	external := framework.ExternalEtcd(t, 0)
	clients := []kubernetes.Interface{
		kubernetes.NewForConfigOrDie(testserver.Start(t, external, narrow, wideIPs).Config),
		kubernetes.NewForConfigOrDie(testserver.Start(t, external, narrow, wideIPs).Config),
	}
	ctx := t.Context()
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := map[string]int32{}
	began := time.Now()
	for s, client := range clients {
		slots := make(chan struct{}, 10)
		for i := range 100 {
			var asked int32
			if i%2 == 0 {
				asked = 30000 + int32(i)
			}
			name := fmt.Sprintf("s%d-%03d", s, i)
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				_, err := client.CoreV1().Services("default").Create(ctx, nodePortService(name, asked), metav1.CreateOptions{})
				switch {
				case err == nil:
				case asked != 0 && apierrors.IsInvalid(err) && strings.Contains(err.Error(), "provided port is already allocated"):
					mu.Lock()
					refused[name] = asked
					mu.Unlock()
				default:
					t.Errorf("create %s: %v", name, err)
				}
			})
		}
	}
	wg.Wait()
	t.Logf("200 Services created in %s", time.Since(began))
	list, err := clients[0].CoreV1().Services("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder := map[int32]string{}
	for _, svc := range list.Items {
		for _, p := range svc.Spec.Ports {
			if p.NodePort == 0 {
				continue
			}
			if other, ok := holder[p.NodePort]; ok {
				t.Errorf("Services %s and %s share node port %d", other, svc.Name, p.NodePort)
			}
			holder[p.NodePort] = svc.Name
		}
	}
	for name, port := range refused {
		if holder[port] == "" {
			t.Errorf("%s was refused node port %d, which no Service holds", name, port)
		}
	}
	if len(refused) < 50 || len(holder) != 200-len(refused) {
		t.Errorf("%d refused, %d node ports held; want at least 50 refused (one of each pair) and a port for every other Service", len(refused), len(holder))
	}
	// A deleted Service's port is free again, on the other server too.
	port := list.Items[1].Spec.Ports[0].NodePort // [0] is kubernetes
	if err := clients[0].CoreV1().Services("default").Delete(ctx, list.Items[1].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := clients[1].CoreV1().Services("default").Create(ctx, nodePortService("takes-it", port), metav1.CreateOptions{}); err != nil {
		t.Errorf("node port %d of a deleted Service: %v", port, err)
	}
}

// wideIPs gives 200 Services room for a cluster IP each.
func wideIPs(o *server.Options) { o.ServiceRanges.ClusterIPs = netip.MustParsePrefix("10.0.0.0/22") }

// TestNodePortRepairAtStart: a server that starts repairs the record of
// node ports before it is ready: a port recorded for a Service that is
// gone (deleted from etcd behind the server's back) is free again, and
// ports Services hold are recorded again if the record was lost.
func TestNodePortRepairAtStart(t *testing.T) {
	dir := t.TempDir()
	onDir := func(o *server.Options) { o.DataDir = dir }
	ctx := t.Context()
	create := func(client kubernetes.Interface, name string, port int32) error {
		_, err := client.CoreV1().Services("default").Create(ctx, nodePortService(name, port), metav1.CreateOptions{})
		return err
	}
	taken := func(err error) bool {
		return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "provided port is already allocated")
	}

	s := testserver.Start(t, onDir)
	client := kubernetes.NewForConfigOrDie(s.Config)
	for name, port := range map[string]int32{"gone": 30100, "kept": 30200} {
		if err := create(client, name, port); err != nil {
			t.Fatal(err)
		}
	}
	behindItsBack(t, s, "/registry/services/default/gone")
	if err := create(client, "wants-30100", 30100); !taken(err) {
		t.Errorf("before a restart, the port of the Service gone: got %v, want 422 (still recorded)", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	s = testserver.Start(t, onDir)
	client = kubernetes.NewForConfigOrDie(s.Config)
	if err := create(client, "takes-30100", 30100); err != nil {
		t.Errorf("after a restart, the port of the Service gone: %v", err)
	}
	behindItsBack(t, s, "/registry/ranges/servicenodeports")
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	client = kubernetes.NewForConfigOrDie(testserver.Start(t, onDir).Config)
	for _, port := range []int32{30100, 30200} {
		if err := create(client, fmt.Sprint("wants-", port), port); !taken(err) {
			t.Errorf("after the record was lost and a restart, node port %d, which a Service holds: got %v, want 422 already allocated", port, err)
		}
	}
}

// behindItsBack deletes key from s's etcd.
func behindItsBack(t *testing.T, s *testserver.Server, key string) {
	t.Helper()
	etcd, err := clientv3.New(clientv3.Config{Endpoints: s.EtcdServers, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	if resp, err := etcd.Delete(t.Context(), key); err != nil || resp.Deleted != 1 {
		t.Fatalf("deleting %s from etcd: %v, %v; want it deleted", key, resp, err)
	}
}

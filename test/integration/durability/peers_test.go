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
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestTwoInstancesAgree: two servers on one etcd, each with its data
// dir's own CA and the default in-server controllers, write nothing
// again and again once both are up but their identity leases' renewals
// (kube-apiserver's too): every object they both keep (kube-root-ca.crt in each namespace,
// the authentication info, the kubernetes Service, the default
// ServiceCIDR, the bootstrap roles) converges instead of flapping.
func TestTwoInstancesAgree(t *testing.T) {
	var endpoints []string
	external := framework.ExternalEtcd(t, 0)
	capture := func(o *server.Options) { external(o); endpoints = o.EtcdServers }
	a := testserver.Start(t, capture, testserver.WithNamespaceDefaults())
	client := kubernetes.NewForConfigOrDie(a.Config)
	ctx := t.Context()
	for _, ns := range []string{"one", "two", "three"} {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testserver.Start(t, capture, testserver.WithNamespaceDefaults())

	etcd, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	// What the second server's start writes is bootstrap: a key its
	// controllers set once more is no fight; one set again and again is.
	watchCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	writes := map[string]int{}
	for resp := range etcd.Watch(watchCtx, "/registry/", clientv3.WithPrefix()) {
		for _, ev := range resp.Events {
			writes[string(ev.Kv.Key)]++
		}
	}
	for _, key := range slices.Sorted(maps.Keys(writes)) {
		if strings.HasPrefix(key, "/registry/leases/kube-system/apiserver-") {
			continue // identity leases, renewed every 10s
		}
		if writes[key] > 1 {
			t.Errorf("%s: written %d times in 30s", key, writes[key])
		} else {
			t.Logf("%s: written once", key)
		}
	}
}

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
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/informertest"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// etcdCluster is three etcd members in this process that take only TLS
// clients with a certificate from pki's CA.
type etcdCluster struct {
	members   []*embed.Etcd
	endpoints []string
	closed    []sync.Once // embed.Etcd.Close is not safe to call twice
}

// kill stops member i.
func (c *etcdCluster) kill(i int) { c.closed[i].Do(c.members[i].Close) }

// startEtcdCluster starts a 3-member cluster and waits until it serves.
func startEtcdCluster(t *testing.T, pki testPKI) *etcdCluster {
	t.Helper()
	const n = 3
	var ports []int
	for range 2 * n {
		ports = append(ports, framework.FreePort(t))
	}
	cfgs := make([]*embed.Config, n)
	var initial []string
	for i := range n {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprint("m", i)
		cfg.Dir = filepath.Join(t.TempDir(), cfg.Name)
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		cfg.UnsafeNoFsync = true
		// etcd's defaults: shorter timeouts, missed by a loaded test
		// process, had the members elect again and again (each election
		// ends every watch with "no leader").
		cfg.TickMs, cfg.ElectionMs = 100, 1000
		client := url.URL{Scheme: "https", Host: fmt.Sprint("127.0.0.1:", ports[2*i])}
		peer := url.URL{Scheme: "http", Host: fmt.Sprint("127.0.0.1:", ports[2*i+1])}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		cfg.ClientTLSInfo.CertFile, cfg.ClientTLSInfo.KeyFile = pki.serverCert, pki.serverKey
		cfg.ClientTLSInfo.TrustedCAFile, cfg.ClientTLSInfo.ClientCertAuth = pki.ca, true
		cfg.WatchProgressNotifyInterval = time.Second
		initial = append(initial, cfg.Name+"="+peer.String())
		cfgs[i] = cfg
	}
	c := &etcdCluster{members: make([]*embed.Etcd, n), closed: make([]sync.Once, n)}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, cfg := range cfgs {
		cfg.InitialCluster = strings.Join(initial, ",")
		c.endpoints = append(c.endpoints, cfg.AdvertiseClientUrls[0].String())
		wg.Go(func() { c.members[i], errs[i] = embed.StartEtcd(cfg) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("etcd member %d: %v", i, err)
		}
		t.Cleanup(func() { c.kill(i) })
	}
	for i, m := range c.members {
		select {
		case <-m.Server.ReadyNotify():
		case <-time.After(time.Minute):
			t.Fatalf("etcd member %d not ready after a minute", i)
		}
	}
	return c
}

// leader returns the index of the member that leads.
func (c *etcdCluster) leader(t *testing.T) int {
	t.Helper()
	for i, m := range c.members {
		if m.Server.Leader() == m.Server.MemberID() {
			return i
		}
	}
	t.Fatal("no member leads")
	return -1
}

// TestLeaderLossOnATLSEtcdCluster runs a server on a 3-member etcd cluster
// reached over TLS with a client certificate, with 8 writers and an
// informer, and kills the leader mid-way: writes are served again once the
// others have elected a new one, no acknowledged write is lost, and the
// informer sees every write without relisting. Then a second server joins,
// and Services created through both at once get distinct cluster IPs.
func TestLeaderLossOnATLSEtcdCluster(t *testing.T) {
	// Serial: its etcd members listen on ports that were free a moment
	// before (another test's server could take one).
	pki := newTestPKI(t, t.TempDir())
	cluster := startEtcdCluster(t, pki)
	onCluster := func(o *server.Options) {
		o.EtcdServers = cluster.endpoints
		o.EtcdCAFile, o.EtcdCertFile, o.EtcdKeyFile = pki.ca, pki.clientCert, pki.clientKey
	}
	s := testserver.Start(t, onCluster)
	client := kubernetes.NewForConfigOrDie(s.Config)
	configMaps := informertest.StartCountingInformers(t.Context(), t, client)[0]

	const writers, before, after = 8, 200, 200
	var (
		mu          sync.Mutex
		acked       []string
		killed      atomic.Bool
		since       atomic.Int64 // writes acknowledged since the kill
		killedAt    time.Time
		firstAfter  atomic.Int64 // when the first of them was, since the kill
		ctx, cancel = context.WithCancel(t.Context())
		wg          sync.WaitGroup
	)
	defer cancel()
	for w := range writers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("w%d-%05d", w, i)
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": name}}
				if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					select { // the election: back off a little, then the next name
					case <-ctx.Done():
					case <-time.After(10 * time.Millisecond):
					}
					continue
				}
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
				if killed.Load() && since.Add(1) == 1 {
					firstAfter.Store(int64(time.Since(killedAt)))
				}
			}
		})
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	framework.Poll(t, "the first writes", time.Minute, func() bool { return count() >= before })
	leader := cluster.leader(t)
	killedAt = time.Now()
	cluster.kill(leader)
	killed.Store(true)
	framework.Poll(t, "writes after the leader was killed", 2*time.Minute, func() bool { return since.Load() >= after })
	t.Logf("%d writes acknowledged; member %d, the leader, was killed; the first write after %s, the %dth after %s",
		count(), leader, time.Duration(firstAfter.Load()), after, time.Since(killedAt))
	cancel()
	wg.Wait()

	list, err := client.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, cm := range list.Items {
		stored[cm.Name] = true
	}
	for _, name := range acked {
		if !stored[name] {
			t.Errorf("acknowledged ConfigMap %s is lost", name)
		}
	}
	framework.Poll(t, "the informer to see every acknowledged write", time.Minute, func() bool {
		keys := configMaps.Informer.GetStore().ListKeys()
		for _, name := range acked {
			if !slices.Contains(keys, "default/"+name) {
				return false
			}
		}
		return true
	})
	if n := configMaps.Relists(); n != 0 {
		t.Errorf("the informer relisted %d times, want 0", n)
	}

	// A second instance on the cluster, after the election: Services
	// created through both at once get distinct cluster IPs.
	other := kubernetes.NewForConfigOrDie(testserver.Start(t, onCluster).Config)
	raceServiceCreates(t, []kubernetes.Interface{client, other}, 40)
}

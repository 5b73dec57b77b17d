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

package framework

import (
	"net/url"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// storagePaths are the two ways a server serves reads and watches: from its
// watch cache (the default) and straight from etcd (--watch-cache=false).
var storagePaths = []struct {
	name string
	opts func(*server.Options)
}{
	{"watchcache", func(o *server.Options) { o.WatchCache = true }},
	{"etcd", func(o *server.Options) { o.WatchCache = false }},
}

// ForEachStoragePath runs f as the subtests "watchcache" and "etcd", one
// after the other (f calls t.Parallel to run them at once); f passes path
// to Start (or testserver.Start) so its server serves that path.
func ForEachStoragePath(t *testing.T, f func(t *testing.T, path func(*server.Options))) {
	t.Helper()
	for _, p := range storagePaths {
		t.Run(p.name, func(t *testing.T) { f(t, p.opts) })
	}
}

// WatchCacheOn reports whether path selects the watch cache.
func WatchCacheOn(path func(*server.Options)) bool {
	o := server.NewOptions()
	path(o)
	return o.WatchCache
}

// Start starts an in-process server and returns it with a clientset.
func Start(t *testing.T, options ...func(*server.Options)) (*testserver.Server, kubernetes.Interface) {
	t.Helper()
	s := testserver.Start(t, options...)
	return s, kubernetes.NewForConfigOrDie(s.Config)
}

// WithoutControllers is the option that turns off the named in-server
// controllers, as --controllers=-name does. Tests that expect every write
// to an object to be theirs turn off the resource quota controller, which
// writes a ResourceQuota's status as soon as it is created.
func WithoutControllers(names ...string) func(*server.Options) {
	return func(o *server.Options) {
		for _, name := range names {
			o.Controllers = append([]string{"-" + name}, o.Controllers...)
		}
	}
}

// ServerPort is the port s serves on.
func ServerPort(t *testing.T, s *testserver.Server) int {
	t.Helper()
	u, err := url.Parse(s.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// ExternalEtcd starts an etcd of its own for servers to share (with
// progressNotifyInterval; 0 for the default), stopped after them when the
// test ends, and returns the option that points a server at it.
func ExternalEtcd(t *testing.T, progressNotifyInterval time.Duration) func(*server.Options) {
	t.Helper()
	etcd, err := storage.StartEtcd(t.Context(), storage.EtcdConfig{Dir: t.TempDir(), UnsafeNoFsync: true, ProgressNotifyInterval: progressNotifyInterval})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Close)
	return func(o *server.Options) { o.EtcdServers = []string{etcd.URL()} }
}

// CompactEtcd compacts s's etcd at its current revision as the servers'
// compactors do (etcd3.Compact records it in etcd's compaction key, which
// the etcd3 stores watch).
func CompactEtcd(t *testing.T, s *testserver.Server) {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: s.EtcdServers, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Get(t.Context(), "compact-probe")
	if err != nil {
		t.Fatal(err)
	}
	version, _, _, err := etcd3.Compact(t.Context(), c, 0, resp.Header.Revision)
	if err == nil && version != 1 { // the key was there: compact again with its version
		_, _, _, err = etcd3.Compact(t.Context(), c, version, resp.Header.Revision)
	}
	if err != nil {
		t.Fatal(err)
	}
}

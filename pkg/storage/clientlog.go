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

package storage

import (
	"fmt"
	"os"
	"time"
	_ "unsafe" // for go:linkname

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/klog/v2"

	// The package whose logger clientLogger names, initialised before
	// this one's init replaces it.
	_ "k8s.io/apiserver/pkg/storage/storagebackend/factory"
)

// clientLogger is the logger of every etcd client k8s.io/apiserver's
// storage factory makes: one for the whole process, which upstream sets to
// write JSON lines from info level up to standard error. Its clients warn
// at every request cancelled while it waits on etcd, as at every stop
// with requests in flight, so a test process with in-process servers got
// lines that no test asked for and no test's log held.
//
//go:linkname clientLogger k8s.io/apiserver/pkg/storage/storagebackend/factory.etcd3ClientLogger
var clientLogger *zap.Logger

// The factory's etcd clients log as the embedded etcd does (etcdLogger):
// errors only, everything with -v=4, to klog. There is one such logger for
// the process, so it is klog's global one, not a server's.
// ETCD_CLIENT_DEBUG, upstream's switch for these logs, keeps upstream's.
func init() {
	if os.Getenv("ETCD_CLIENT_DEBUG") != "" {
		return
	}
	clientLogger = zap.New(logrCore{LevelEnabler: clientLevel, logger: klog.Background().WithName("etcd-client")})
}

// clientLevel enables errors, and everything at -v=4 (read at each entry:
// the flags are parsed after init).
var clientLevel = zap.LevelEnablerFunc(func(l zapcore.Level) bool {
	return l >= zapcore.ErrorLevel || klog.V(4).Enabled()
})

// NewClient is an etcd client for t, as k8s.io/apiserver's storage makes
// its own (TLS from t's files), logging as they do.
func NewClient(t storagebackend.TransportConfig) (*clientv3.Client, error) {
	cfg := clientv3.Config{Endpoints: t.ServerList, DialTimeout: 20 * time.Second, Logger: clientLogger}
	if t.CertFile != "" || t.TrustedCAFile != "" {
		tlsConfig, err := transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.TrustedCAFile}.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd TLS: %w", err)
		}
		cfg.TLS = tlsConfig
	}
	return clientv3.New(cfg)
}

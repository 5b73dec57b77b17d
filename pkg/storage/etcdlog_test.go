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
	"errors"
	"os"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr/funcr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// TestEtcdLogsGoToTheServersLogger: etcd's errors reach the logger given
// (in tests, the test's own), with their fields; its info lines and the
// errors of its listeners closing at shutdown do not.
func TestEtcdLogsGoToTheServersLogger(t *testing.T) {
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{})
	closing := &atomic.Bool{}
	l := etcdLogger(logger, closing).Named("raft").With(zap.String("member", "m1"))
	l.Info("applied a snapshot")
	l.Error("failed to publish", zap.Error(errors.New("boom")))
	closing.Store(true)
	l.Error("setting up serving from embedded etcd failed.")
	want := []string{`etcd "msg"="failed to publish" "error"="boom" "member"="m1" "component"="raft"`}
	if !slices.Equal(lines, want) {
		t.Errorf("got %q, want %q", lines, want)
	}
}

// TestEtcdClientsLogErrorsOnly: the etcd clients of k8s.io/apiserver's
// storage factory log errors, not the warning they write at every request
// cancelled while it waits on etcd (upstream's logger writes both to
// standard error), unless ETCD_CLIENT_DEBUG asks for upstream's.
func TestEtcdClientsLogErrorsOnly(t *testing.T) {
	core := clientLogger.Core()
	if os.Getenv("ETCD_CLIENT_DEBUG") != "" {
		if !core.Enabled(zapcore.InfoLevel) {
			t.Error("with ETCD_CLIENT_DEBUG set, the clients' info lines are dropped; want upstream's logger")
		}
		return
	}
	if core.Enabled(zapcore.WarnLevel) {
		t.Error("the factory's etcd clients log warnings")
	}
	if !core.Enabled(zapcore.ErrorLevel) {
		t.Error("the factory's etcd clients drop errors")
	}
}

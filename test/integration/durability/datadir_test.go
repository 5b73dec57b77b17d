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
	"os"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestDataDirInUse starts a second server on the data dir of a running one,
// with embedded and with external etcd: it fails at once with an error naming
// the dir and the PID of the server using it (this process), where it used to
// hang forever. The running server is undisturbed, and once it has stopped
// the dir is free.
func TestDataDirInUse(t *testing.T) {
	// Serial: it measures how long the failing starts take.
	for _, tc := range []struct {
		name string
		etcd func(t *testing.T) func(*server.Options)
	}{
		{"embedded etcd", func(*testing.T) func(*server.Options) { return func(*server.Options) {} }},
		{"external etcd", func(t *testing.T) func(*server.Options) { return framework.ExternalEtcd(t, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			etcd := tc.etcd(t)
			s, client := framework.Start(t, etcd)
			want := fmt.Sprintf("data dir %s is in use by another miniapiserver (pid %d)", s.DataDir, os.Getpid())

			o := server.NewOptions()
			o.DataDir, o.SecurePort = s.DataDir, 0
			etcd(o)
			began := time.Now()
			cfg, err := o.Config()
			if took := time.Since(began); took > time.Second {
				t.Errorf("Config on a data dir in use took %s, want under 1s", took)
			}
			if err == nil {
				cfg.Close()
				t.Fatalf("Config on a data dir in use: got no error, want %q", want)
			}
			if err.Error() != want {
				t.Errorf("Config on a data dir in use: got %q, want %q", err, want)
			}

			if got := startFatal(t, func(o *server.Options) { etcd(o); o.DataDir = s.DataDir }); got != "testserver: "+want {
				t.Errorf("testserver.Start on a data dir in use: got Fatalf %q, want %q", got, "testserver: "+want)
			}

			if _, err := client.CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
				t.Errorf("the running server, after the failed starts: %v", err)
			}
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			cfg, err = o.Config()
			if err != nil {
				t.Fatalf("Config after the server stopped: %v", err)
			}
			cfg.Close()
		})
	}
}

// startFatal runs testserver.Start with a testing.TB whose Fatalf ends Start
// and is recorded, and returns what Start reported ("" if it succeeded).
func startFatal(t *testing.T, options ...func(*server.Options)) string {
	t.Helper()
	tb := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		testserver.Start(tb, options...)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("testserver.Start on a data dir in use: still running after 1s, want it to fail at once")
	}
	return tb.fatal
}

// fatalRecorder is the test's testing.TB, except that Fatalf records its
// message and ends only the calling goroutine.
type fatalRecorder struct {
	testing.TB
	fatal string // written before done is closed, read after
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

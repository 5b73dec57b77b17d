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
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// dialEnv makes the test binary a client that dials the unix socket it names
// and exits: TestEtcdIsClosedToOtherUsers runs it as another OS user.
const dialEnv = "MINIAPISERVER_TEST_DIAL"

func TestMain(m *testing.M) {
	if path := os.Getenv(dialEnv); path != "" {
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Print(err)
			os.Exit(3)
		}
		c.Close()
		fmt.Print("connected")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestEtcdIsClosedToOtherUsers: the embedded etcd serves clients on a unix
// socket in a 0700 directory and has no TCP listener at all (no client, no
// peer), so another local user cannot reach it past the API server. Run as
// root (as CI is), it also dials the socket as the user nobody and is refused.
func TestEtcdIsClosedToOtherUsers(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  string
	}{
		{"socket in the data dir", t.TempDir()},
		{"data dir path too long for a socket", filepath.Join(t.TempDir(), strings.Repeat("d", 120))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEtcd(t, tc.dir)
			defer e.Close()
			u, err := url.Parse(e.URL())
			if err != nil || u.Scheme != "unix" {
				t.Fatalf("got client URL %q (%v), want a unix socket", e.URL(), err)
			}
			for _, l := range e.etcd.Clients {
				if n := l.Addr().Network(); n != "unix" {
					t.Errorf("etcd has a client listener on %s %s, want unix only", n, l.Addr())
				}
			}
			if n := len(e.etcd.Peers); n != 0 {
				t.Errorf("etcd has %d peer listeners, want none", n)
			}
			fi, err := os.Stat(filepath.Dir(u.Path))
			if err != nil {
				t.Fatal(err)
			}
			if perm := fi.Mode().Perm(); perm != 0o700 {
				t.Errorf("the socket's directory has mode %o, want 700", perm)
			}
			c := client(t, e)
			if _, err := c.Put(t.Context(), "/k", "v"); err != nil {
				t.Fatalf("the server's own user: %v", err)
			}
			c.Close()
			if os.Geteuid() == 0 {
				if out, err := dialAsNobody(t, u.Path); err == nil || strings.Contains(out, "connected") || !strings.Contains(out, "permission denied") {
					t.Errorf("dialing the socket as nobody: %q, %v; want permission denied", out, err)
				}
			}
			e.Close()
			if _, err := os.Stat(u.Path); !os.IsNotExist(err) {
				t.Errorf("the socket is still there after Close: %v", err)
			}
		})
	}
}

// dialAsNobody runs a copy of the test binary (in a directory nobody may
// read) as the user nobody, dialing path.
func dialAsNobody(t *testing.T, path string) (string, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "dial-") // t.TempDir's parent is private
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dial")
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{dialEnv + "=" + path}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestFreshDataDirIsSmall: a new embedded etcd's data dir stays under
// 16 MiB (etcd's default WAL segments alone took 128 MB).
func TestFreshDataDirIsSmall(t *testing.T) {
	dir := t.TempDir()
	e := startEtcd(t, dir)
	defer e.Close()
	if _, err := client(t, e).Put(t.Context(), "/k", "v"); err != nil {
		t.Fatal(err)
	}
	var size int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			size += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if size > 16<<20 {
		t.Errorf("the data dir holds %d bytes after start, want at most 16 MiB", size)
	}
}

//go:build unix

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

package datadir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckOwned: a data dir and its trusted files must be the server
// user's, and the files writable by it alone; the planted-CA experiment
// (another user's dir holding a CA) is refused. Another user is played
// by checking against a uid that is not the files' owner.
func TestCheckOwned(t *testing.T) {
	me, someoneElse := os.Geteuid(), os.Geteuid()+1
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		uid   int
		want  string // "" for no error
	}{
		{name: "new, empty", uid: me},
		{name: "a server's own", uid: me, setup: func(t *testing.T, dir string) {
			if _, err := LoadOrCreateCredentials(dir, []string{"localhost"}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "another user's dir with a planted CA", uid: someoneElse, want: "belongs to user", setup: func(t *testing.T, dir string) {
			writeMode(t, filepath.Join(dir, caCertFile), 0o600)
			writeMode(t, filepath.Join(dir, caKeyFile), 0o600)
		}},
		{name: "a key writable by others", uid: me, want: "ca.key is writable by others", setup: func(t *testing.T, dir string) {
			writeMode(t, filepath.Join(dir, caKeyFile), 0o666)
		}},
		{name: "a token writable by the group", uid: me, want: "admin.token is writable by others", setup: func(t *testing.T, dir string) {
			writeMode(t, filepath.Join(dir, tokenFile), 0o620)
		}},
		{name: "a link for a key", uid: me, want: "refusing to trust it", setup: func(t *testing.T, dir string) {
			writeMode(t, filepath.Join(t.TempDir(), "elsewhere"), 0o600)
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, caKeyFile)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a file it does not trust", uid: me, setup: func(t *testing.T, dir string) {
			writeMode(t, filepath.Join(dir, "notes.txt"), 0o666)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			err := checkOwned(dir, tc.uid)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func writeMode(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

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
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCredentialsAreKeptAndReissuedWhenStale(t *testing.T) {
	dir := t.TempDir()
	hosts := []string{"localhost", "127.0.0.1"}
	first, err := LoadOrCreateCredentials(dir, hosts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreateCredentials(dir, hosts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.ServingCert, again.ServingCert) || first.AdminToken != again.AdminToken || !bytes.Equal(first.CACert, again.CACert) {
		t.Error("credentials changed on a second start with the same hosts")
	}
	if !covers(first.ServingCert, first.CACert, hosts) {
		t.Error("serving cert does not cover its own hosts")
	}

	// A new host needs a new serving cert from the same CA.
	wider, err := LoadOrCreateCredentials(dir, append(hosts, "10.1.2.3"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(wider.ServingCert, first.ServingCert) || !bytes.Equal(wider.CACert, first.CACert) {
		t.Error("got the old serving cert (or a new CA) for a new host, want a new cert from the same CA")
	}

	// A new CA (its key was lost) invalidates the serving cert it did not sign.
	if err := os.Remove(filepath.Join(dir, caKeyFile)); err != nil {
		t.Fatal(err)
	}
	fresh, err := LoadOrCreateCredentials(dir, hosts)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(fresh.CACert, first.CACert) || !covers(fresh.ServingCert, fresh.CACert, hosts) {
		t.Error("after losing the CA key: want a new CA and a serving cert it signed")
	}
}

func TestAdminTokenFileWrittenByHand(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		want    string // the token read, when wantErr is empty
		wantErr string
	}{
		{name: "echo adds a newline", content: "mytoken\n", want: "mytoken"},
		{name: "spaces and CRLF around it", content: "  mytoken \r\n", want: "mytoken"},
		{name: "empty", content: "", wantErr: "is empty"},
		{name: "blank line", content: "\n", wantErr: "is empty"},
		{name: "two words", content: "my token\n", wantErr: "contains whitespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tokenFile)
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			creds, err := LoadOrCreateCredentials(dir, []string{"localhost"})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("got %v, want an error naming %s that contains %q", err, path, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if creds.AdminToken != tc.want {
				t.Errorf("got token %q, want %q", creds.AdminToken, tc.want)
			}
		})
	}
}

func TestDamagedCredentialFilesAreNamed(t *testing.T) {
	hosts := []string{"localhost"}
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, dir string) // leaves the file at fault
		file    string
		wantErr string
	}{
		{name: "truncated CA key", file: caKeyFile, wantErr: "holds no PEM key", damage: truncateHalf(caKeyFile)},
		{name: "truncated CA certificate", file: caCertFile, wantErr: "holds no PEM certificate", damage: truncateHalf(caCertFile)},
		{name: "truncated serving key", file: servingKeyFile, wantErr: "holds no PEM key", damage: truncateHalf(servingKeyFile)},
		{name: "garbage in a PEM serving key", file: servingKeyFile, wantErr: "is damaged", damage: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, servingKeyFile), "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n")
		}},
		{name: "serving key of another certificate", file: servingKeyFile, wantErr: "does not match certificate", damage: func(t *testing.T, dir string) {
			b, err := os.ReadFile(filepath.Join(dir, caKeyFile))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, servingKeyFile), string(b))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := LoadOrCreateCredentials(dir, hosts); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, dir)
			path := filepath.Join(dir, tc.file)
			damaged, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = LoadOrCreateCredentials(dir, hosts)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want an error naming %s that contains %q", err, path, tc.wantErr)
			}
			if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, damaged) {
				t.Errorf("the damaged %s was overwritten (err %v)", tc.file, err)
			}
		})
	}
}

func truncateHalf(name string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, fi.Size()/2); err != nil {
			t.Fatal(err)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

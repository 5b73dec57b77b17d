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
	"crypto/x509"
	"os"
	"testing"
)

// TestFrontProxyIsKeptAndReissuedWhenStale: the front proxy's CA and
// client certificate are made once and kept; a client certificate of
// another CA is issued anew.
func TestFrontProxyIsKeptAndReissuedWhenStale(t *testing.T) {
	dir := t.TempDir()
	first, err := LoadOrCreateCredentials(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	fp := first.FrontProxy
	cert, err := os.ReadFile(fp.ClientCertFile)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(fp.CACert, first.CACert) || !validFor(cert, fp.CACert, x509.ExtKeyUsageClientAuth, nil) || validFor(cert, first.CACert, x509.ExtKeyUsageClientAuth, nil) {
		t.Fatal("the front proxy's client certificate is not one of its own CA's only")
	}
	again, err := LoadOrCreateCredentials(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if kept, _ := os.ReadFile(fp.ClientCertFile); !bytes.Equal(again.FrontProxy.CACert, fp.CACert) || !bytes.Equal(kept, cert) {
		t.Error("the front proxy's CA or client certificate changed on a second start")
	}

	// A client certificate the CA did not sign (the serving one) is replaced.
	if err := os.WriteFile(fp.ClientCertFile, first.ServingCert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fp.ClientKeyFile, first.ServingKey, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateCredentials(dir, nil); err != nil {
		t.Fatal(err)
	}
	if reissued, _ := os.ReadFile(fp.ClientCertFile); !validFor(reissued, fp.CACert, x509.ExtKeyUsageClientAuth, nil) {
		t.Error("a client certificate of another CA was kept")
	}
	rh, err := fp.RequestHeader()
	if err != nil || rh.UIDHeaders == nil || rh.AllowedClientNames.Value()[0] != FrontProxyClientName {
		t.Errorf("RequestHeader: got %+v, %v; want every header list set, and %s allowed", rh, err, FrontProxyClientName)
	}
}

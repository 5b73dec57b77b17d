package server

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestCredentialsAreKeptAndReissuedWhenStale(t *testing.T) {
	dir := t.TempDir()
	hosts := []string{"localhost", "127.0.0.1"}
	first, err := loadOrCreateCredentials(dir, hosts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadOrCreateCredentials(dir, hosts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.servingCert, again.servingCert) || first.adminToken != again.adminToken || !bytes.Equal(first.caCert, again.caCert) {
		t.Error("credentials changed on a second start with the same hosts")
	}
	if !covers(first.servingCert, first.caCert, hosts) {
		t.Error("serving cert does not cover its own hosts")
	}

	// A new host needs a new serving cert from the same CA.
	wider, err := loadOrCreateCredentials(dir, append(hosts, "10.1.2.3"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(wider.servingCert, first.servingCert) || !bytes.Equal(wider.caCert, first.caCert) {
		t.Error("got the old serving cert (or a new CA) for a new host, want a new cert from the same CA")
	}

	// A new CA (its key was lost) invalidates the serving cert it did not sign.
	if err := os.Remove(filepath.Join(dir, caKeyFile)); err != nil {
		t.Fatal(err)
	}
	fresh, err := loadOrCreateCredentials(dir, hosts)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(fresh.caCert, first.caCert) || !covers(fresh.servingCert, fresh.caCert, hosts) {
		t.Error("after losing the CA key: want a new CA and a serving cert it signed")
	}
}

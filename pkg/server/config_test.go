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

package server

import (
	"strings"
	"testing"
)

func TestConfigLocksTheDataDirUntilClose(t *testing.T) {
	o := NewOptions()
	o.DataDir = t.TempDir()
	o.SecurePort = 0
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Config(); err == nil || !strings.Contains(err.Error(), "is in use by another miniapiserver") {
		t.Fatalf("second Config on the same data dir: got %v, want it in use", err)
	}
	if err := cfg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	cfg, err = o.Config()
	if err != nil {
		t.Fatalf("Config after Close: %v", err)
	}
	cfg.Close()

	// A Config that fails after taking the lock releases it.
	o.BindAddress = "192.0.2.1" // TEST-NET-1: never a local address, so listening fails
	if _, err := o.Config(); err == nil || !strings.Contains(err.Error(), "listening on") {
		t.Fatalf("Config on an address not on this host: got %v, want a listen error", err)
	}
	o.BindAddress = "127.0.0.1"
	cfg, err = o.Config()
	if err != nil {
		t.Fatalf("Config after a failed Config: %v", err)
	}
	cfg.Close()
}

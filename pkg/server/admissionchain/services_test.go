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

package admissionchain

import (
	"net/url"
	"strings"
	"testing"
)

func TestServiceAddresses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      map[string]string
		wantErr string
	}{
		{"valid", map[string]string{"system/webhook-service:443": "127.0.0.1:9443"}, ""},
		{"no port", map[string]string{"system/webhook-service": "127.0.0.1:9443"}, `"system/webhook-service" is not namespace/name:port`},
		{"no namespace", map[string]string{"webhook-service:443": "127.0.0.1:9443"}, "is not namespace/name:port"},
		{"port out of range", map[string]string{"a/b:70000": "127.0.0.1:9443"}, "is not namespace/name:port"},
		{"address without a port", map[string]string{"a/b:443": "127.0.0.1"}, `address "127.0.0.1" is not host:port`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseServiceAddresses(tc.in)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("got %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
	s := ServiceAddresses{ServiceKey("system", "webhook-service", 443): "127.0.0.1:9443"}
	got, err := s.ResolveEndpoint("system", "webhook-service", 443)
	if err != nil || got.String() != (&url.URL{Scheme: "https", Host: "127.0.0.1:9443"}).String() {
		t.Errorf("ResolveEndpoint: %v, %v", got, err)
	}
	if _, err := s.ResolveEndpoint("system", "webhook-service", 8443); err == nil || !strings.Contains(err.Error(), "--webhook-service system/webhook-service:8443=HOST:PORT") {
		t.Errorf("an unmapped port: %v", err)
	}
}

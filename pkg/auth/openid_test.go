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

package auth

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"testing"
)

// upstream's test keys (k8s.io/kubernetes pkg/serviceaccount/jwt_test.go).
const (
	upstreamRSAPublicKey = `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA249XwEo9k4tM8fMxV7zx
OhcrP+WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt+ecI
zshKuv1gKIxbbLQMOuK1eA/4HALyEkFgmS/tleLJrhc65tKPMGD+pKQ/xhmzRuCG
51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJU
j7OTh/AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv+OrN80j6xrw0OjEi
B4Ycr0PqfzZcvy8efTtFQ/Jnc4Bp1zUtFXt7+QeevePtQ2EcyELXE0i63T1CujRM
WwIDAQAB
-----END PUBLIC KEY-----`
	upstreamECDSAPublicKey = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL
X2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==
-----END PUBLIC KEY-----`
)

// TestOpenIDMetadataAsUpstream: the documents of upstream's test keys are
// byte for byte those its test wants (TestServeKeys' "valid inputs",
// openidmetadata_test.go), and its bad inputs are refused.
func TestOpenIDMetadataAsUpstream(t *testing.T) {
	var keys []crypto.PublicKey
	for _, p := range []string{upstreamRSAPublicKey, upstreamECDSAPublicKey} {
		block, _ := pem.Decode([]byte(p))
		key, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key)
	}
	tokens := &ServiceAccountTokens{Issuers: []string{"https://issuer.example.com"}, PublicKeys: keys}
	m, err := tokens.OpenIDMetadata("https://issuer.example.com/openid/v1/jwks", "")
	if err != nil {
		t.Fatal(err)
	}
	config, err := m.Config()
	if want := `{"issuer":"https://issuer.example.com","jwks_uri":"https://issuer.example.com/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256","RS256"]}`; err != nil || string(config) != want {
		t.Errorf("Config: got %s, %v\nwant %s", config, err, want)
	}
	keyset, err := m.KeySet()
	if want := `{"keys":[{"use":"sig","kty":"RSA","kid":"JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU","alg":"RS256","n":"249XwEo9k4tM8fMxV7zxOhcrP-WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt-ecIzshKuv1gKIxbbLQMOuK1eA_4HALyEkFgmS_tleLJrhc65tKPMGD-pKQ_xhmzRuCG51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJUj7OTh_AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv-OrN80j6xrw0OjEiB4Ycr0PqfzZcvy8efTtFQ_Jnc4Bp1zUtFXt7-QeevePtQ2EcyELXE0i63T1CujRMWw","e":"AQAB"},{"use":"sig","kty":"EC","kid":"SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc","crv":"P-256","alg":"ES256","x":"H6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp_C_ASqiI","y":"BlHnikLV9PyEd6gl8k4T_3Wwoh6xd79XLoQTh2PAi1Y"}]}`; err != nil || string(keyset) != want {
		t.Errorf("KeySet: got %s, %v\nwant %s", keyset, err, want)
	}
	if m, err := tokens.OpenIDMetadata("", "192.0.2.1:6443"); err != nil || m.jwksURI != "https://192.0.2.1:6443/openid/v1/jwks" {
		t.Errorf("the JWKS URI from the external address: got %v", err)
	}
	for _, bad := range []struct{ issuer, jwksURI string }{
		{"http://issuer.example.com", ""}, {"https://issuer.example.com?q=1", ""}, {"https://issuer.example.com#f", ""},
		{"https://issuer.example.com", "http://issuer.example.com/jwks"}, {"", ""},
	} {
		if _, err := (&ServiceAccountTokens{Issuers: []string{bad.issuer}, PublicKeys: keys}).OpenIDMetadata(bad.jwksURI, "192.0.2.1:6443"); err == nil {
			t.Errorf("issuer %q, JWKS URI %q: no error", bad.issuer, bad.jwksURI)
		}
	}
}

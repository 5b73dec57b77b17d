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

package secret

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, a TLS secret whose key pair does
// not load is warned of, in crypto/tls's words.
func TestWarnings(t *testing.T) {
	secret := func(typ corev1.SecretType) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}, Type: typ,
			Data: map[string][]byte{corev1.TLSCertKey: []byte("x"), corev1.TLSPrivateKeyKey: []byte("y")}}
	}
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "secrets"), []registrytest.WarningCase{
		{Name: "tls", Obj: secret(corev1.SecretTypeTLS), Want: []string{"tls: failed to find any PEM data in certificate input"}},
		{Name: "tls update", Obj: secret(corev1.SecretTypeTLS), Old: secret(corev1.SecretTypeTLS), Want: []string{"tls: failed to find any PEM data in certificate input"}},
		{Name: "opaque", Obj: secret(corev1.SecretTypeOpaque)},
	})
}

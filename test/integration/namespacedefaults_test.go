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

package integration

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestNamespaceDefaults: with namespace defaults (the binary's default),
// every namespace gets a default ServiceAccount and the kube-root-ca.crt
// ConfigMap with the server's CA, as kube-controller-manager gives it; both
// come back if deleted.
func TestNamespaceDefaults(t *testing.T) {
	s, client := start(t, testserver.WithNamespaceDefaults())
	ctx := t.Context()
	ns := createNamespace(t, client)
	for _, namespace := range []string{"default", "kube-system", ns} {
		poll(t, "the defaults of "+namespace, 30*time.Second, func() bool {
			_, saErr := client.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
			cm, cmErr := client.CoreV1().ConfigMaps(namespace).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			return saErr == nil && cmErr == nil && cm.Data["ca.crt"] == string(s.Config.CAData)
		})
	}
	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().ServiceAccounts(ns).Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the defaults to come back", 30*time.Second, func() bool {
		_, saErr := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		_, cmErr := client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return saErr == nil && cmErr == nil
	})
}

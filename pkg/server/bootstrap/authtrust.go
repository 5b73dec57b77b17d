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

package bootstrap

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
)

// authenticationInfo is kube-apiserver's kube-system ConfigMap of the
// cluster's authentication trust: controllers and extension API servers
// (k8s.io/apiserver's delegated authentication) read the client CA there,
// and kube-controller-manager and kube-scheduler fail without it.
const authenticationInfo = "extension-apiserver-authentication"

// AuthenticationInfo writes clientCA (PEM) into the
// authentication info ConfigMap's client-ca-file, as kube-apiserver's
// cluster-authentication-info controller does: the certificates already
// there stay (another server's, on the same etcd), expired ones (by five
// minutes) go, each once. Unlike that controller, it writes once per start
// and does not watch the ConfigMap; the server takes no request-header
// authentication, so the requestheader-* keys are left as they are.
func AuthenticationInfo(ctx context.Context, client kubernetes.Interface, clientCA []byte) error {
	configMaps := client.CoreV1().ConfigMaps(metav1.NamespaceSystem)
	return retryBootstrap(ctx, "kube-system/"+authenticationInfo, func(ctx context.Context) error {
		current, err := configMaps.Get(ctx, authenticationInfo, metav1.GetOptions{})
		found := err == nil
		if apierrors.IsNotFound(err) {
			current = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: authenticationInfo, Namespace: metav1.NamespaceSystem}}
		} else if err != nil {
			return err
		}
		bundle, err := combineCABundles(time.Now(), []byte(current.Data["client-ca-file"]), clientCA)
		if err != nil {
			return err
		}
		if current.Data["client-ca-file"] == string(bundle) {
			return nil
		}
		updated := current.DeepCopy()
		if updated.Data == nil {
			updated.Data = map[string]string{}
		}
		updated.Data["client-ca-file"] = string(bundle)
		if found {
			_, err = configMaps.Update(ctx, updated, metav1.UpdateOptions{})
		} else {
			_, err = configMaps.Create(ctx, updated, metav1.CreateOptions{})
		}
		return err
	})
}

// combineCABundles is the PEM bundle of the certificates in the bundles,
// in order, each once, without those expired over five minutes before
// now, as upstream's combineCertLists makes it.
func combineCABundles(now time.Time, bundles ...[]byte) ([]byte, error) {
	var certs []*x509.Certificate
	for _, b := range bundles {
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		parsed, err := certutil.ParseCertsPEM(b)
		if err != nil {
			return nil, err
		}
		for _, c := range parsed {
			if !c.NotAfter.After(now.Add(-5*time.Minute)) || slices.ContainsFunc(certs, func(o *x509.Certificate) bool { return o.Equal(c) }) {
				continue
			}
			certs = append(certs, c)
		}
	}
	var out bytes.Buffer
	for _, c := range certs {
		if err := pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

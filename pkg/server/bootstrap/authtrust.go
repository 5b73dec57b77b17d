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
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
)

// authenticationInfo is kube-apiserver's kube-system ConfigMap of the
// cluster's authentication trust: controllers and extension API servers
// (k8s.io/apiserver's delegated authentication) read the client CA there,
// and kube-controller-manager and kube-scheduler fail without it.
const authenticationInfo = "extension-apiserver-authentication"

// requestHeaderInfo is the server's request-header authentication
// (--requestheader-*) as AuthenticationInfo publishes it.
type requestHeaderInfo struct {
	CA                                                                           []byte // PEM
	UsernameHeaders, UIDHeaders, GroupHeaders, ExtraHeaderPrefixes, AllowedNames []string
}

// AuthenticationInfo writes clientCA's bundle into the authentication info
// ConfigMap's client-ca-file, and requestHeader (if set) into its
// requestheader-* keys, as kube-apiserver's cluster-authentication-info
// controller does: what is already there stays (another server's, on the
// same etcd) and what is added comes after it, each once; expired
// certificates (by five minutes) go. Unlike that controller, it writes
// once per start and does not watch the ConfigMap.
func AuthenticationInfo(ctx context.Context, client kubernetes.Interface, clientCA dynamiccertificates.CAContentProvider, requestHeader *authenticatorfactory.RequestHeaderConfig) error {
	var ca []byte
	if clientCA != nil {
		ca = clientCA.CurrentCABundleContent()
	}
	var rh *requestHeaderInfo
	if r := requestHeader; r != nil {
		rh = &requestHeaderInfo{CA: r.CAContentProvider.CurrentCABundleContent(), UsernameHeaders: r.UsernameHeaders.Value(),
			UIDHeaders: r.UIDHeaders.Value(), GroupHeaders: r.GroupHeaders.Value(), ExtraHeaderPrefixes: r.ExtraHeaderPrefixes.Value(),
			AllowedNames: r.AllowedClientNames.Value()}
	}
	configMaps := client.CoreV1().ConfigMaps(metav1.NamespaceSystem)
	return retryBootstrap(ctx, "kube-system/"+authenticationInfo, func(ctx context.Context) error {
		current, err := configMaps.Get(ctx, authenticationInfo, metav1.GetOptions{})
		found := err == nil
		if apierrors.IsNotFound(err) {
			current = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: authenticationInfo, Namespace: metav1.NamespaceSystem}}
		} else if err != nil {
			return err
		}
		data, err := authenticationInfoData(current.Data, ca, rh)
		if err != nil {
			return err
		}
		if maps.Equal(current.Data, data) {
			return nil
		}
		updated := current.DeepCopy()
		updated.Data = data
		if found {
			_, err = configMaps.Update(ctx, updated, metav1.UpdateOptions{})
		} else {
			_, err = configMaps.Create(ctx, updated, metav1.CreateOptions{})
		}
		return err
	})
}

// authenticationInfoData is the ConfigMap's data once the server's trust
// is added to data's, as upstream's getConfigMapDataFor writes it (the
// keys it knows, request-header lists as JSON).
func authenticationInfoData(data map[string]string, clientCA []byte, rh *requestHeaderInfo) (map[string]string, error) {
	if rh == nil {
		rh = &requestHeaderInfo{}
	}
	out := map[string]string{}
	now := time.Now()
	bundle, err := combineCABundles(now, []byte(data["client-ca-file"]), clientCA)
	if err != nil {
		return nil, err
	}
	if len(bundle) > 0 {
		out["client-ca-file"] = string(bundle)
	}
	if bundle, err = combineCABundles(now, []byte(data["requestheader-client-ca-file"]), rh.CA); err != nil || len(bundle) == 0 {
		return out, err
	}
	out["requestheader-client-ca-file"] = string(bundle)
	type list struct {
		key  string
		ours []string
	}
	lists := []list{
		{"requestheader-username-headers", rh.UsernameHeaders},
		{"requestheader-group-headers", rh.GroupHeaders},
		{"requestheader-extra-headers-prefix", rh.ExtraHeaderPrefixes},
		{"requestheader-allowed-names", rh.AllowedNames},
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.RemoteRequestHeaderUID) {
		lists = append(lists, list{"requestheader-uid-headers", rh.UIDHeaders})
	}
	for _, l := range lists {
		var existing []string
		if v := data[l.key]; v != "" {
			if err := json.Unmarshal([]byte(v), &existing); err != nil {
				return nil, fmt.Errorf("%s of kube-system/%s: %w", l.key, authenticationInfo, err)
			}
		}
		combined := []string{}
		for _, v := range slices.Concat(existing, l.ours) {
			if !slices.Contains(combined, v) {
				combined = append(combined, v)
			}
		}
		if l.key == "requestheader-uid-headers" && len(combined) == 0 {
			continue // upstream writes it only when there are some
		}
		b, err := json.Marshal(combined)
		if err != nil {
			return nil, err
		}
		out[l.key] = string(b)
	}
	return out, nil
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

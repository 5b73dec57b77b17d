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

package clustertrustbundle

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// certificatePEM is a self-signed certificate, a CA's if ca.
func certificatePEM(t testing.TB, ca bool) string {
	t.Helper()
	cert, _ := pkitest.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: "x"}, IsCA: ca, BasicConstraintsValid: ca})
	return string(cert)
}

func bundle(name, signer, trustBundle string) *certificatesv1.ClusterTrustBundle {
	return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: trustBundle}}
}

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "clustertrustbundles")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: certificatesv1.Resource("clustertrustbundles"), Singular: "clustertrustbundle"})
	if store.UpdateStrategy.AllowUnconditionalUpdate(t.Context()) {
		t.Errorf("AllowUnconditionalUpdate: got true, want false (upstream's)")
	}
	registrytest.CheckFields(t, store, bundle("example.com:s:b", "example.com/s", ""), fields.Set{"metadata.name": "example.com:s:b", "spec.signerName": "example.com/s"})
}

// The messages are kube-apiserver 1.37.2's for the same requests.
func TestCreateMessages(t *testing.T) {
	ca := certificatePEM(t, true)
	tests := []struct {
		name   string
		bundle *certificatesv1.ClusterTrustBundle
		want   string
	}{
		{name: "valid", bundle: bundle("b1", "", ca)},
		{name: "valid, with a signer", bundle: bundle("example.com:signer:b1", "example.com/signer", ca)},
		{name: "a colon without a signer", bundle: bundle("a:b", "", ca),
			want: `ClusterTrustBundle.certificates.k8s.io "a:b" is invalid: metadata.name: Invalid value: "a:b": ClusterTrustBundle without signer name must not have ":" in its name`},
		{name: "no prefix", bundle: bundle("b1", "example.com/signer", ca),
			want: `ClusterTrustBundle.certificates.k8s.io "b1" is invalid: metadata.name: Invalid value: "b1": ClusterTrustBundle for signerName example.com/signer must be named with prefix example.com:signer:`},
		{name: "bad signer", bundle: bundle("b1", "example", ca),
			want: `ClusterTrustBundle.certificates.k8s.io "b1" is invalid: [metadata.name: Invalid value: "b1": ClusterTrustBundle for signerName example must be named with prefix example:, ` +
				`spec.signerName: Invalid value: "example": must be a fully qualified domain and path of the form 'example.com/signer-name']`},
		{name: "not a CA", bundle: bundle("b1", "", certificatePEM(t, false)),
			want: `ClusterTrustBundle.certificates.k8s.io "b1" is invalid: spec.trustBundle: Invalid value: "<value omitted>": entry 0 does not have the CA bit set`},
		{name: "empty", bundle: bundle("b1", "", ""),
			want: `ClusterTrustBundle.certificates.k8s.io "b1" is invalid: spec.trustBundle: Invalid value: "<value omitted>": at least one trust anchor must be provided`},
		{name: "not PEM", bundle: bundle("b1", "", "garbage"),
			want: `ClusterTrustBundle.certificates.k8s.io "b1" is invalid: spec.trustBundle: Invalid value: "<value omitted>": at least one trust anchor must be provided`},
		{name: "twice", bundle: bundle("b1", "", ca+ca),
			want: `ClusterTrustBundle.certificates.k8s.io "b1" is invalid: spec.trustBundle: Invalid value: "<value omitted>": duplicate trust anchor (indices [0 1])`},
		{name: "another block", bundle: bundle("b1", "", "-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n"),
			want: `ClusterTrustBundle.certificates.k8s.io "b1" is invalid: spec.trustBundle: Invalid value: "<value omitted>": entry 0 has bad block type: FOO`},
		{name: "too long", bundle: bundle("b1", "", strings.Repeat("x", maxTrustBundleSize+1)),
			want: `ClusterTrustBundle.certificates.k8s.io "b1" is invalid: spec.trustBundle: Too long: may not be more than 1048576 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			storages := registrytest.Storages(t, NewStorage, "clustertrustbundles", "clustertrustbundles")
			ctx := genericapirequest.WithNamespace(context.Background(), metav1.NamespaceNone)
			_, err := storages["clustertrustbundles"].(rest.Creater).Create(ctx, tt.bundle, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("create: got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestUpdateMessages(t *testing.T) {
	ca := certificatePEM(t, true)
	tests := []struct {
		name   string
		mutate func(*certificatesv1.ClusterTrustBundle)
		want   string
	}{
		{name: "labels", mutate: func(b *certificatesv1.ClusterTrustBundle) { b.Labels = map[string]string{"a": "b"} }},
		{name: "another signer", mutate: func(b *certificatesv1.ClusterTrustBundle) { b.Spec.SignerName = "example.com/other" },
			want: `ClusterTrustBundle.certificates.k8s.io "example.com:signer:b1" is invalid: [metadata.name: Invalid value: "example.com:signer:b1": ` +
				`ClusterTrustBundle for signerName example.com/other must be named with prefix example.com:other:, spec.signerName: Invalid value: "example.com/other": field is immutable]`},
		{name: "a bundle of two", mutate: func(b *certificatesv1.ClusterTrustBundle) { b.Spec.TrustBundle += certificatePEM(t, true) }},
		{name: "no resourceVersion", mutate: func(b *certificatesv1.ClusterTrustBundle) { b.ResourceVersion = "" },
			want: `clustertrustbundles.certificates.k8s.io "example.com:signer:b1" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := registrytest.NewMemStorage()
			storages, err := NewStorage(mem.Options("clustertrustbundles"))
			if err != nil {
				t.Fatal(err)
			}
			ctx := genericapirequest.WithNamespace(context.Background(), metav1.NamespaceNone)
			key, err := storages["clustertrustbundles"].(*registry.REST).KeyFunc(ctx, "example.com:signer:b1")
			if err != nil {
				t.Fatal(err)
			}
			stored := mem.Seed(t, key, bundle("example.com:signer:b1", "example.com/signer", ca)).(*certificatesv1.ClusterTrustBundle)
			tt.mutate(stored)
			_, err = registrytest.Update(ctx, storages, "clustertrustbundles", false, stored.Name, stored)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("update: got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestTable: upstream's columns, NAME and SIGNERNAME.
func TestTable(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "clustertrustbundles")
	for _, tt := range []struct {
		bundle *certificatesv1.ClusterTrustBundle
		want   []any
	}{
		{bundle("example.com:s:b", "example.com/s", ""), []any{"example.com:s:b", "example.com/s"}},
		{bundle("b", "", ""), []any{"b", "<none>"}},
	} {
		table, err := store.ConvertToTable(t.Context(), tt.bundle, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
			t.Errorf("cells (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"Name", "SignerName"}, registrytest.ColumnNames(table)); diff != "" {
			t.Errorf("columns (-want +got):\n%s", diff)
		}
	}
}

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

package csrsigning

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// newCA returns a CA's certificate and key (PEM), valid from an hour
// before now until end.
func newCA(t *testing.T, now, end time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	ca := pkitest.NewCA(t, "test-ca", pkitest.Valid(now.Add(-time.Hour), end))
	return ca.CertPEM(), ca.KeyPEM()
}

func condition(t certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue}
}

// start runs a controller over client with the CA until the test ends.
func start(t *testing.T, client kubernetes.Interface, caCert, caKey []byte, now time.Time) {
	t.Helper()
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(Config{Client: client.CertificatesV1(), Informer: factory.Certificates().V1().CertificateSigningRequests(),
		CACert: caCert, CAKey: caKey, Clock: clocktesting.NewFakePassiveClock(now)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	factory.Start(ctx.Done())
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; factory.Shutdown() })
}

// settled waits until the request name has a certificate or a Failed
// condition, and returns it.
func settled(t *testing.T, client kubernetes.Interface, name string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	var csr *certificatesv1.CertificateSigningRequest
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		csr, err = client.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		return err == nil && (len(csr.Status.Certificate) > 0 || hasTrueCondition(csr, certificatesv1.CertificateFailed)), err
	})
	if err != nil {
		t.Fatalf("request %s neither signed nor failed: %v", name, err)
	}
	return csr
}

func TestSigns(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	caCert, caKey := newCA(t, now, now.AddDate(10, 0, 0))
	tests := []struct {
		name        string
		signer      string
		subject     *x509.CertificateRequest
		usages      []certificatesv1.KeyUsage
		expiration  *int32
		wantFailure string
		wantEnd     time.Time
		wantKeyUse  x509.KeyUsage
		wantExt     []x509.ExtKeyUsage
	}{
		{name: "a client of the API server, a year", signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: &x509.CertificateRequest{Subject: pkix.Name{CommonName: "bob", Organization: []string{"dev", "ops"}}},
			usages:  []certificatesv1.KeyUsage{"client auth", "digital signature"}, wantEnd: now.Add(365*24*time.Hour - 5*time.Minute),
			wantKeyUse: x509.KeyUsageDigitalSignature, wantExt: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{name: "an hour asked for: a short one, not backdated", signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: &x509.CertificateRequest{Subject: pkix.Name{CommonName: "bob"}}, usages: []certificatesv1.KeyUsage{"client auth"},
			expiration: ptr.To[int32](3600), wantEnd: now.Add(time.Hour), wantExt: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{name: "a day asked for", signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: &x509.CertificateRequest{Subject: pkix.Name{CommonName: "bob"}}, usages: []certificatesv1.KeyUsage{"client auth", "key encipherment"},
			expiration: ptr.To[int32](86400), wantEnd: now.Add(24*time.Hour - 5*time.Minute),
			wantKeyUse: x509.KeyUsageKeyEncipherment, wantExt: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{name: "server auth from the client signer", signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: &x509.CertificateRequest{Subject: pkix.Name{CommonName: "bob"}}, usages: []certificatesv1.KeyUsage{"client auth", "server auth"},
			wantFailure: "invalid usage for client certificate: server auth"},
		{name: "no client auth", signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: &x509.CertificateRequest{Subject: pkix.Name{CommonName: "bob"}}, usages: []certificatesv1.KeyUsage{"digital signature"},
			wantFailure: "missing required usage for client certificate: client auth"},
		{name: "a kubelet's serving certificate", signer: certificatesv1.KubeletServingSignerName,
			subject: &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}},
				DNSNames: []string{"n1"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}},
			usages: []certificatesv1.KeyUsage{"server auth", "digital signature"}, wantEnd: now.Add(365*24*time.Hour - 5*time.Minute),
			wantKeyUse: x509.KeyUsageDigitalSignature, wantExt: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		{name: "a kubelet's serving certificate without a name", signer: certificatesv1.KubeletServingSignerName,
			subject: &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}},
			usages:  []certificatesv1.KeyUsage{"server auth", "digital signature"}, wantFailure: "DNS or IP subjectAltName is required"},
		{name: "a kubelet's client certificate with too many usages", signer: certificatesv1.KubeAPIServerClientKubeletSignerName,
			subject:     &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}},
			usages:      []certificatesv1.KeyUsage{"client auth", "digital signature", "server auth"},
			wantFailure: "usages did not match [client auth digital signature key encipherment]"},
		{name: "a kubelet's client certificate of no node", signer: certificatesv1.KubeAPIServerClientKubeletSignerName,
			subject: &x509.CertificateRequest{Subject: pkix.Name{CommonName: "bob", Organization: []string{"dev"}}},
			usages:  []certificatesv1.KeyUsage{"client auth", "digital signature"}, wantFailure: "subject organization is not system:nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			request, _ := pkitest.Request(t, tt.subject)
			csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr"},
				Spec:   certificatesv1.CertificateSigningRequestSpec{Request: request, SignerName: tt.signer, Usages: tt.usages, ExpirationSeconds: tt.expiration},
				Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{condition(certificatesv1.CertificateApproved)}}}
			client := fake.NewClientset(csr)
			start(t, client, caCert, caKey, now)
			got := settled(t, client, "csr")
			if tt.wantFailure != "" {
				want := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue,
					Reason: "SignerValidationFailure", Message: tt.wantFailure, LastUpdateTime: metav1.NewTime(now)}
				if diff := cmp.Diff([]certificatesv1.CertificateSigningRequestCondition{condition(certificatesv1.CertificateApproved), want}, got.Status.Conditions); diff != "" {
					t.Errorf("conditions (-want +got):\n%s", diff)
				}
				if len(got.Status.Certificate) > 0 {
					t.Errorf("a failed request got a certificate")
				}
				return
			}
			cert := parseCertificate(t, got.Status.Certificate)
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(caCert)
			if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
				t.Errorf("certificate does not chain to the CA: %v", err)
			}
			if cert.Subject.String() != tt.subject.Subject.String() || !cmp.Equal(cert.DNSNames, tt.subject.DNSNames) || len(cert.IPAddresses) != len(tt.subject.IPAddresses) {
				t.Errorf("subject and names: got %s %v %v, want the request's %s %v %v", cert.Subject, cert.DNSNames, cert.IPAddresses,
					tt.subject.Subject, tt.subject.DNSNames, tt.subject.IPAddresses)
			}
			if !cert.NotBefore.Equal(now.Add(-5*time.Minute)) || !cert.NotAfter.Equal(tt.wantEnd) {
				t.Errorf("validity: got %v to %v, want %v to %v", cert.NotBefore, cert.NotAfter, now.Add(-5*time.Minute), tt.wantEnd)
			}
			if cert.KeyUsage != tt.wantKeyUse || !cmp.Equal(cert.ExtKeyUsage, tt.wantExt) || cert.IsCA {
				t.Errorf("usages: got %v %v (CA %v), want %v %v", cert.KeyUsage, cert.ExtKeyUsage, cert.IsCA, tt.wantKeyUse, tt.wantExt)
			}
		})
	}
}

func parseCertificate(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("status.certificate is no PEM: %q", certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TestLeavesAlone: a request that is pending, denied, failed, signed or
// of another signer is not signed. A request that is signed is the last
// one created: the others are seen before it.
func TestLeavesAlone(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	caCert, caKey := newCA(t, now, now.AddDate(1, 0, 0))
	csr := func(name, signer string, conditions ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
		request, _ := pkitest.Request(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}})
		c := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: request,
				SignerName: signer, Usages: []certificatesv1.KeyUsage{"client auth"}}}
		for _, t := range conditions {
			c.Status.Conditions = append(c.Status.Conditions, condition(t))
		}
		return c
	}
	const client = certificatesv1.KubeAPIServerClientSignerName
	alone := []*certificatesv1.CertificateSigningRequest{
		csr("pending", client), csr("denied", client, "Denied"), csr("approved-and-denied", client, "Approved", "Denied"),
		csr("failed", client, "Approved", "Failed"), csr("other-signer", "example.com/mine", "Approved"),
	}
	fakeClient := fake.NewClientset()
	for _, c := range alone {
		if _, err := fakeClient.CertificatesV1().CertificateSigningRequests().Create(t.Context(), c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start(t, fakeClient, caCert, caKey, now)
	if _, err := fakeClient.CertificatesV1().CertificateSigningRequests().Create(t.Context(), csr("last", client, "Approved"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	settled(t, fakeClient, "last")
	for _, c := range alone {
		got, err := fakeClient.CertificatesV1().CertificateSigningRequests().Get(t.Context(), c.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.Status, got.Status); diff != "" {
			t.Errorf("%s: status (-want +got):\n%s", c.Name, diff)
		}
	}
}

func TestDuration(t *testing.T) {
	a := &authority{maxTTL: 24 * time.Hour}
	for _, tt := range []struct {
		seconds *int32
		want    time.Duration
	}{
		{nil, 24 * time.Hour},
		{ptr.To[int32](600), 10 * time.Minute},
		{ptr.To[int32](7200), 2 * time.Hour},
		{ptr.To[int32](86401), 24 * time.Hour},
		{ptr.To[int32](60), 10 * time.Minute},
	} {
		if got := a.duration(tt.seconds); got != tt.want {
			t.Errorf("duration(%v): got %v, want %v", ptr.Deref(tt.seconds, -1), got, tt.want)
		}
	}
}

func TestKeyUsages(t *testing.T) {
	ku, ext, err := keyUsages([]certificatesv1.KeyUsage{"server auth", "signing", "digital signature", "client auth", "server auth", "cert sign"})
	if err != nil || ku != x509.KeyUsageDigitalSignature|x509.KeyUsageCertSign || !cmp.Equal(ext, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}) {
		t.Errorf("got %v %v %v, want digital signature and cert sign, server and client auth", ku, ext, err)
	}
	if _, _, err := keyUsages([]certificatesv1.KeyUsage{"bogus", "client auth"}); err == nil || err.Error() != `unrecognized usage values: ["bogus"]` {
		t.Errorf("got error %v, want upstream's for an unknown usage", err)
	}
}

func TestNew(t *testing.T) {
	_, err := New(Config{})
	want := "csrsigning: Client is required\ncsrsigning: Informer is required\ncsrsigning: CACert and CAKey: no PEM certificate"
	if err == nil || err.Error() != want {
		t.Errorf("New(Config{}): got %v, want %q", err, want)
	}
}

// TestSignWithinTheCA: no certificate outlives its CA, and an expired CA
// signs none.
func TestSignWithinTheCA(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	caEnd := now.Add(48 * time.Hour)
	caCert, caKey := newCA(t, now, caEnd)
	a, err := parseCA(caCert, caKey)
	if err != nil {
		t.Fatal(err)
	}
	request, _ := pkitest.Request(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "bob"}})
	req, err := parseRequest(request)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := a.sign(req, []certificatesv1.KeyUsage{"client auth"}, 365*24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	if end := parseCertificate(t, certPEM).NotAfter; !end.Equal(caEnd) {
		t.Errorf("NotAfter: got %v, want the CA's %v", end, caEnd)
	}
	_, err = a.sign(req, []certificatesv1.KeyUsage{"client auth"}, time.Hour, caEnd.Add(time.Hour))
	if want := "the signer has expired: NotAfter=" + caEnd.UTC().String(); err == nil || err.Error() != want {
		t.Errorf("signing after the CA's end: got %v, want %q", err, want)
	}
}

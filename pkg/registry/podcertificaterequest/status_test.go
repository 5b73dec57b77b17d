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

package podcertificaterequest

import (
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// updateStatus seeds old, then writes its status as user (none if ""),
// changed by change, with authz and a clock at now.
func updateStatus(t *testing.T, authz signers, now time.Time, username string, old *certificatesv1.PodCertificateRequest,
	change func(*certificatesv1.PodCertificateRequest)) (*certificatesv1.PodCertificateRequest, error) {
	t.Helper()
	ctx, storages, stored := registrytest.Seeded(t, newStorage(authz, clocktesting.NewFakePassiveClock(now)), "podcertificaterequests", old)
	if username != "" {
		ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: username})
	}
	out, err := registrytest.Update(ctx, storages, "podcertificaterequests", true, stored.Name, registrytest.Modified(stored, change))
	got, _ := out.(*certificatesv1.PodCertificateRequest)
	return got, err
}

// The messages are upstream's StatusStrategy.ValidateUpdate's (and
// ValidatePodCertificateRequestStatusUpdate's), as kube-apiserver 1.37
// reports them; a want ending in "…" is a prefix, one starting with it a
// suffix (the value shown is a certificate or a time).
func TestStatusUpdateMessages(t *testing.T) {
	key, other := newKey(t), newKey(t)
	now := time.Now().Truncate(time.Second)
	notBefore := now.Add(-time.Minute)
	chain := certificate(t, key, notBefore, 2*time.Hour)
	issuedReq := request(t, key)
	issuedReq.Status = issued(chain, notBefore, 2*time.Hour)
	const prefix = `PodCertificateRequest.certificates.k8s.io "r1" is invalid: `
	setStatus := func(s certificatesv1.PodCertificateRequestStatus) func(*certificatesv1.PodCertificateRequest) {
		return func(r *certificatesv1.PodCertificateRequest) { r.Status = s }
	}
	withConditions := func(conditions ...metav1.Condition) func(*certificatesv1.PodCertificateRequest) {
		return func(r *certificatesv1.PodCertificateRequest) { r.Status.Conditions = conditions }
	}
	issuedWithoutTimes := issued(chain, notBefore, 2*time.Hour)
	issuedWithoutTimes.NotBefore, issuedWithoutTimes.NotAfter, issuedWithoutTimes.BeginRefreshAt = nil, nil, nil
	tests := []struct {
		name   string
		authz  signers
		user   string
		clock  time.Time
		old    *certificatesv1.PodCertificateRequest
		change func(*certificatesv1.PodCertificateRequest)
		want   string
	}{
		{name: "issued by a signer", authz: signers{signer: true}, change: setStatus(issued(chain, notBefore, 2*time.Hour))},
		{name: "denied by the signer's domain", authz: signers{"example.com/*": true},
			change: withConditions(condition(certificatesv1.PodCertificateRequestConditionTypeDenied))},
		{name: "issued by a user who may not sign", change: setStatus(issued(chain, notBefore, 2*time.Hour)),
			want: prefix + `spec.signerName: Forbidden: User "bob" is not permitted to "sign" for signer "example.com/signer"`},
		{name: "no change, by a user who may not sign", change: func(*certificatesv1.PodCertificateRequest) {}},
		{name: "no user", user: "-", change: withConditions(condition(certificatesv1.PodCertificateRequestConditionTypeFailed)),
			want: prefix + `spec.signerName: Internal error: cannot determine calling user to perform "sign" check`},
		{name: "denied with a chain", change: func(r *certificatesv1.PodCertificateRequest) {
			r.Status = certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{condition(certificatesv1.PodCertificateRequestConditionTypeDenied)}, CertificateChain: chain}
		}, want: prefix + `status: Invalid value: non-condition status fields must be empty when denying or failing the PodCertificateRequest`},
		{name: "two terminal conditions", change: withConditions(condition(certificatesv1.PodCertificateRequestConditionTypeFailed), condition(certificatesv1.PodCertificateRequestConditionTypeDenied)),
			want: prefix + `status.conditions.[1].type: Invalid value: "Denied": There may be at most one condition with type "Issued", "Denied", or "Failed"`},
		{name: "a False condition", change: withConditions(metav1.Condition{Type: "Failed", Status: metav1.ConditionFalse, Reason: "R", LastTransitionTime: metav1.Now()}),
			want: prefix + `status.conditions.[0].status: Unsupported value: "False": supported values: "True"`},
		{name: "another condition", change: withConditions(metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.Now()}),
			want: prefix + `status.conditions.[0].type: Unsupported value: "Ready": supported values: "Issued", "Denied", "Failed"`},
		{name: "a chain without a condition", change: func(r *certificatesv1.PodCertificateRequest) { r.Status.CertificateChain = chain },
			want: prefix + `status: Invalid value: status is immutable unless transitioning to "Issued", "Denied", or "Failed"`},
		{name: "changed once issued", authz: signers{signer: true}, old: issuedReq, change: withConditions(condition(certificatesv1.PodCertificateRequestConditionTypeFailed)),
			want: prefix + `status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed`},
		{name: "a certificate of another key", change: setStatus(issued(certificate(t, other, notBefore, 2*time.Hour), notBefore, 2*time.Hour)),
			want: "…: leaf certificate was not issued to the requested public key"},
		{name: "not a certificate", change: setStatus(issued("garbage", notBefore, 2*time.Hour)),
			want: prefix + `status.certificateChain: Invalid value: "garbage": issued certificate chain must contain at least one certificate`},
		{name: "no times", change: setStatus(issuedWithoutTimes),
			want: prefix + `[status.notBefore: Required value: must be present and consistent with the issued certificate, ` +
				`status.notAfter: Required value: must be present and consistent with the issued certificate, ` +
				`status.beginRefreshAt: Required value: must be present and in the range [notbefore+10min, notafter-10min]]`},
		{name: "notBefore far from the clock", clock: now.Add(time.Hour), change: setStatus(issued(chain, notBefore, 2*time.Hour)),
			want: "…: must be set to within 5 minutes of kube-apiserver's current time"},
		{name: "notAfter not the certificate's", change: setStatus(issued(chain, notBefore, 3*time.Hour)),
			want: "…: must be set to the NotAfter time encoded in the leaf certificate"},
		{name: "shorter than an hour", change: setStatus(issued(certificate(t, key, notBefore, 30*time.Minute), notBefore, 30*time.Minute)),
			want: prefix + `status.certificateChain: Invalid value: 1800000000000: leaf certificate lifetime must be >= 1 hour`},
		{name: "longer than spec.maxExpirationSeconds", change: setStatus(issued(certificate(t, key, notBefore, 25*time.Hour), notBefore, 25*time.Hour)),
			want: prefix + `status.certificateChain: Invalid value: 90000000000000: leaf certificate lifetime must be <= spec.maxExpirationSeconds (86400)`},
		{name: "refreshed too early", change: func(r *certificatesv1.PodCertificateRequest) {
			r.Status = issued(chain, notBefore, 2*time.Hour)
			r.Status.BeginRefreshAt = &metav1.Time{Time: notBefore.Add(5 * time.Minute)}
		}, want: "…: must be at least 10 minutes after status.notBefore"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, username, clk := tt.old, tt.user, tt.clock
			if old == nil {
				old = request(t, key)
			}
			switch username {
			case "":
				username = "bob"
			case "-":
				username = ""
			}
			if clk.IsZero() {
				clk = now
			}
			_, err := updateStatus(t, tt.authz, clk, username, old, tt.change)
			got := errString(err)
			if want, ok := strings.CutPrefix(tt.want, "…"); ok {
				if !strings.HasPrefix(got, prefix) || !strings.HasSuffix(got, want) {
					t.Errorf("status update: got\n%s\nwant\n%s…%s", got, prefix, want)
				}
			} else if got != tt.want {
				t.Errorf("status update: got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestStatusUpdateKeepsSpecAndMetadata: a status update changes the
// status only (upstream's ResetObjectMetaForStatus).
func TestStatusUpdateKeepsSpecAndMetadata(t *testing.T) {
	key := newKey(t)
	now := time.Now().Truncate(time.Second)
	got, err := updateStatus(t, signers{signer: true}, now, "bob", request(t, key), func(r *certificatesv1.PodCertificateRequest) {
		r.Labels, r.Annotations = map[string]string{"a": "b"}, map[string]string{"c": "d"}
		r.Spec.PodName = "pod-2"
		r.Status.Conditions = []metav1.Condition{condition(certificatesv1.PodCertificateRequestConditionTypeFailed)}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels != nil || got.Annotations != nil || got.Spec.PodName != "pod-1" || state(got) != "Failed" {
		t.Errorf("status update: got labels %v, annotations %v, pod %s, state %s; want none, none, pod-1, Failed",
			got.Labels, got.Annotations, got.Spec.PodName, state(got))
	}
}

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

package certificates

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/klog/v2"
)

// The plugins' names, as upstream's, in kube-apiserver's order.
const (
	ApprovalPluginName           = "CertificateApproval"
	SigningPluginName            = "CertificateSigning"
	AttestPluginName             = "ClusterTrustBundleAttest"
	SubjectRestrictionPluginName = "CertificateSubjectRestriction"
)

// PluginNames are the plugins' names in kube-apiserver's order.
var PluginNames = []string{ApprovalPluginName, SigningPluginName, AttestPluginName, SubjectRestrictionPluginName}

// Register registers the plugins in plugins.
func Register(plugins *admission.Plugins) {
	for _, newPlugin := range []func() *Plugin{NewApproval, NewSigning, NewAttest, NewSubjectRestriction} {
		plugins.Register(newPlugin().name, func(io.Reader) (admission.Interface, error) { return newPlugin(), nil })
	}
}

// Plugin is one of the plugins: a check of the writes of one resource.
type Plugin struct {
	*admission.Handler
	name string
	// authz decides the verbs on signers (needsAuthz: the subject
	// restriction asks it nothing).
	authz      authorizer.UnconditionalAuthorizer
	needsAuthz bool
	validate   func(ctx context.Context, p *Plugin, a admission.Attributes) error
}

var (
	_ admission.ValidationInterface            = (*Plugin)(nil)
	_ initializer.WantsUnconditionalAuthorizer = (*Plugin)(nil)
)

// SetUnconditionalAuthorizer sets the authorizer that decides the verbs on signers.
func (p *Plugin) SetUnconditionalAuthorizer(authz authorizer.UnconditionalAuthorizer) {
	p.authz = authz
}

// ValidateInitialization ensures a plugin that asks the authorizer has one.
func (p *Plugin) ValidateInitialization() error {
	if p.needsAuthz && p.authz == nil {
		return fmt.Errorf("%s requires an authorizer", p.name)
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	return p.validate(ctx, p, a)
}

var csrResource = certificatesv1.Resource("certificatesigningrequests")

// NewApproval returns CertificateApproval: an update of the approval
// subresource takes the approve verb on the request's signer (as stored).
func NewApproval() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Update), name: ApprovalPluginName, needsAuthz: true,
		validate: func(ctx context.Context, p *Plugin, a admission.Attributes) error {
			if a.GetSubresource() != "approval" || a.GetResource().GroupResource() != csrResource {
				return nil
			}
			// The old object's signer: an update may try to change it.
			csr, ok := a.GetOldObject().(*certificatesv1.CertificateSigningRequest)
			if !ok {
				return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.GetOldObject()))
			}
			if !AuthorizedForSigner(ctx, p.authz, a.GetUserInfo(), "approve", csr.Spec.SignerName) {
				klog.FromContext(ctx).V(4).Info("User not permitted to approve CertificateSigningRequest", "csr", csr.Name, "signerName", csr.Spec.SignerName)
				return admission.NewForbidden(a, fmt.Errorf("user not permitted to approve requests with signerName %q", csr.Spec.SignerName))
			}
			return nil
		}}
}

// NewSigning returns CertificateSigning: an update of the status
// subresource that changes the certificate or the conditions takes the
// sign verb on the request's signer (as stored).
func NewSigning() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Update), name: SigningPluginName, needsAuthz: true,
		validate: func(ctx context.Context, p *Plugin, a admission.Attributes) error {
			if a.GetSubresource() != "status" || a.GetResource().GroupResource() != csrResource {
				return nil
			}
			old, ok := a.GetOldObject().(*certificatesv1.CertificateSigningRequest)
			if !ok {
				return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.GetOldObject()))
			}
			csr, ok := a.GetObject().(*certificatesv1.CertificateSigningRequest)
			if !ok {
				return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.GetObject()))
			}
			if reflect.DeepEqual(old.Status.Certificate, csr.Status.Certificate) && apiequality.Semantic.DeepEqual(old.Status.Conditions, csr.Status.Conditions) {
				return nil
			}
			if !AuthorizedForSigner(ctx, p.authz, a.GetUserInfo(), "sign", old.Spec.SignerName) {
				klog.FromContext(ctx).V(4).Info("User not permitted to sign CertificateSigningRequest", "csr", old.Name, "signerName", old.Spec.SignerName)
				return admission.NewForbidden(a, fmt.Errorf("user not permitted to sign requests with signerName %q", old.Spec.SignerName))
			}
			return nil
		}}
}

// NewAttest returns ClusterTrustBundleAttest: a create or update of a
// ClusterTrustBundle with a signer takes the attest verb on it, unless the
// update changes only what the garbage collector changes.
func NewAttest() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), name: AttestPluginName, needsAuthz: true,
		validate: func(ctx context.Context, p *Plugin, a admission.Attributes) error {
			if a.GetResource().GroupResource() != certificatesv1.Resource("clustertrustbundles") {
				return nil
			}
			bundle, ok := a.GetObject().(*certificatesv1.ClusterTrustBundle)
			if !ok {
				return admission.NewForbidden(a, fmt.Errorf("expected type ClusterTrustBundle, got: %T", a.GetOldObject()))
			}
			// The new object's signer: validation refuses a change of it.
			if bundle.Spec.SignerName == "" {
				return nil
			}
			if a.GetOperation() == admission.Update && onlyGCFieldsChange(a.GetObject(), a.GetOldObject()) {
				return nil
			}
			if !AuthorizedForSigner(ctx, p.authz, a.GetUserInfo(), "attest", bundle.Spec.SignerName) {
				klog.FromContext(ctx).V(4).Info("User not permitted to attest ClusterTrustBundle", "clusterTrustBundle", bundle.Name, "signerName", bundle.Spec.SignerName)
				return admission.NewForbidden(a, fmt.Errorf("user not permitted to attest for signerName %q", bundle.Spec.SignerName))
			}
			return nil
		}}
}

// NewSubjectRestriction returns CertificateSubjectRestriction: no request
// to the kube-apiserver-client signer for a certificate in system:masters.
func NewSubjectRestriction() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create), name: SubjectRestrictionPluginName,
		validate: func(ctx context.Context, _ *Plugin, a admission.Attributes) error {
			if a.GetResource().GroupResource() != csrResource || a.GetSubresource() != "" {
				return nil
			}
			csr, ok := a.GetObject().(*certificatesv1.CertificateSigningRequest)
			if !ok {
				return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.GetObject()))
			}
			if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
				return nil
			}
			request, err := parseRequest(csr.Spec.Request)
			if err != nil {
				return admission.NewForbidden(a, fmt.Errorf("failed to parse CSR: %v", err))
			}
			for _, group := range request.Subject.Organization {
				if group == user.SystemPrivilegedGroup {
					klog.FromContext(ctx).V(4).Info("CertificateSigningRequest for system:masters refused", "csr", csr.Name, "plugin", SubjectRestrictionPluginName)
					return admission.NewForbidden(a, fmt.Errorf("use of %s signer with system:masters group is not allowed", certificatesv1.KubeAPIServerClientSignerName))
				}
			}
			return nil
		}}
}

// parseRequest decodes a PEM CERTIFICATE REQUEST, as upstream's ParseCSR.
func parseRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// AuthorizedForSigner is upstream's IsAuthorizedForSignerName: verb on
// the signers resource named signerName, or on its domain's wildcard
// ("example.com/*"). The podcertificaterequests' status strategy asks it
// too.
func AuthorizedForSigner(ctx context.Context, authz authorizer.UnconditionalAuthorizer, u user.Info, verb, signerName string) bool {
	domain, _, _ := strings.Cut(signerName, "/")
	for _, name := range []string{signerName, domain + "/*"} {
		attrs := authorizer.AttributesRecord{User: u, Verb: verb, Name: name, APIGroup: certificatesv1.GroupName, APIVersion: "*",
			Resource: "signers", ResourceRequest: true}
		decision, reason, err := authz.Authorize(ctx, attrs)
		switch {
		case err != nil:
			klog.FromContext(ctx).V(3).Info("Cannot authorize for signer", "verb", verb, "name", name, "reason", reason, "err", err)
		case decision == authorizer.DecisionAllow:
			return true
		}
	}
	return false
}

// onlyGCFieldsChange reports whether obj differs from old in what the
// garbage collector changes only (owner references, finalizers), as
// upstream's IsOnlyMutatingGCFields.
func onlyGCFieldsChange(obj, old runtime.Object) bool {
	if old == nil || reflect.ValueOf(old).IsNil() {
		return false
	}
	copied := obj.DeepCopyObject()
	m, err1 := meta.Accessor(copied)
	oldMeta, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return false
	}
	m.SetOwnerReferences(oldMeta.GetOwnerReferences())
	m.SetFinalizers(oldMeta.GetFinalizers())
	m.SetSelfLink(oldMeta.GetSelfLink())
	m.SetManagedFields(oldMeta.GetManagedFields())
	return apiequality.Semantic.DeepEqual(copied, old)
}

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
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certificatesinformers "k8s.io/client-go/informers/certificates/v1"
	certificatesclient "k8s.io/client-go/kubernetes/typed/certificates/v1"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/miniapiserver/miniapiserver/pkg/controller/worker"
)

// Name is the controller's, kube-controller-manager's.
const Name = "csrsigning-controller"

// DefaultDuration is kube-controller-manager's --cluster-signing-duration.
const DefaultDuration = 365 * 24 * time.Hour

// Config is what New needs.
type Config struct {
	// Client writes the requests' status.
	Client certificatesclient.CertificateSigningRequestsGetter
	// Informer watches the requests.
	Informer certificatesinformers.CertificateSigningRequestInformer
	// CACert and CAKey (PEM) are the CA that signs.
	CACert, CAKey []byte
	// Duration is the longest a certificate is valid; 0: DefaultDuration.
	Duration time.Duration
	// Clock is when certificates start; nil: the real clock.
	Clock clock.PassiveClock
}

// Controller signs the approved requests of the signers of checks.
type Controller struct {
	client    certificatesclient.CertificateSigningRequestsGetter
	lister    certificateslisters.CertificateSigningRequestLister
	synced    cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	authority *authority
	clock     clock.PassiveClock
}

// New returns a controller that signs with c's CA.
func New(c Config) (*Controller, error) {
	var errs []error
	if c.Client == nil {
		errs = append(errs, errors.New("csrsigning: Client is required"))
	}
	if c.Informer == nil {
		errs = append(errs, errors.New("csrsigning: Informer is required"))
	}
	ca, err := parseCA(c.CACert, c.CAKey)
	if err != nil {
		errs = append(errs, fmt.Errorf("csrsigning: CACert and CAKey: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	ca.maxTTL = c.Duration
	ctrl := &Controller{
		client: c.Client, lister: c.Informer.Lister(), synced: c.Informer.Informer().HasSynced, authority: ca, clock: c.Clock,
		// Upstream's certificate controller's retries, without its bucket
		// of 10 retries a second over all requests.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 1000*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "certificate"}),
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			ctrl.queue.Add(key)
		}
	}
	_, err = c.Informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	})
	if err != nil {
		return nil, err
	}
	return ctrl, nil
}

func parseCA(certPEM, keyPEM []byte) (*authority, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T key cannot sign", key)
	}
	return &authority{cert: cert, key: signer}, nil
}

// Run signs until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	worker.Run(ctx, c.queue, []cache.InformerSynced{c.synced}, c.sync, "Certificate signing request not signed yet", "csr")
}

// sync signs the request name if it is approved, not failed, not signed
// yet, and of a signer of ours (upstream's certificate controller's
// syncFunc and signer's handle).
func (c *Controller) sync(ctx context.Context, name string) error {
	csr, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	check, ours := checks[csr.Spec.SignerName]
	if len(csr.Status.Certificate) > 0 || !ours || !approved(csr) || hasTrueCondition(csr, certificatesv1.CertificateFailed) {
		return nil
	}
	request, err := parseRequest(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %v", csr.Name, err)
	}
	csr = csr.DeepCopy()
	if err := check(request, csr.Spec.Usages); err != nil {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "SignerValidationFailure",
			Message: err.Error(), LastUpdateTime: metav1.NewTime(c.clock.Now()),
		})
		if _, err := c.client.CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("error adding failure condition for csr: %v", err)
		}
		return nil
	}
	cert, err := c.authority.sign(request, csr.Spec.Usages, c.authority.duration(csr.Spec.ExpirationSeconds), c.clock.Now())
	if err != nil {
		return fmt.Errorf("error auto signing csr: %v", err)
	}
	csr.Status.Certificate = cert
	if _, err := c.client.CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("error updating signature for csr: %v", err)
	}
	return nil
}

// approved reports whether csr is Approved and not Denied.
func approved(csr *certificatesv1.CertificateSigningRequest) bool {
	var yes, no bool
	for _, c := range csr.Status.Conditions {
		yes = yes || c.Type == certificatesv1.CertificateApproved
		no = no || c.Type == certificatesv1.CertificateDenied
	}
	return yes && !no
}

// hasTrueCondition reports whether csr has a condition of type t that is
// True or has no status.
func hasTrueCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && (c.Status == "" || c.Status == corev1.ConditionTrue) {
			return true
		}
	}
	return false
}

// parseRequest decodes a PEM CERTIFICATE REQUEST, as upstream's ParseCSR.
func parseRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

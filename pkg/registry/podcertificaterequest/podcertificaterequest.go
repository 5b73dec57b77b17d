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
	"context"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/miniapiserver/miniapiserver/pkg/admission/certificates"
	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

const groupVersion = "certificates.k8s.io/v1"

// Config is what the storage of podcertificaterequests needs besides its
// storage.
type Config struct {
	// Authorizer decides whether the writer of a status may "sign" for
	// the request's signer. Required.
	Authorizer authorizer.UnconditionalAuthorizer
	// Clock is what an issued certificate's notBefore is checked against;
	// nil is the real clock.
	Clock clock.PassiveClock
}

// NewStorage returns the storage of podcertificaterequests and of their
// status, with upstream's strategies: a request's spec never changes, and
// its status is written once, to issue, deny or fail it, by a user who
// may "sign" for its signer.
func NewStorage(optsGetter generic.RESTOptionsGetter, c Config) (map[string]rest.Storage, error) {
	if c.Authorizer == nil {
		return nil, errors.New("podcertificaterequests: Config.Authorizer is required")
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	main, status := strategies(c)
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: certificatesv1.Resource("podcertificaterequests"),
		Singular: "podcertificaterequest",
		New:      func() runtime.Object { return &certificatesv1.PodCertificateRequest{} },
		NewList:  func() runtime.Object { return &certificatesv1.PodCertificateRequestList{} },
		Strategy: main,
		Table:    table,
		Fields: func(obj runtime.Object) fields.Set {
			return api.PodCertificateRequestFields(obj.(*certificatesv1.PodCertificateRequest))
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"podcertificaterequests":        store,
		"podcertificaterequests/status": registry.NewStatusREST(store, status),
	}, nil
}

// strategies are upstream's Strategy and StatusStrategy.
func strategies(c Config) (main, status registry.Strategy) {
	main = registry.NewStrategy(true)
	main.ConditionalUpdate = true
	main.OnCreate = func(obj runtime.Object) {
		obj.(*certificatesv1.PodCertificateRequest).Status = certificatesv1.PodCertificateRequestStatus{}
	}
	main.OnUpdate = func(obj, old runtime.Object) {
		obj.(*certificatesv1.PodCertificateRequest).Status = old.(*certificatesv1.PodCertificateRequest).Status
	}
	main.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateCreate(obj.(*certificatesv1.PodCertificateRequest))
	}
	main.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateUpdate(obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest))
	}
	main.ResetFields = registry.Fieldpaths(groupVersion, "status")

	status = main
	status.OnCreate = nil
	status.OnUpdate = func(obj, old runtime.Object) {
		req, oldReq := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
		req.Spec = oldReq.Spec
		metav1.ResetObjectMetaForStatus(&req.ObjectMeta, &oldReq.ObjectMeta)
	}
	status.ValidateFieldsUpdate = nil
	status.ValidateUpdateRequest = func(ctx context.Context, obj, old runtime.Object) field.ErrorList {
		return validateStatusRequest(ctx, c, obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest))
	}
	status.ResetFields = registry.Fieldpaths(groupVersion, "metadata", "spec")
	return main, status
}

// validateStatusRequest is upstream's StatusStrategy.ValidateUpdate: a
// valid status update, and, if the status changes, a user who may "sign"
// for the request's signer.
func validateStatusRequest(ctx context.Context, c Config, req, old *certificatesv1.PodCertificateRequest) field.ErrorList {
	if errs := validateStatusUpdate(req, old, c.Clock.Now()); len(errs) > 0 {
		return errs
	}
	if apiequality.Semantic.DeepEqual(old.Status, req.Status) {
		return nil
	}
	signerPath := field.NewPath("spec", "signerName")
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return field.ErrorList{field.InternalError(signerPath, errors.New(`cannot determine calling user to perform "sign" check`))}
	}
	if !certificates.AuthorizedForSigner(ctx, c.Authorizer, u, "sign", old.Spec.SignerName) {
		klog.FromContext(ctx).V(4).Info("User not permitted to sign PodCertificateRequest", "name", old.Name, "signerName", old.Spec.SignerName)
		return field.ErrorList{field.Forbidden(signerPath, fmt.Sprintf("User %q is not permitted to \"sign\" for signer %q", u.GetName(), old.Spec.SignerName))}
	}
	return nil
}

var specDocs = certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()

// table has upstream's columns; the server's tables are wide, so the
// annotations are always there.
var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "PodName", Type: "string", Description: specDocs["podName"]},
		{Name: "ServiceAccountName", Type: "string", Description: specDocs["serviceAccountName"]},
		{Name: "NodeName", Type: "string", Description: specDocs["nodeName"]},
		{Name: "SignerName", Type: "string", Description: specDocs["signerName"]},
		{Name: "State", Type: "string", Description: "Is the request Pending, Issued, Denied, or Failed?"},
		{Name: "UnverifiedUserAnnotations", Type: "string", Description: specDocs["unverifiedUserAnnotations"]},
	},
	Cells: func(obj runtime.Object) []any {
		req := obj.(*certificatesv1.PodCertificateRequest)
		return []any{req.Name, req.Spec.PodName, req.Spec.ServiceAccountName, string(req.Spec.NodeName), req.Spec.SignerName,
			state(req), labels.FormatLabels(req.Spec.UnverifiedUserAnnotations)}
	},
}

// state is the State column: the last terminal condition's type, whatever
// its status, or Pending.
func state(req *certificatesv1.PodCertificateRequest) string {
	s := "Pending"
	for _, c := range req.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied,
			certificatesv1.PodCertificateRequestConditionTypeFailed:
			s = c.Type
		}
	}
	return s
}

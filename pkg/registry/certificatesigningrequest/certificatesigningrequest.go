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

package certificatesigningrequest

import (
	"context"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

const groupVersion = "certificates.k8s.io/v1"

// NewStorage returns the storage of certificatesigningrequests and of
// their status and approval subresources, with upstream's strategies: a
// request is immutable once created but through them, the approval
// subresource changes only the conditions, the status one the
// certificate and the conditions but Approved and Denied.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	main, status, approval := strategies()
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   certificatesv1.Resource("certificatesigningrequests"),
		Singular:   "certificatesigningrequest",
		ShortNames: []string{"csr"},
		New:        func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
		NewList:    func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} },
		Strategy:   main,
		Table:      table,
		Fields: func(obj runtime.Object) fields.Set {
			return api.CertificateSigningRequestFields(obj.(*certificatesv1.CertificateSigningRequest))
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"certificatesigningrequests":          store,
		"certificatesigningrequests/status":   registry.NewStatusREST(store, status),
		"certificatesigningrequests/approval": &approvalREST{registry.NewStatusREST(store, approval)},
	}, nil
}

// strategies are upstream's csrStrategy, csrStatusStrategy and csrApprovalStrategy.
func strategies() (main, status, approval registry.Strategy) {
	main = registry.NewStrategy(false)
	main.ValidateName = func(string, bool) []string { return nil } // any name
	main.OnCreate = func(obj runtime.Object) {
		csr := obj.(*certificatesv1.CertificateSigningRequest)
		csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
		// No request is created approved, nor signed.
		csr.Status = certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{}}
	}
	main.OnCreateRequest = setRequestor
	main.OnUpdate = func(obj, old runtime.Object) {
		csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
		csr.Spec, csr.Status = oldCSR.Spec, oldCSR.Status
	}
	main.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateCreate(obj.(*certificatesv1.CertificateSigningRequest))
	}
	main.ValidateFieldsUpdate = validateUpdateOn(mainPath)
	main.ResetFields = registry.Fieldpaths(groupVersion, "spec", "status")

	status, approval = main, main
	status.OnCreate, status.OnCreateRequest, approval.OnCreate, approval.OnCreateRequest = nil, nil, nil, nil
	status.OnUpdate = func(obj, old runtime.Object) {
		csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
		csr.Spec = oldCSR.Spec
		// Approved and Denied stay as they were; added or removed ones
		// are refused by validation.
		preserve(csr, oldCSR, certificatesv1.CertificateApproved)
		preserve(csr, oldCSR, certificatesv1.CertificateDenied)
		stampConditions(csr, oldCSR, metav1.Now())
	}
	status.ValidateFieldsUpdate = validateUpdateOn(statusPath)
	status.ResetFields = registry.Fieldpaths(groupVersion, "spec", "status.conditions")
	approval.OnUpdate = func(obj, old runtime.Object) {
		csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
		stampConditions(csr, oldCSR, metav1.Now())
		conditions := csr.Status.Conditions
		csr.Spec, csr.Status = oldCSR.Spec, oldCSR.Status
		csr.Status.Conditions = conditions
	}
	approval.ValidateFieldsUpdate = validateUpdateOn(approvalPath)
	approval.ResetFields = registry.Fieldpaths(groupVersion, "spec", "status.certificate")
	return main, status, approval
}

// setRequestor records who asks, from the request: the user's name, UID,
// groups and extra.
func setRequestor(ctx context.Context, obj runtime.Object) {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return
	}
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups = u.GetName(), u.GetUID(), u.GetGroups()
	if extra := u.GetExtra(); len(extra) > 0 {
		csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
		for k, v := range extra {
			csr.Spec.Extra[k] = v
		}
	}
}

func validateUpdateOn(path int) func(obj, old runtime.Object) field.ErrorList {
	return func(obj, old runtime.Object) field.ErrorList {
		return validateUpdate(obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest), path)
	}
}

// preserve puts back old's conditions of type t in csr, if it has as many.
func preserve(csr, old *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	indices := func(csr *certificatesv1.CertificateSigningRequest) []int {
		var out []int
		for i, c := range csr.Status.Conditions {
			if c.Type == t {
				out = append(out, i)
			}
		}
		return out
	}
	newIndices, oldIndices := indices(csr), indices(old)
	if len(newIndices) != len(oldIndices) {
		return
	}
	for i, oldIndex := range oldIndices {
		csr.Status.Conditions[newIndices[i]] = old.Status.Conditions[oldIndex]
	}
}

// stampConditions sets the conditions' missing times, as upstream's
// populateConditionTimestamps: a missing lastTransitionTime is that of
// old's condition of the same type and status, or now.
func stampConditions(csr, old *certificatesv1.CertificateSigningRequest, now metav1.Time) {
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, o := range old.Status.Conditions {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
				break
			}
		}
	}
}

// approvalREST is the approval subresource: upstream's has no table of
// its own (a Table of it is k8s.io/apiserver's default, name and age).
type approvalREST struct {
	status *registry.StatusREST
}

var (
	_ rest.Patcher             = &approvalREST{}
	_ rest.ResetFieldsStrategy = &approvalREST{}
)

func (r *approvalREST) New() runtime.Object { return r.status.New() }

// Destroy is a no-op: the parent's store owns the storage.
func (r *approvalREST) Destroy() {}

func (r *approvalREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.status.Get(ctx, name, options)
}

func (r *approvalREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.status.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

func (r *approvalREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.status.GetResetFields()
}

var (
	specDocs   = certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()
	statusDocs = certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()
)

// table has upstream's columns (its printer's descriptions are v1beta1's,
// the requestor's that of spec.request).
var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		registry.AgeColumn,
		{Name: "SignerName", Type: "string", Description: specDocs["signerName"]},
		{Name: "Requestor", Type: "string", Description: specDocs["request"]},
		{Name: "RequestedDuration", Type: "string", Description: specDocs["expirationSeconds"]},
		{Name: "Condition", Type: "string", Description: statusDocs["conditions"]},
	},
	Cells: func(obj runtime.Object) []any {
		csr := obj.(*certificatesv1.CertificateSigningRequest)
		signer, requested := "<none>", "<none>"
		if csr.Spec.SignerName != "" {
			signer = csr.Spec.SignerName
		}
		if s := csr.Spec.ExpirationSeconds; s != nil {
			requested = duration.HumanDuration(time.Duration(*s) * time.Second)
		}
		return []any{csr.Name, registry.Age(csr.CreationTimestamp), signer, csr.Spec.Username, requested, Condition(csr)}
	},
}

// Condition is what the table's Condition column shows: Denied, Approved
// or Pending, then ",Failed" and ",Issued" if so.
func Condition(csr *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	if denied {
		status = "Denied"
	} else if approved {
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}

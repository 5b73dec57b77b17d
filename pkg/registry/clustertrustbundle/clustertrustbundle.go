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
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/certificatesigningrequest"
)

// maxTrustBundleSize is upstream's limit of spec.trustBundle, in bytes.
const maxTrustBundleSize = 1 * 1024 * 1024

var (
	signerNamePath  = field.NewPath("spec", "signerName")
	trustBundlePath = field.NewPath("spec", "trustBundle")
)

// NewStorage returns the storage of clustertrustbundles, with upstream's
// strategy: a name prefixed by the signer's, a signer that never changes,
// and an update that names the resourceVersion it replaces.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(false)
	s.ConditionalUpdate = true
	s.ValidateNameOf = func(obj runtime.Object) apimachineryvalidation.ValidateNameFunc {
		return validateName(obj.(*certificatesv1.ClusterTrustBundle).Spec.SignerName)
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validate(obj.(*certificatesv1.ClusterTrustBundle), true)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateUpdate(obj.(*certificatesv1.ClusterTrustBundle), old.(*certificatesv1.ClusterTrustBundle))
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: certificatesv1.Resource("clustertrustbundles"),
		Singular: "clustertrustbundle",
		New:      func() runtime.Object { return &certificatesv1.ClusterTrustBundle{} },
		NewList:  func() runtime.Object { return &certificatesv1.ClusterTrustBundleList{} },
		Strategy: s,
		Table:    table,
		Fields: func(obj runtime.Object) fields.Set {
			return api.ClusterTrustBundleFields(obj.(*certificatesv1.ClusterTrustBundle))
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"clustertrustbundles": store}, nil
}

// validateName is upstream's ValidateClusterTrustBundleName: without a
// signer, a DNS subdomain without ':'; with one, the signer's name with
// ':' for '/', a ':' and a DNS subdomain.
func validateName(signerName string) apimachineryvalidation.ValidateNameFunc {
	return func(name string, prefix bool) []string {
		if signerName == "" {
			if strings.Contains(name, ":") {
				return []string{"ClusterTrustBundle without signer name must not have \":\" in its name"}
			}
			return apimachineryvalidation.NameIsDNSSubdomain(name, prefix)
		}
		requiredPrefix := strings.ReplaceAll(signerName, "/", ":") + ":"
		if !strings.HasPrefix(name, requiredPrefix) {
			return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signerName, requiredPrefix)}
		}
		return apimachineryvalidation.NameIsDNSSubdomain(strings.TrimPrefix(name, requiredPrefix), prefix)
	}
}

// validate is upstream's ValidateClusterTrustBundle but for the metadata;
// parse says whether to check the trust bundle.
func validate(b *certificatesv1.ClusterTrustBundle, parse bool) field.ErrorList {
	var errs field.ErrorList
	if b.Spec.SignerName != "" {
		errs = append(errs, certificatesigningrequest.ValidateSignerName(signerNamePath, b.Spec.SignerName)...)
	}
	if parse {
		errs = append(errs, validateTrustBundle(b.Spec.TrustBundle)...)
	}
	return errs
}

// validateUpdate is upstream's ValidateClusterTrustBundleUpdate but for
// the metadata's rules (k8s.io/apiserver's rest.ValidateUpdate checks
// them): the name against the new signer, a trust bundle checked only if
// it changed, and an immutable signer.
func validateUpdate(b, old *certificatesv1.ClusterTrustBundle) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validateName(b.Spec.SignerName)(b.Name, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), b.Name, msg))
	}
	errs = append(errs, validate(b, b.Spec.TrustBundle != old.Spec.TrustBundle)...)
	if b.Spec.SignerName != old.Spec.SignerName {
		errs = append(errs, field.Invalid(signerNamePath, b.Spec.SignerName, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return errs
}

// validateTrustBundle is upstream's validateTrustBundle: PEM CERTIFICATE
// blocks without headers, each a CA's, none twice, at least one.
func validateTrustBundle(in string) field.ErrorList {
	if len(in) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(trustBundlePath, "" /*unused*/, maxTrustBundleSize)}
	}
	var errs field.ErrorList
	invalid := func(format string, args ...any) {
		errs = append(errs, field.Invalid(trustBundlePath, "<value omitted>", fmt.Sprintf(format, args...)))
	}
	seen := map[string][]int{}
	var order []string
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			invalid("entry %d has bad block type: %v", i, b.Type)
			continue
		}
		if len(b.Headers) != 0 {
			invalid("entry %d has PEM block headers", i)
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		switch {
		case err != nil:
			invalid("entry %d does not parse as X.509", i)
		case !cert.IsCA:
			invalid("entry %d does not have the CA bit set", i)
		case !cert.BasicConstraintsValid:
			invalid("entry %d has invalid basic constraints", i)
		default:
			if _, ok := seen[string(b.Bytes)]; !ok {
				order = append(order, string(b.Bytes))
			}
			seen[string(b.Bytes)] = append(seen[string(b.Bytes)], i)
		}
	}
	// A malformed block hides the duplicates and the missing anchors.
	if len(errs) != 0 {
		return errs
	}
	if len(seen) == 0 {
		invalid("at least one trust anchor must be provided")
	}
	for _, anchor := range order {
		if indices := seen[anchor]; len(indices) > 1 {
			invalid("duplicate trust anchor (indices %v)", indices)
		}
	}
	return errs
}

// table has upstream's columns: the name and the signer.
var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "SignerName", Type: "string", Description: certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]},
	},
	Cells: func(obj runtime.Object) []any {
		b := obj.(*certificatesv1.ClusterTrustBundle)
		signer := "<none>"
		if b.Spec.SignerName != "" {
			signer = b.Spec.SignerName
		}
		return []any{b.Name, signer}
	},
}

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

package csidriver

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, token requests without
// serviceAccountTokenInSecrets, on create or when they change.
func TestWarnings(t *testing.T) {
	tokens := registrytest.Modified(validDriver(), func(d *storagev1.CSIDriver) {
		d.Spec.TokenRequests = []storagev1.TokenRequest{{Audience: "vault"}}
	})
	warning := []string{"spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, set to true to prevent possible logging of tokens in volume attributes"}
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "csidrivers"), []registrytest.WarningCase{
		{Name: "create", Obj: tokens, Want: warning},
		{Name: "tokens added", Obj: tokens, Old: validDriver(), Want: warning},
		{Name: "tokens kept", Obj: registrytest.Modified(tokens, func(d *storagev1.CSIDriver) { d.Labels = map[string]string{"a": "b"} }), Old: tokens},
		{Name: "in secrets", Obj: registrytest.Modified(tokens, func(d *storagev1.CSIDriver) { d.Spec.ServiceAccountTokenInSecrets = ptr.To(true) })},
	})
}

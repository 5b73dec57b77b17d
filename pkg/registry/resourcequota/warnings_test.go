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

package resourcequota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, a request quota above its limit
// quota (the bare cpu and memory count as requests) on create only.
func TestWarnings(t *testing.T) {
	quota := registrytest.Modified(validQuota(), func(rq *corev1.ResourceQuota) {
		rq.Spec.Hard = corev1.ResourceList{"cpu": q("4"), "limits.cpu": q("2"), "requests.storage": q("2Gi"), "limits.storage": q("1Gi"),
			"requests.memory": q("1Gi"), "limits.memory": q("2Gi")}
	})
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "resourcequotas"), []registrytest.WarningCase{
		{Name: "create", Obj: quota, Want: []string{
			"ResourceQuota cpu (4) should be less than limits.cpu (2)",
			"ResourceQuota requests.storage (2Gi) should be less than limits.storage (1Gi)",
		}},
		{Name: "update", Obj: quota, Old: validQuota()},
	})
}

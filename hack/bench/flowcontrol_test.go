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

package bench

import (
	"context"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
	"github.com/miniapiserver/miniapiserver/pkg/server"
)

// BenchmarkPriorityAndFairnessCost times BenchmarkTestControlsCost's
// requests on an in-process server with API priority and fairness on (the
// default, as kube-apiserver's) and off (the max-in-flight limits), made
// by a cluster-admin user outside system:masters: its requests are
// classified by the global-default FlowSchema and queued at its priority
// level, as most clients' are (system:masters' are exempt).
func BenchmarkPriorityAndFairnessCost(b *testing.B) {
	if *onlyKind == string(driver.Upstream) {
		b.Skip("the comparison is of miniapiserver with itself")
	}
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "apf=off", true: "apf=on"}[on], func(b *testing.B) {
			s := startServer(b, func(o *server.Options) { o.PriorityAndFairness = on })
			admin := kubernetes.NewForConfigOrDie(s.Config)
			if _, err := admin.RbacV1().ClusterRoleBindings().Create(b.Context(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bench"}}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			user, err := s.AddUser("bench")
			if err != nil {
				b.Fatal(err)
			}
			client := kubernetes.NewForConfigOrDie(user)
			// Until the authorizer has the binding.
			if err := wait.PollUntilContextTimeout(b.Context(), 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
				_, err := client.CoreV1().ConfigMaps(driver.Namespace).List(ctx, metav1.ListOptions{Limit: 1})
				return err == nil, nil
			}); err != nil {
				b.Fatal(err)
			}
			benchmarkRequests(b, client)
		})
	}
}

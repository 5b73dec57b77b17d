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

package testserver_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// A client's update loop under injected conflicts: the server answers the
// first two updates of the ConfigMap with 409, and client-go's
// RetryOnConflict writes it the third time.
func ExampleServer_InjectFault() {
	s, err := testserver.New()
	if err != nil {
		panic(err)
	}
	defer s.Stop()
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(s.Config)
	cms := client.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{}); err != nil {
		panic(err)
	}

	remove, err := s.InjectFault(v1alpha1.FaultRule{
		ObjectMeta: metav1.ObjectMeta{Name: "conflicts"},
		Spec: v1alpha1.FaultRuleSpec{
			Match: v1alpha1.FaultMatch{Verbs: []string{"update"}, Resources: []string{"configmaps"}, Names: []string{"settings"}},
			Count: 2,
			Error: &v1alpha1.FaultError{Code: 409},
		},
	})
	if err != nil {
		panic(err)
	}
	defer remove()

	attempts := 0
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		attempts++
		cm, err := cms.Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data = map[string]string{"mode": "fast"}
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	rule, _ := s.FaultRule("conflicts")
	fmt.Printf("updated: %v after %d attempts, %d conflicts injected\n", err == nil, attempts, rule.Status.Hits)
	// Output: updated: true after 3 attempts, 2 conflicts injected
}

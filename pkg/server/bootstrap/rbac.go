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

package bootstrap

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/auth"
)

// RBAC creates (or reconciles) the default roles and bindings,
// then waits until the authorizer's informers have synced and, if the
// server aggregates them, until the aggregated default roles (admin, edit,
// view) have their rules: the server is not ready before (an empty admin
// role would let anyone bind it). It gives up when ctx ends, or after 30s.
func RBAC(ctx context.Context, client kubernetes.Interface, synced []cache.DoneChecker, clusterRoles rbaclisters.ClusterRoleLister, aggregated bool) error {
	if err := retryBootstrap(ctx, "default RBAC roles", func(context.Context) error { return auth.Bootstrap(client) }); err != nil || ctx.Err() != nil {
		return err
	}
	if !cache.WaitFor(ctx, "", synced...) {
		return nil // stopped while starting
	}
	if !aggregated { // as kube-apiserver's, whose roles kube-controller-manager aggregates
		return nil
	}
	roles, _, err := auth.DefaultClusterRoles()
	if err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for _, r := range roles {
			if r.AggregationRule == nil {
				continue
			}
			if got, err := clusterRoles.Get(r.Name); err != nil || len(got.Rules) == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("default RBAC roles not aggregated: %w", err)
	}
	return nil
}

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

package auth

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
	"sigs.k8s.io/yaml"
)

//go:embed bootstrap.yaml
var bootstrapYAML []byte

// DefaultClusterRoles and DefaultClusterRoleBindings are the ones
// kube-apiserver bootstraps that users and tools rely on: cluster-admin,
// admin, edit, view (aggregated from the system:aggregate-to-* roles),
// system:discovery, system:basic-user, system:public-info-viewer,
// system:auth-delegator, the certificates.k8s.io roles (the
// system:certificates.k8s.io:* approvers and node clients,
// system:cluster-trust-bundle-discovery, system:node-bootstrapper), with
// upstream's names, rules, labels and annotations, and their default
// bindings.
func DefaultClusterRoles() ([]*rbacv1.ClusterRole, []*rbacv1.ClusterRoleBinding, error) {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := yaml.Unmarshal(bootstrapYAML, &list); err != nil {
		return nil, nil, fmt.Errorf("bootstrap policy: %w", err)
	}
	var roles []*rbacv1.ClusterRole
	var bindings []*rbacv1.ClusterRoleBinding
	for _, raw := range list.Items {
		var kind struct{ Kind string }
		if err := json.Unmarshal(raw, &kind); err != nil {
			return nil, nil, fmt.Errorf("bootstrap policy: %w", err)
		}
		var err error
		switch kind.Kind {
		case "ClusterRole":
			r := &rbacv1.ClusterRole{}
			err = json.Unmarshal(raw, r)
			roles = append(roles, r)
		case "ClusterRoleBinding":
			b := &rbacv1.ClusterRoleBinding{}
			err = json.Unmarshal(raw, b)
			bindings = append(bindings, b)
		default:
			err = fmt.Errorf("unexpected kind %q", kind.Kind)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("bootstrap policy: %w", err)
		}
	}
	return roles, bindings, nil
}

// Bootstrap creates the default roles and bindings, or reconciles them as
// kube-apiserver does on every start: what is missing from them is added,
// what users added to them is kept.
func Bootstrap(client kubernetes.Interface) error {
	roles, bindings, err := DefaultClusterRoles()
	if err != nil {
		return err
	}
	// The aggregated roles are written with their rules (those of the
	// defaults they select), as the aggregation controller will keep them:
	// the server is not ready until they have them.
	if err := aggregateDefaults(roles); err != nil {
		return err
	}
	// One at a time they would add their round trips to every start.
	errs := make([]error, len(roles)+len(bindings))
	var wg sync.WaitGroup
	for i, r := range roles {
		wg.Go(func() {
			opts := reconciliation.ReconcileRoleOptions{
				Role:    reconciliation.ClusterRoleRuleOwner{ClusterRole: r},
				Client:  reconciliation.ClusterRoleModifier{Client: client.RbacV1().ClusterRoles()},
				Confirm: true,
			}
			if _, err := opts.Run(); err != nil {
				errs[i] = fmt.Errorf("ClusterRole %s: %w", r.Name, err)
			}
		})
	}
	for i, b := range bindings {
		wg.Go(func() {
			opts := reconciliation.ReconcileRoleBindingOptions{
				RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: b},
				Client:      reconciliation.ClusterRoleBindingClientAdapter{Client: client.RbacV1().ClusterRoleBindings()},
				Confirm:     true,
			}
			if _, err := opts.Run(); err != nil {
				errs[len(roles)+i] = fmt.Errorf("ClusterRoleBinding %s: %w", b.Name, err)
			}
		})
	}
	wg.Wait()
	return errors.NewAggregate(errs)
}

// aggregateDefaults fills the aggregated roles among roles with their
// rules, until they no longer change (admin aggregates edit, which
// aggregates view), as the controller's passes would.
func aggregateDefaults(roles []*rbacv1.ClusterRole) error {
	for range roles {
		changed := false
		for _, r := range roles {
			if r.AggregationRule == nil {
				continue
			}
			rules, err := AggregatedRules(r, roles)
			if err != nil {
				return err
			}
			if len(rules) != len(r.Rules) {
				r.Rules, changed = rules, true
			}
		}
		if !changed {
			return nil
		}
	}
	return nil
}

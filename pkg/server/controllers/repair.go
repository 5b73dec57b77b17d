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

package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
)

// RepairInterval is how often the record of node ports and the
// IPAddresses of cluster IPs are repaired (kube-apiserver's default).
const RepairInterval = 3 * time.Minute

// repair repairs services' record of node ports, then their IPAddresses.
func repair(ctx context.Context, services *service.Storage, alone bool) error {
	if err := services.RepairNodePorts(ctx, alone); err != nil {
		return err
	}
	return services.RepairClusterIPs(ctx, time.Now())
}

// FirstRepair repairs services' record of node ports and their
// IPAddresses, retrying for up to a minute, as kube-apiserver before it is
// ready. alone says whether this server has its etcd to itself.
func FirstRepair(ctx context.Context, services *service.Storage, alone func() bool) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = repair(ctx, services, alone())
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("unable to perform initial IP and Port allocation check: %w", errors.Join(err, last))
	}
	return nil
}

// RepairEvery repairs services' record of node ports and their
// IPAddresses every RepairInterval until ctx ends.
func RepairEvery(ctx context.Context, services *service.Storage, alone func() bool) {
	ticker := time.NewTicker(RepairInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if err := repair(ctx, services, alone()); err != nil && ctx.Err() == nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Repairing the record of node ports and the IPAddresses of cluster IPs")
		}
	}
}

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

package envtest

import (
	"context"
	"errors"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

// errNoServer is the error of the test controls of an environment that
// runs no server of its own (not started, or UseExistingCluster).
var errNoServer = errors.New("envtest: the environment runs no server of its own (not started, or UseExistingCluster)")

// Checkpoint records the environment's stored state as the checkpoint name
// (a DNS subdomain), to be restored with Restore: one environment for a
// whole suite, each spec starting from the same state.
func (te *Environment) Checkpoint(ctx context.Context, name string) error {
	if te.server == nil {
		return errNoServer
	}
	_, err := te.server.Checkpoint(ctx, name)
	return err
}

// Restore puts back the stored state of the checkpoint name: what was made
// since is deleted, what was changed or deleted since is put back, custom
// resources and CRDs too. Informers see ordinary events, and need no
// relist. The checkpoint stays, to be restored again.
func (te *Environment) Restore(ctx context.Context, name string) (testcontrols.Result, error) {
	if te.server == nil {
		return testcontrols.Result{}, errNoServer
	}
	return te.server.Restore(ctx, name)
}

// DeleteCheckpoint releases the checkpoint name.
func (te *Environment) DeleteCheckpoint(name string) error {
	if te.server == nil {
		return errNoServer
	}
	return te.server.DeleteCheckpoint(name)
}

// InjectFault makes a fault rule on the environment's server: the
// requests it matches (say, those of the controller's service account)
// get its error, delay, dropped connection or ended watch (see
// pkg/testcontrols/v1alpha1.FaultRule). It returns a func that removes it.
func (te *Environment) InjectFault(rule v1alpha1.FaultRule) (remove func(), err error) {
	if te.server == nil {
		return nil, errNoServer
	}
	return te.server.InjectFault(rule)
}

// FaultRule returns the fault rule name, with its hits (status.hits).
func (te *Environment) FaultRule(name string) (*v1alpha1.FaultRule, error) {
	if te.server == nil {
		return nil, errNoServer
	}
	return te.server.FaultRule(name)
}

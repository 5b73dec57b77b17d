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

package controls

import (
	"context"
	"errors"

	"k8s.io/apiserver/pkg/storage/names"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

// ErrOff is what a nil *Controls (the server's test controls off) returns.
var ErrOff = errors.New("test controls are off (Options.TestControls, --test-controls)")

// Checkpoint records the stored state as the checkpoint name, and returns
// its etcd revision: Restore(name) puts it back.
func (tc *Controls) Checkpoint(ctx context.Context, name string) (int64, error) {
	if tc == nil {
		return 0, ErrOff
	}
	return tc.checkpoints.Take(ctx, name)
}

// Restore puts back the stored state of the checkpoint name, as ordinary
// writes: what was made since is deleted, what was changed or deleted since
// is put back (with new resourceVersions).
func (tc *Controls) Restore(ctx context.Context, name string) (testcontrols.Result, error) {
	if tc == nil {
		return testcontrols.Result{}, ErrOff
	}
	return tc.checkpoints.Restore(ctx, name)
}

// DeleteCheckpoint releases the checkpoint name.
func (tc *Controls) DeleteCheckpoint(name string) error {
	if tc == nil {
		return ErrOff
	}
	return tc.checkpoints.Delete(name)
}

// InjectFault makes a fault rule (named by its generateName, or "fault-",
// if it has no name) and returns a func that removes it.
func (tc *Controls) InjectFault(rule v1alpha1.FaultRule) (remove func(), err error) {
	if tc == nil {
		return nil, ErrOff
	}
	if rule.Name == "" && rule.GenerateName == "" {
		rule.GenerateName = "fault-"
	}
	if rule.Name == "" {
		rule.Name = names.SimpleNameGenerator.GenerateName(rule.GenerateName)
	}
	made, err := tc.faults.Inject(&rule)
	if err != nil {
		return nil, err
	}
	return func() { _ = tc.faults.Remove(made.Name) }, nil
}

// FaultRule returns the fault rule name, with its hits.
func (tc *Controls) FaultRule(name string) (*v1alpha1.FaultRule, error) {
	if tc == nil {
		return nil, ErrOff
	}
	return tc.faults.Rule(name)
}

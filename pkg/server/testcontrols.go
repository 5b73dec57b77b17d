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

package server

import (
	"context"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

// The test controls (Options.TestControls) are pkg/server/controls'; with
// them off, each of these returns an error saying so.

// Checkpoint records the stored state as the checkpoint name, and returns
// its etcd revision: Restore(name) puts it back.
func (s *Server) Checkpoint(ctx context.Context, name string) (int64, error) {
	return s.testControls.Checkpoint(ctx, name)
}

// Restore puts back the stored state of the checkpoint name, as ordinary
// writes: what was made since is deleted, what was changed or deleted since
// is put back (with new resourceVersions).
func (s *Server) Restore(ctx context.Context, name string) (testcontrols.Result, error) {
	return s.testControls.Restore(ctx, name)
}

// DeleteCheckpoint releases the checkpoint name.
func (s *Server) DeleteCheckpoint(name string) error {
	return s.testControls.DeleteCheckpoint(name)
}

// InjectFault makes a fault rule (named by its generateName, or "fault-",
// if it has no name) and returns a func that removes it.
func (s *Server) InjectFault(rule v1alpha1.FaultRule) (remove func(), err error) {
	return s.testControls.InjectFault(rule)
}

// FaultRule returns the fault rule name, with its hits.
func (s *Server) FaultRule(name string) (*v1alpha1.FaultRule, error) {
	return s.testControls.FaultRule(name)
}

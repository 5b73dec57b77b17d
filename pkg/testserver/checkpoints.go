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

package testserver

import (
	"context"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

// Checkpoint records the stored state as the checkpoint name (a DNS
// subdomain), and returns its etcd revision. Compaction keeps that
// revision until DeleteCheckpoint(name).
func (s *Server) Checkpoint(ctx context.Context, name string) (int64, error) {
	return s.server.Checkpoint(ctx, name)
}

// Restore puts back the stored state of the checkpoint name: everything
// made since is deleted, everything changed or deleted since is put back,
// custom resources and their CRDs too. Watches see ordinary ADDED,
// MODIFIED and DELETED events, with new resourceVersions; informers need
// no relist. Its cost follows what changed, not what is stored. The
// checkpoint stays, to be restored again.
func (s *Server) Restore(ctx context.Context, name string) (testcontrols.Result, error) {
	return s.server.Restore(ctx, name)
}

// DeleteCheckpoint releases the checkpoint name.
func (s *Server) DeleteCheckpoint(name string) error {
	return s.server.DeleteCheckpoint(name)
}

// InjectFault makes a fault rule on the server: the requests it matches
// get its error, delay, dropped connection or ended watch, or its
// resources' watch caches lag (see pkg/testcontrols/v1alpha1.FaultRule).
// A rule with no name is named from its generateName, or "fault-". It
// returns a func that removes the rule.
func (s *Server) InjectFault(rule v1alpha1.FaultRule) (remove func(), err error) {
	return s.server.InjectFault(rule)
}

// FaultRule returns the fault rule name, with its hits (status.hits).
func (s *Server) FaultRule(name string) (*v1alpha1.FaultRule, error) {
	return s.server.FaultRule(name)
}

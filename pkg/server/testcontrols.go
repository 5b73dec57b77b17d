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
	"errors"
	"sync"

	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols"
)

// testControls are the server's checkpoints (Options.TestControls), with
// their etcd client and the compactor that keeps what they need.
type testControls struct {
	checkpoints *testcontrols.Checkpoints
	stop        func()
}

// startTestControls holds checkpoints of backend's keys. It takes over
// backend's compaction, which it holds back for them: call it before the
// storage is made of backend.
func startTestControls(ctx context.Context, backend *storagebackend.Config) (*testControls, error) {
	client, err := storage.NewClient(backend.Transport)
	if err != nil {
		return nil, err
	}
	prefix := backend.Prefix + "/"
	cs, err := testcontrols.New(testcontrols.Config{Client: client, Prefix: prefix,
		Exclude: []string{prefix + testcontrols.Resource.Group + "/"}})
	if err != nil {
		client.Close()
		return nil, err
	}
	compactCtx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.FromContext(ctx)))
	var wg sync.WaitGroup
	if interval := backend.CompactionInterval; interval > 0 {
		wg.Go(func() { cs.RunCompactor(compactCtx, interval) })
	}
	backend.CompactionInterval = 0
	return &testControls{checkpoints: cs, stop: sync.OnceFunc(func() {
		cancel()
		wg.Wait()
		cs.Close()
		client.Close()
	})}, nil
}

var errNoTestControls = errors.New("test controls are off (Options.TestControls, --test-controls)")

// Checkpoint records the stored state as the checkpoint name, and returns
// its etcd revision: Restore(name) puts it back.
func (s *Server) Checkpoint(ctx context.Context, name string) (int64, error) {
	if s.testControls == nil {
		return 0, errNoTestControls
	}
	return s.testControls.checkpoints.Take(ctx, name)
}

// Restore puts back the stored state of the checkpoint name, as ordinary
// writes: what was made since is deleted, what was changed or deleted since
// is put back (with new resourceVersions).
func (s *Server) Restore(ctx context.Context, name string) (testcontrols.Result, error) {
	if s.testControls == nil {
		return testcontrols.Result{}, errNoTestControls
	}
	return s.testControls.checkpoints.Restore(ctx, name)
}

// DeleteCheckpoint releases the checkpoint name.
func (s *Server) DeleteCheckpoint(name string) error {
	if s.testControls == nil {
		return errNoTestControls
	}
	return s.testControls.checkpoints.Delete(name)
}

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
	"fmt"
	"maps"
	"math"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	serverstorage "github.com/miniapiserver/miniapiserver/pkg/server/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

// The test controls' kinds are known whether or not they are served, each
// its own internal version too (as pkg/api registers the others).
func init() {
	utilruntime.Must(v1alpha1.AddToScheme(api.Scheme))
	api.Scheme.AddKnownTypes(schema.GroupVersion{Group: v1alpha1.GroupName, Version: runtime.APIVersionInternal},
		&v1alpha1.Checkpoint{}, &v1alpha1.CheckpointList{}, &v1alpha1.Restore{}, &v1alpha1.FaultRule{}, &v1alpha1.FaultRuleList{})
	utilruntime.Must(api.Scheme.SetVersionPriority(v1alpha1.SchemeGroupVersion))
}

// testControls are the server's checkpoints and fault rules
// (Options.TestControls); stop stops the checkpoints' etcd client and the
// compactor that keeps what they need.
type testControls struct {
	checkpoints *testcontrols.Checkpoints
	faults      *testcontrols.Faults
	stop        func()
	// namespaces is the admission plugins' informer of namespaces (set
	// once the server's informers are made, before it serves).
	namespaces corelisters.NamespaceLister
}

// startTestControls holds checkpoints of backend's keys. It takes over
// backend's compaction, which it holds back for them: call it before the
// storage is made of backend. (Two servers in one process on one etcd
// share k8s.io/apiserver's compactor, whose shortest interval wins: one
// without test controls would compact past the checkpoints.)
func startTestControls(ctx context.Context, backend *storagebackend.Config, storages *serverstorage.Storages, faults *testcontrols.Faults) (*testControls, error) {
	client, err := storage.NewClient(backend.Transport)
	if err != nil {
		return nil, err
	}
	tc := &testControls{faults: faults}
	namespacesPrefix := backend.Prefix + "/namespaces/"
	restored := func(ctx context.Context, revision int64, deleted []string) {
		storages.ExpireContinues(revision)
		tc.waitGone(ctx, namespacesPrefix, deleted)
	}
	cs, err := testcontrols.New(testcontrols.Config{Client: client, Prefix: backend.Prefix + "/", Restored: restored})
	if err != nil {
		client.Close()
		return nil, err
	}
	tc.checkpoints = cs
	compactCtx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.FromContext(ctx)))
	var wg sync.WaitGroup
	if interval := backend.CompactionInterval; interval > 0 {
		wg.Go(func() { cs.RunCompactor(compactCtx, interval) })
		// k8s.io/apiserver's compactor still runs, for its watch of the
		// compaction key (the stores learn of compactions from it: 0
		// would start none), but never compacts.
		backend.CompactionInterval = neverCompact
	}
	tc.stop = sync.OnceFunc(func() {
		cancel()
		wg.Wait()
		cs.Close()
		client.Close()
	})
	return tc, nil
}

// namespaceGoneTimeout bounds how long a restore waits for the admission
// plugins' informer to see the namespaces it deleted go.
const namespaceGoneTimeout = 10 * time.Second

// waitGone waits until the namespaces among the keys a restore deleted
// are gone from the admission plugins' informer. Until then
// NamespaceLifecycle, finding them in its cache, would let a controller
// still acting on what it saw before the restore make objects in them
// again, left behind with no namespace.
func (tc *testControls) waitGone(ctx context.Context, prefix string, deleted []string) {
	var names []string
	for _, key := range deleted {
		if name, ok := strings.CutPrefix(key, prefix); ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 || tc.namespaces == nil {
		return
	}
	err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, namespaceGoneTimeout, true, func(context.Context) (bool, error) {
		for _, name := range names {
			if _, err := tc.namespaces.Get(name); err == nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		klog.FromContext(ctx).Info("Namespaces a restore deleted are still in the admission informer", "namespaces", names, "err", err)
	}
}

// installTestControls serves testcontrol.miniapiserver.io/v1alpha1.
func installTestControls(s *genericapiserver.GenericAPIServer, tc *testControls) error {
	info := genericapiserver.NewDefaultAPIGroupInfo(v1alpha1.GroupName, api.Scheme, api.ParameterCodec, api.Codecs)
	resources := tc.checkpoints.Storage()
	maps.Copy(resources, tc.faults.Storage())
	info.VersionedResourcesStorageMap[v1alpha1.SchemeGroupVersion.Version] = resources
	if err := s.InstallAPIGroup(&info); err != nil {
		return fmt.Errorf("installing %s: %w", v1alpha1.SchemeGroupVersion, err)
	}
	return nil
}

// neverCompact is an interval that never ends.
const neverCompact = time.Duration(math.MaxInt64)

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

// InjectFault makes a fault rule (named by its generateName, or "fault-",
// if it has no name) and returns a func that removes it.
func (s *Server) InjectFault(rule v1alpha1.FaultRule) (remove func(), err error) {
	if s.testControls == nil {
		return nil, errNoTestControls
	}
	if rule.Name == "" && rule.GenerateName == "" {
		rule.GenerateName = "fault-"
	}
	if rule.Name == "" {
		rule.Name = names.SimpleNameGenerator.GenerateName(rule.GenerateName)
	}
	made, err := s.testControls.faults.Inject(&rule)
	if err != nil {
		return nil, err
	}
	return func() { _ = s.testControls.faults.Remove(made.Name) }, nil
}

// FaultRule returns the fault rule name, with its hits.
func (s *Server) FaultRule(name string) (*v1alpha1.FaultRule, error) {
	if s.testControls == nil {
		return nil, errNoTestControls
	}
	return s.testControls.faults.Rule(name)
}

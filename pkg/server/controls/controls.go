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

// Config is what Start starts the test controls with.
type Config struct {
	// Backend is the config of the etcd whose keys the checkpoints hold.
	// Start takes over its compaction: it sets its CompactionInterval to
	// one that never ends, and compacts as often itself, holding back
	// what the checkpoints need.
	Backend *storagebackend.Config
	// Storages are the server's storages, whose continue tokens a restore
	// expires.
	Storages *serverstorage.Storages
	// Faults are the fault rules the storages were made with.
	Faults *testcontrols.Faults
}

// Controls are the server's checkpoints and fault rules. A nil *Controls
// is test controls that are off: its methods return ErrOff.
type Controls struct {
	checkpoints *testcontrols.Checkpoints
	faults      *testcontrols.Faults
	stop        func()
	// namespaces is the admission plugins' informer of namespaces (set
	// by SetNamespaces once the server's informers are made, before it
	// serves).
	namespaces corelisters.NamespaceLister
}

// Start holds checkpoints of the backend's keys. It takes over the
// backend's compaction, which it holds back for them: call it before the
// storage is made of the backend. (Two servers in one process on one etcd
// share k8s.io/apiserver's compactor, whose shortest interval wins: one
// without test controls would compact past the checkpoints.) Stop stops
// what it started.
func Start(ctx context.Context, c Config) (*Controls, error) {
	switch {
	case c.Backend == nil:
		return nil, errors.New("controls: Config.Backend is required")
	case c.Storages == nil:
		return nil, errors.New("controls: Config.Storages is required")
	case c.Faults == nil:
		return nil, errors.New("controls: Config.Faults is required")
	}
	backend := c.Backend
	client, err := storage.NewClient(backend.Transport)
	if err != nil {
		return nil, err
	}
	tc := &Controls{faults: c.Faults}
	namespacesPrefix := backend.Prefix + "/namespaces/"
	restored := func(ctx context.Context, revision int64, deleted []string) {
		c.Storages.ExpireContinues(revision)
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

// neverCompact is an interval that never ends.
const neverCompact = time.Duration(math.MaxInt64)

// Stop stops the checkpoints' etcd client and the compactor that keeps
// what they need. It is safe to call twice, and on nil.
func (tc *Controls) Stop() {
	if tc != nil {
		tc.stop()
	}
}

// SetNamespaces sets the admission plugins' informer of namespaces, which
// a restore waits on (see waitGone). Call it before the server serves.
func (tc *Controls) SetNamespaces(namespaces corelisters.NamespaceLister) {
	tc.namespaces = namespaces
}

// namespaceGoneTimeout bounds how long a restore waits for the admission
// plugins' informer to see the namespaces it deleted go.
const namespaceGoneTimeout = 10 * time.Second

// waitGone waits until the namespaces among the keys a restore deleted
// are gone from the admission plugins' informer. Until then
// NamespaceLifecycle, finding them in its cache, would let a controller
// still acting on what it saw before the restore make objects in them
// again, left behind with no namespace.
func (tc *Controls) waitGone(ctx context.Context, prefix string, deleted []string) {
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

// Install serves testcontrol.miniapiserver.io/v1alpha1 in s.
func (tc *Controls) Install(s *genericapiserver.GenericAPIServer) error {
	info := genericapiserver.NewDefaultAPIGroupInfo(v1alpha1.GroupName, api.Scheme, api.ParameterCodec, api.Codecs)
	resources := tc.checkpoints.Storage()
	maps.Copy(resources, tc.faults.Storage())
	info.VersionedResourcesStorageMap[v1alpha1.SchemeGroupVersion.Version] = resources
	if err := s.InstallAPIGroup(&info); err != nil {
		return fmt.Errorf("installing %s: %w", v1alpha1.SchemeGroupVersion, err)
	}
	return nil
}

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

package testcontrols

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

// Resource is how errors name checkpoints.
var Resource = schema.GroupResource{Group: v1alpha1.GroupName, Resource: "checkpoints"}

// Config says which keys checkpoints cover.
type Config struct {
	// Client reaches the etcd the server stores in. Required; the caller
	// closes it after Close.
	Client *clientv3.Client
	// Prefix is the key prefix of every stored object ("/registry/").
	// Required.
	Prefix string
	// Clock paces the waits for etcd's progress; nil is the real clock.
	Clock clock.Clock
	// Restored, if set, is called after each restore that wrote, before
	// it answers, with the etcd revision of its last write (paginated
	// LISTs from before it must not continue across it) and the keys it
	// deleted.
	Restored func(ctx context.Context, revision int64, deleted []string)
}

// Checkpoints holds named checkpoints of the keys under one prefix.
type Checkpoints struct {
	client   *clientv3.Client
	prefix   string
	clock    clock.Clock
	restored func(ctx context.Context, revision int64, deleted []string)

	// mu guards every field below.
	mu   sync.Mutex
	held map[string]*checkpoint
	// latest is the newest value of every key changed since the oldest
	// checkpoint; a nil value: deleted.
	latest map[string]*mvccpb.KeyValue
	// recorded is the etcd revision the recorder has seen everything up to.
	recorded int64
	// progressed is closed, and replaced, whenever recorded grows.
	progressed chan struct{}
	// stopRecorder ends the running recorder (nil when none runs);
	// recorderDone is closed when it has returned, recorderErr why.
	stopRecorder context.CancelFunc
	recorderDone chan struct{}
	recorderErr  error
	restoring    bool
	// written, if set (by tests), is called after each key a restore
	// wrote, as a writer racing it would act.
	written func(key string)
	closed  bool
}

// checkpoint is one named etcd revision.
type checkpoint struct {
	Info
	// before holds, for each key changed since rev, its value at rev (nil:
	// the key did not exist).
	before map[string]*mvccpb.KeyValue
}

// New returns an empty set of checkpoints.
func New(c Config) (*Checkpoints, error) {
	if c.Client == nil {
		return nil, errors.New("testcontrols: Config.Client is required")
	}
	if !strings.HasSuffix(c.Prefix, "/") {
		return nil, fmt.Errorf("testcontrols: Config.Prefix %q must end in /", c.Prefix)
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	return &Checkpoints{client: c.Client, prefix: c.Prefix, clock: c.Clock, restored: c.Restored,
		held: map[string]*checkpoint{}, progressed: make(chan struct{})}, nil
}

// Take records the current etcd revision as the checkpoint name, and
// returns it. Names are DNS subdomains, as object names are.
func (cs *Checkpoints) Take(ctx context.Context, name string) (int64, error) {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return 0, apierrors.NewInvalid(schema.GroupKind{Group: v1alpha1.GroupName, Kind: "Checkpoint"}, name,
			field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), name, strings.Join(errs, ", "))})
	}
	// The lock is held across the read of the revision: the recorder
	// cannot record an event after it before the checkpoint is held.
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return 0, apierrors.NewServiceUnavailable("the server is stopping")
	}
	if _, ok := cs.held[name]; ok {
		return 0, apierrors.NewAlreadyExists(Resource, name)
	}
	if cs.restoring {
		return 0, apierrors.NewConflict(Resource, name, errors.New("a restore is in progress"))
	}
	rev, err := cs.revision(ctx)
	if err != nil {
		return 0, err
	}
	cs.held[name] = &checkpoint{Info: Info{Name: name, UID: uuid.NewUUID(), Created: cs.clock.Now(), Revision: rev},
		before: map[string]*mvccpb.KeyValue{}}
	if cs.stopRecorder == nil {
		cs.startRecorderLocked(rev)
	}
	return rev, nil
}

// revision reads etcd's current revision.
func (cs *Checkpoints) revision(ctx context.Context) (int64, error) {
	resp, err := cs.client.Get(ctx, cs.prefix, clientv3.WithKeysOnly(), clientv3.WithLimit(1))
	if err != nil {
		return 0, apierrors.NewInternalError(fmt.Errorf("reading the etcd revision: %w", err))
	}
	return resp.Header.Revision, nil
}

// Info describes a checkpoint held.
type Info struct {
	Name     string
	UID      types.UID
	Created  time.Time
	Revision int64
	// Labels and Annotations are the API object's (SetMeta).
	Labels, Annotations map[string]string
}

// Get returns the checkpoint name.
func (cs *Checkpoints) Get(name string) (Info, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.held[name]
	if !ok {
		return Info{}, apierrors.NewNotFound(Resource, name)
	}
	return c.Info, nil
}

// SetMeta sets the labels and annotations of the checkpoint name.
func (cs *Checkpoints) SetMeta(name string, labels, annotations map[string]string) (Info, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.held[name]
	if !ok {
		return Info{}, apierrors.NewNotFound(Resource, name)
	}
	c.Labels, c.Annotations = maps.Clone(labels), maps.Clone(annotations)
	return c.Info, nil
}

// List returns the checkpoints held, by name.
func (cs *Checkpoints) List() []Info {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := make([]Info, 0, len(cs.held))
	for _, c := range cs.held {
		out = append(out, c.Info)
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Delete releases the checkpoint name: its revision may be compacted.
func (cs *Checkpoints) Delete(name string) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, ok := cs.held[name]; !ok {
		return apierrors.NewNotFound(Resource, name)
	}
	delete(cs.held, name)
	if len(cs.held) == 0 {
		cs.stopRecorderLocked()
	}
	return nil
}

// Oldest returns the revision of the oldest checkpoint held, which
// compaction must keep.
func (cs *Checkpoints) Oldest() (int64, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var oldest int64
	for _, c := range cs.held {
		if oldest == 0 || c.Revision < oldest {
			oldest = c.Revision
		}
	}
	return oldest, oldest != 0
}

// Close releases every checkpoint and waits for the recorder to stop.
// It is safe to call twice.
func (cs *Checkpoints) Close() {
	cs.mu.Lock()
	cs.closed = true
	clear(cs.held)
	done := cs.recorderDone
	cs.stopRecorderLocked()
	cs.mu.Unlock()
	if done != nil {
		<-done
	}
}

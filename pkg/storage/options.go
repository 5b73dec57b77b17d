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

package storage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/registry/generic"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/api"
)

// DefaultPrefix is where every object lives in etcd unless configured
// otherwise, as in kube-apiserver: /registry/<resource>/<namespace>/<name>.
const DefaultPrefix = "/registry"

// Backend says how to reach etcd: kube-apiserver's --etcd-* flags.
type Backend struct {
	// Servers are the client URLs (http, https or unix).
	Servers []string
	// Prefix is prepended to every key; empty means DefaultPrefix.
	Prefix string
	// CAFile, CertFile and KeyFile secure the connection with TLS, and
	// authenticate the server to etcd by client certificate.
	CAFile, CertFile, KeyFile string
	// CompactionInterval is how often old revisions are compacted; 0 never.
	CompactionInterval time.Duration
}

// Config returns the etcd3 storage config for b.
// storagebackend.NewDefaultConfig sets the 75s events history window and the
// health timeouts upstream uses.
func (b Backend) Config() *storagebackend.Config {
	prefix := b.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	cfg := storagebackend.NewDefaultConfig(prefix, nil)
	cfg.Transport.ServerList = b.Servers
	cfg.Transport.TrustedCAFile = b.CAFile
	cfg.Transport.CertFile = b.CertFile
	cfg.Transport.KeyFile = b.KeyFile
	cfg.CompactionInterval = b.CompactionInterval
	return cfg
}

// RESTOptionsGetter hands every built-in resource its etcd storage: objects
// stored as protobuf in their group's v1, decorated by Decorator.
type RESTOptionsGetter struct {
	Config *storagebackend.Config
	// Decorator builds each resource's storage.Interface; nil means Undecorated.
	Decorator generic.StorageDecorator
	// GarbageCollection makes deletes with the Orphan and Foreground
	// propagation policies add the orphan and foregroundDeletion finalizers,
	// for a garbage collector to act on (kube-apiserver's
	// --enable-garbage-collector). Without it they delete at once.
	GarbageCollection bool
	// SoleServer says whether no other API server shares this etcd (as
	// with the embedded etcd) at the moment: nothing need wait for peers to
	// catch up. Nil: others may.
	SoleServer func() bool
}

var _ generic.RESTOptionsGetter = RESTOptionsGetter{}

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g RESTOptionsGetter) GetRESTOptions(gr schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	cfg := *g.Config
	version, ok := storageVersion(gr.Group)
	if !ok {
		return generic.RESTOptions{}, fmt.Errorf("no storage version for group %q", gr.Group)
	}
	codec, encodeVersioner, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  runtime.ContentTypeProtobuf,
		StorageSerializer: api.Codecs,
		StorageVersion:    version,
		MemoryVersion:     schema.GroupVersion{Group: gr.Group, Version: runtime.APIVersionInternal},
		Config:            cfg,
	})
	if err != nil {
		return generic.RESTOptions{}, err
	}
	cfg.Codec = withoutTypeMeta{codec}
	cfg.EncodeVersioner = encodeVersioner
	decorator := g.Decorator
	if uncached[gr] {
		decorator = Undecorated
	}
	return restOptions(&cfg, gr, gr.Resource, decorator, g.GarbageCollection), nil
}

// CodecRESTOptionsGetter stores the resources of a server other than the
// core one (kube-aggregator's APIServices) with that server's codec, at
// <prefix>/<group>/<resource>, as kube-apiserver's etcd options do.
type CodecRESTOptionsGetter struct {
	RESTOptionsGetter
	Codec           runtime.Codec
	EncodeVersioner runtime.GroupVersioner
}

var _ generic.RESTOptionsGetter = CodecRESTOptionsGetter{}

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g CodecRESTOptionsGetter) GetRESTOptions(gr schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	cfg := *g.Config
	cfg.Codec, cfg.EncodeVersioner = g.Codec, g.EncodeVersioner
	return restOptions(&cfg, gr, gr.Group+"/"+gr.Resource, g.Decorator, g.GarbageCollection), nil
}

// uncached are stored, not served: their storage is etcd's, with no watch
// cache (as upstream's RangeAllocation of node ports, one key).
var uncached = map[schema.GroupResource]bool{{Resource: "servicenodeportallocations"}: true}

func restOptions(cfg *storagebackend.Config, gr schema.GroupResource, prefix string, decorator generic.StorageDecorator, gc bool) generic.RESTOptions {
	if decorator == nil {
		decorator = Undecorated
	}
	return generic.RESTOptions{
		StorageConfig:           cfg.ForResource(gr),
		Decorator:               decorator,
		EnableGarbageCollection: gc,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          prefix,
		CountMetricPollPeriod:   time.Minute,
		// What the count polls find, priority and fairness sizes LISTs by.
		StorageObjectCountTracker: cfg.StorageObjectCountTracker,
	}
}

// withoutTypeMeta decodes objects with an empty apiVersion and kind, as
// kube-apiserver's storage decodes into internal types: its responses set
// them on the top-level object only, so items of a LIST carry none. Our
// internal and v1 types are the same Go types, and the codec would leave
// v1's set on objects decoded into a given object (etcd LISTs and GETs) but
// not on others (watch events), so lists served from etcd and from the watch
// cache would differ.
type withoutTypeMeta struct {
	runtime.Codec
}

func (c withoutTypeMeta) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := c.Codec.Decode(data, defaults, into)
	if obj != nil {
		obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	return obj, gvk, err
}

func storageVersion(group string) (schema.GroupVersion, bool) {
	for _, gv := range api.StorageVersions {
		if gv.Group == group {
			return gv, true
		}
	}
	return schema.GroupVersion{}, false
}

// Undecorated is the plain etcd3 store (upstream's).
func Undecorated(config *storagebackend.ConfigForResource, resourcePrefix string, _ func(obj runtime.Object) (string, error),
	newFunc, newListFunc func() runtime.Object, _ storage.AttrFunc, _ storage.IndexerFuncs, _ *cache.Indexers,
) (storage.Interface, factory.DestroyFunc, error) {
	return generic.NewRawStorage(config, newFunc, newListFunc, resourcePrefix)
}

// WaitForEtcd waits until etcd answers k8s.io/apiserver's health check (as
// /healthz's etcd check), for up to timeout. (The check blocks while its
// client connects, which it may do for 20s: it runs in the background.)
func WaitForEtcd(ctx context.Context, backend *storagebackend.Config, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	health, err := factory.CreateHealthCheck(*backend, ctx.Done())
	if err != nil {
		return fmt.Errorf("--etcd-servers: %w", err)
	}
	healthy := make(chan error, 1)
	go func() {
		defer utilruntime.HandleCrash()
		healthy <- wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
			return health() == nil, nil
		})
	}()
	select {
	case err = <-healthy:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("--etcd-servers %s: etcd does not answer within %s", strings.Join(backend.Transport.ServerList, ","), timeout)
	}
	return nil
}

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
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	aggregatorapiserver "k8s.io/kube-aggregator/pkg/apiserver"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
	"github.com/miniapiserver/miniapiserver/pkg/server/aggregator"
	"github.com/miniapiserver/miniapiserver/pkg/server/apiextensions"
	"github.com/miniapiserver/miniapiserver/pkg/server/apis"
	"github.com/miniapiserver/miniapiserver/pkg/server/controls"
	"github.com/miniapiserver/miniapiserver/pkg/server/encoding"
	"github.com/miniapiserver/miniapiserver/pkg/server/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/server/peers"
	"github.com/miniapiserver/miniapiserver/pkg/server/serving"
	serverstorage "github.com/miniapiserver/miniapiserver/pkg/server/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols"
)

// undoStack is what a failed New stops, last started first: each of New's
// phases, below in the order New runs them, adds what it started.
type undoStack []func()

func (u *undoStack) add(f func()) { *u = append(*u, f) }

func (u undoStack) run() {
	for i := len(u) - 1; i >= 0; i-- {
		u[i]()
	}
}

// storageParts are what the storage phase starts.
type storageParts struct {
	// etcd is the embedded etcd; nil with --etcd-servers.
	etcd    *storage.Etcd
	servers []string
	backend *storagebackend.Config
	// releaseGates ends the hold on the process's feature gates.
	releaseGates func()
	storages     *serverstorage.Storages
	// faults and controls are nil unless Options.TestControls.
	faults   *testcontrols.Faults
	controls *controls.Controls
}

// etcdReachTimeout bounds how long New waits for --etcd-servers to
// answer, and then stops, saying so (kube-apiserver waits 20s). Not less:
// kwokctl starts etcd and kube-apiserver at the same moment.
const etcdReachTimeout = 5 * time.Second

// newStorage starts etcd, or waits for --etcd-servers to answer; holds the
// feature gates; makes the resources' storages, and the test controls on
// them.
func (c CompletedConfig) newStorage(ctx context.Context, undo *undoStack) (_ *storageParts, err error) {
	o := c.Options
	st := &storageParts{servers: o.EtcdServers}
	if len(st.servers) == 0 {
		etcd, err := storage.StartEtcd(ctx, storage.EtcdConfig{
			Dir:                    filepath.Join(o.DataDir, "etcd"),
			ProgressNotifyInterval: o.EtcdProgressNotifyInterval,
			UnsafeNoFsync:          o.EtcdUnsafeNoFsync,
		})
		if err != nil {
			return nil, err
		}
		undo.add(etcd.Close)
		st.etcd, st.servers = etcd, []string{etcd.URL()}
	}
	st.backend = storage.Backend{
		Servers: st.servers, Prefix: o.EtcdPrefix,
		CAFile: o.EtcdCAFile, CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile,
		CompactionInterval: o.EtcdCompactionInterval,
	}.Config()
	if st.etcd == nil {
		if err := storage.WaitForEtcd(ctx, st.backend, etcdReachTimeout); err != nil {
			return nil, err
		}
	}
	if st.releaseGates, err = features.Hold(); err != nil {
		return nil, err
	}
	undo.add(st.releaseGates)
	storageOpts := serverstorage.Options{WatchCache: o.WatchCache, WatchCacheHistoryWindow: o.WatchCacheHistoryWindow, WatchCacheHistorySize: o.WatchCacheHistorySize}
	if o.TestControls {
		st.faults = testcontrols.NewFaults(nil)
		storageOpts.Faults = st.faults
	}
	if st.storages, err = serverstorage.New(storageOpts); err != nil {
		return nil, err
	}
	undo.add(st.storages.WaitDestroyed) // after the storages are destroyed, before etcd stops
	if o.TestControls {
		st.controls, err = controls.Start(ctx, controls.Config{Backend: st.backend, Storages: st.storages, Faults: st.faults})
		if err != nil {
			return nil, err
		}
		undo.add(st.controls.Stop)
	}
	return st, nil
}

// startKeyring has the tokens that the other servers on the etcd sign
// authenticate here too; with embedded etcd there are none, and it does
// nothing. It returns what stops it.
func startKeyring(ctx context.Context, undo *undoStack, backend *storagebackend.Config, parts *genericParts) (stop func(), err error) {
	if parts.peers.Embedded() {
		return func() {}, nil
	}
	stop, err = peers.StartKeyring(ctx, backend, parts.peers.Name(), parts.serviceAccounts)
	if err != nil {
		return nil, err
	}
	undo.add(stop)
	return stop, nil
}

// apiServer is what the APIs phase builds.
type apiServer struct {
	// generic serves every request: the core server until
	// newAggregator, the aggregator in front of it then.
	generic    *genericapiserver.GenericAPIServer
	aggregator *aggregatorapiserver.APIAggregator // which Run prepares
	inProcess  *serving.InProcess
	ext        *apiextensions.Server
	openAPI    *openapi.Server
	// namespaced are the namespaced resources, custom ones included.
	namespaced func() []schema.GroupVersionResource
	services   *service.Storage
}

// newAPIServer builds the generic server, with the apiextensions-apiserver
// (CRDs and custom resources) it delegates to, as kube-apiserver chains
// them; installs the built-in APIs and the test controls; and serves the
// OpenAPI of them all.
func (c CompletedConfig) newAPIServer(undo *undoStack, st *storageParts, parts *genericParts) (*apiServer, error) {
	gc := parts.config
	inProcess := &serving.InProcess{}
	// The initial events of watches are written from kept encodings too.
	encodings := st.storages.Encodings()
	var events *encoding.EventWriter
	if encodings != nil {
		events = encoding.NewEventWriter(encoding.WithCachedListEncoding(api.Codecs, encodings), api.Scheme)
		encodings.SetEventWriter(events)
	}
	lists := encoding.NewCustomResourceLists(encodings, events, time.Duration(gc.MinRequestTimeout)*time.Second)
	ext, err := apiextensions.New(apiextensions.Config{Core: gc, Loopback: inProcess, Services: c.Options.WebhookServices, Lists: lists})
	if err != nil {
		return nil, err
	}
	generic, err := gc.Complete(nil).New("miniapiserver", lists.Delegate(ext.CustomResourceDefinitions))
	if err != nil {
		ext.GenericAPIServer.Destroy()
		return nil, err
	}
	inProcess.SetHandler(generic.Handler)
	parts.server.Store(generic)
	undo.add(generic.Destroy)
	installed, err := apis.Install(apis.Config{Server: generic, RESTOptionsGetter: gc.RESTOptionsGetter, Encodings: encodings,
		Identity: apis.Identity{Authorizer: gc.Authorization.Authorizer, Rules: gc.RuleResolver, Tokens: parts.tokens, ServiceAccounts: parts.serviceAccounts,
			JWKSURI: c.Serving.ServiceAccounts.JWKSURI},
		ServiceRanges: c.Options.ServiceRanges, Kubelet: c.Options.Kubelet.config(), Etcd: *st.backend})
	if err != nil {
		return nil, err
	}
	if st.controls != nil {
		if err := st.controls.Install(generic); err != nil {
			return nil, err
		}
	}
	openAPI := openapi.New(generic, ext.OpenAPI(), gc.OpenAPIConfig, gc.OpenAPIV3Config)
	if err := ext.Serve(generic, openAPI); err != nil {
		return nil, err
	}
	// /readyz waits for the watch caches' initial lists, as kube-apiserver's does.
	generic.AddPostStartHookOrDie("storage-readiness", generic.StorageReadinessHook.Hook)
	crds := ext.Informers.Apiextensions().V1().CustomResourceDefinitions().Lister()
	namespaced := func() []schema.GroupVersionResource {
		return append(slices.Clone(installed.Namespaced), apiextensions.CustomResources(crds)...)
	}
	return &apiServer{generic: generic, inProcess: inProcess, ext: ext, openAPI: openAPI, namespaced: namespaced, services: installed.Services}, nil
}

// newAggregator builds kube-aggregator's server in front of a's, as
// kube-apiserver does, once a's server has all its hooks and checks (the
// aggregator copies them). It serves every request from then on, the
// server's own in process included. Its own requests are refused once
// stopping closes.
func (c CompletedConfig) newAggregator(a *apiServer, parts *genericParts, stopping <-chan struct{}) error {
	agg, err := aggregator.New(aggregator.Config{Core: parts.config, Informers: parts.factory, Mapped: c.Options.WebhookServices,
		CRDs: a.ext.Informers.Apiextensions().V1().CustomResourceDefinitions(), OpenAPIV3: a.openAPI.Handler, Stopping: stopping,
		Options: c.Options.Aggregator}, a.generic)
	if err != nil {
		return err
	}
	a.generic, a.aggregator = agg.GenericAPIServer, agg
	a.openAPI.AlsoInV2(aggregator.OpenAPIV2(agg))
	a.inProcess.SetHandler(a.generic.Handler)
	parts.server.Store(a.generic)
	return nil
}

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
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	aggregatorapiserver "k8s.io/kube-aggregator/pkg/apiserver"

	"github.com/miniapiserver/miniapiserver/pkg/server/controls"
	"github.com/miniapiserver/miniapiserver/pkg/server/datadir"
	"github.com/miniapiserver/miniapiserver/pkg/server/manifests"
	"github.com/miniapiserver/miniapiserver/pkg/server/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/server/serving"
	serverstorage "github.com/miniapiserver/miniapiserver/pkg/server/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Server is a running miniapiserver.
type Server struct {
	aggregator *aggregatorapiserver.APIAggregator
	// crdInformers are the apiextensions-apiserver's (in process, see
	// apiextensions.New).
	crdInformers apiextensionsinformers.SharedInformerFactory
	openAPI      *openapi.Server
	etcd         *storage.Etcd
	// storages are destroyed in the background when the server stops.
	storages *serverstorage.Storages
	// Admin is a client config for the admin user (what the kubeconfig holds).
	Admin *rest.Config
	// KubeconfigPath is the admin kubeconfig written in the data dir.
	KubeconfigPath string
	// EtcdServers are the etcd client URLs the server stores objects in.
	EtcdServers []string
	// userCA is the data dir's CA, which UserConfig signs with (nil
	// without a data dir).
	userCA *datadir.Credentials
	// crds are the CRDs WaitReady installs (read from Options.CRDPaths).
	crds []*apiextensionsv1.CustomResourceDefinition
	// webhooks are the webhook configurations WaitReady installs, and
	// what admission sees of them.
	webhooks manifests.Webhooks
	// ready closes admissionchain.Config.Ready.
	ready func()
	// testControls are nil unless Options.TestControls.
	testControls *controls.Controls
	// releaseGates lets other servers in the process have other feature
	// gates once this one has stopped (features.Hold).
	releaseGates func()
}

// New starts etcd (unless external servers are configured) and builds the
// API server, phase by phase: storage, then authentication, authorization
// and admission (genericConfig), the servers sharing the etcd, the APIs,
// then the server's clients of itself (bootstrap and controllers). Run
// serves it, and stops what New started, the hold on the process's feature
// gates included (features.Hold); if New fails, everything it started is
// stopped, last started first.
func (c CompletedConfig) New(ctx context.Context) (s *Server, err error) {
	var undo undoStack
	defer func() {
		if err != nil {
			undo.run()
		}
	}()
	crds, err := c.Options.crdsToInstall()
	if err != nil {
		return nil, err
	}
	st, err := c.newStorage(ctx, &undo)
	if err != nil {
		return nil, err
	}
	// The admission plugins' informers and workers stop with the loopback
	// clients (see end-watches), or when New fails.
	admissionDone := make(chan struct{})
	stopAdmission := sync.OnceFunc(func() { close(admissionDone) })
	undo.add(stopAdmission)
	// Closed once the server is ready and its OpenAPI built (see Run).
	ready := make(chan struct{})
	parts, err := c.genericConfig(ctx, st.backend, st.storages, st.faults, admissionDone, ready)
	if err != nil {
		return nil, err
	}
	if st.controls != nil {
		st.controls.SetNamespaces(parts.factory.Core().V1().Namespaces().Lister())
	}
	stopKeyring, err := startKeyring(ctx, &undo, st.backend, parts)
	if err != nil {
		return nil, err
	}
	a, err := c.newAPIServer(&undo, st, parts)
	if err != nil {
		return nil, err
	}
	stopLoopbackClients, err := c.addLoopbackClients(a, parts)
	if err != nil {
		return nil, err
	}
	// On shutdown the server's own clients stop first (their watches would
	// come straight back), then every watch ends at once, after the caches'
	// final bookmarks, instead of holding the HTTP server's shutdown until
	// it times out. (Pre-shutdown hooks run in no set order: this is one.)
	stopping := make(chan struct{}) // the aggregator's requests are refused from then on
	a.generic.AddPreShutdownHookOrDie("end-watches", func() error {
		close(stopping)
		stopAdmission()
		stopLoopbackClients()
		st.storages.Shutdown(context.Background())
		stopKeyring()
		return nil
	})
	if err := c.newAggregator(a, parts, stopping); err != nil {
		return nil, err
	}
	if c.KubeconfigPath != "" {
		if err := datadir.WriteKubeconfig(c.KubeconfigPath, c.Admin); err != nil {
			return nil, err
		}
	}
	o := c.Options
	return &Server{aggregator: a.aggregator, crdInformers: a.ext.Informers, openAPI: a.openAPI, etcd: st.etcd, storages: st.storages,
		Admin: c.Admin, KubeconfigPath: c.KubeconfigPath, EtcdServers: st.servers, userCA: c.userCA, crds: crds,
		webhooks: manifests.Webhooks{Mutating: o.MutatingWebhooks, Validating: o.ValidatingWebhooks, Seen: parts.factory.Admissionregistration().V1()},
		ready:    sync.OnceFunc(func() { close(ready) }), testControls: st.controls, releaseGates: st.releaseGates}, nil
}

// watchDrainTimeout bounds how long shutdown waits for the watch handlers
// to return once it has ended their watches.
const watchDrainTimeout = 5 * time.Second

// crdSyncTimeout bounds Run's wait for the CRD informer before serving.
const crdSyncTimeout = 5 * time.Second

// Run serves until ctx is cancelled, then shuts down gracefully and stops etcd.
func (s *Server) Run(ctx context.Context) error {
	defer func() {
		s.storages.WaitDestroyed()
		if s.testControls != nil {
			s.testControls.Stop()
		}
		if s.etcd != nil {
			s.etcd.Close()
		}
		s.releaseGates()
	}()
	// apiextensions-apiserver's readiness check ("crd-informer-synced")
	// looks at its CRD informer as soon as the server listens, then every
	// 100 ms. The informer lists and watches in process (its post-start
	// hook's Start does nothing more), so it can sync before that. (If it
	// can't within crdSyncTimeout, the server serves all the same, and
	// /readyz says what it waits for.)
	s.crdInformers.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, crdSyncTimeout)
	s.crdInformers.WaitForCacheSync(syncCtx.Done())
	cancel()
	// The OpenAPI v3 is built once the server is ready: its CPU would slow
	// the start (requests for it wait until it is built). Then the
	// admission plugins may read it (see admissionchain.Config.Ready).
	go func() {
		if serving.PollReady(ctx, s.Admin) == nil {
			s.openAPI.BuildV3()
			s.ready()
		}
	}()
	prepared, err := s.aggregator.PrepareRun()
	if err != nil {
		return err
	}
	return prepared.Run(ctx)
}

// Serve builds the server of cfg, runs it until ctx ends, and calls ready
// once it is ready; a server that does not get ready (a CRD that is not
// valid, say) stops. A signal while starting is a graceful stop too:
// whatever failed because of it is no error. The caller owns cfg.
func Serve(ctx context.Context, cfg *Config, ready func(*Server)) error {
	s, err := cfg.Complete().New(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	if err := s.WaitReady(ctx); err != nil {
		stop()
		runErr := <-done
		if ctx.Err() != nil {
			return runErr
		}
		return errors.Join(err, runErr)
	}
	ready(s)
	return <-done
}

// CRDs are the CRDs the server installs on start (Options.CRDPaths' and
// CRDs, pointed at Options.ConversionWebhook), as it read them.
func (s *Server) CRDs() []*apiextensionsv1.CustomResourceDefinition {
	out := make([]*apiextensionsv1.CustomResourceDefinition, len(s.crds))
	for i, crd := range s.crds {
		out[i] = crd.DeepCopy()
	}
	return out
}

// WaitReady polls /readyz until it answers 200 or ctx ends, then installs
// the CRDs of Options.CRDPaths and waits until they are served.
func (s *Server) WaitReady(ctx context.Context) error {
	if err := serving.PollReady(ctx, s.Admin); err != nil {
		return err
	}
	if err := manifests.InstallCRDs(ctx, s.Admin, s.crds); err != nil {
		return err
	}
	if err := s.webhooks.Install(ctx, s.Admin); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Server ready", "address", s.Admin.Host)
	return nil
}

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
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/server/bootstrap"
	"github.com/miniapiserver/miniapiserver/pkg/server/controllers"
	"github.com/miniapiserver/miniapiserver/pkg/server/serving"
)

// addLoopbackClients runs the clients the server has of itself: the shared
// informers (for admission and RBAC); the bootstrap of the system
// namespaces, the kubernetes Service, the default ServiceCIDR, the system
// PriorityClasses, the default RBAC roles and priority and fairness's
// configuration, as kube-apiserver's
// post-start hooks; and the controllers c.Options.Controllers names, which
// pkg/server/controllers makes, each started by a post-start hook of its
// name. The returned func stops them, before the HTTP server stops.
func (c CompletedConfig) addLoopbackClients(a *apiServer, parts *genericParts) (stop func(), err error) {
	loopbackClient, err := kubernetes.NewForConfig(serving.Finishing(parts.config.LoopbackClientConfig))
	if err != nil {
		return nil, err
	}
	generic, factory := a.generic, parts.factory
	loopbackCtx, stopLoopback := context.WithCancel(context.Background())
	var running sync.WaitGroup
	fc := factory.Flowcontrol().V1()
	stop = func() {
		if parts.config.FlowControl != nil {
			bootstrap.WaitFlowSchemaStatus(fc.FlowSchemas().Lister(), fc.PriorityLevelConfigurations().Lister(), flowSchemaStatusTimeout)
		}
		stopLoopback()
		factory.Shutdown()
		running.Wait()
		for _, cfg := range []*rest.Config{parts.config.LoopbackClientConfig, c.Admin} {
			if rt, err := rest.TransportFor(cfg); err == nil {
				utilnet.CloseIdleConnectionsFor(rt)
			}
		}
	}
	// The server is ready once the informers have synced and the admission
	// chain, which reads some, is built on them (see admissionchain.Deferred).
	// The bootstrap writes wait for them too. The hooks' names are
	// kube-apiserver's.
	informersSynced, synced := make(chan struct{}), make(chan struct{})
	generic.AddPostStartHookOrDie("generic-apiserver-start-informers", func(hc genericapiserver.PostStartHookContext) error {
		factory.Start(loopbackCtx.Done())
		if factory.WaitForCacheSyncWithContext(hc).Err == nil {
			close(informersSynced)
		}
		return nil
	})
	generic.AddPostStartHookOrDie("start-apiserver-admission-initializer", func(hc genericapiserver.PostStartHookContext) error {
		if !afterSync(hc, informersSynced) {
			return nil
		}
		if err := parts.admission.Build(); err != nil {
			return err
		}
		close(synced)
		return nil
	})
	if err := generic.AddReadyzChecks(healthz.NewInformerSyncHealthz(factory)); err != nil {
		return nil, err
	}
	// afterSynced adds a post-start hook that runs bootstrap once synced.
	afterSynced := func(name string, bootstrap func(context.Context) error) {
		generic.AddPostStartHookOrDie(name, func(hc genericapiserver.PostStartHookContext) error {
			if !afterSync(hc, synced) {
				return nil
			}
			return bootstrap(hc)
		})
	}
	// The kubernetes Service goes into the default namespace once made.
	namespaces := make(chan struct{})
	afterSynced("start-system-namespaces-controller", func(ctx context.Context) error {
		if err := bootstrap.Namespaces(ctx, loopbackClient); err != nil {
			return err
		}
		close(namespaces)
		return nil
	})
	afterSynced("bootstrap-controller", func(ctx context.Context) error {
		if !afterSync(ctx, namespaces) {
			return nil
		}
		return bootstrap.KubernetesService(ctx, loopbackClient, c.port(), c.Options.ServiceRanges)
	})
	// The default ServiceCIDR, under upstream's hook name.
	afterSynced("start-kubernetes-service-cidr-controller", func(ctx context.Context) error {
		return bootstrap.ServiceCIDR(ctx, loopbackClient, c.Options.ServiceRanges)
	})
	if c.Serving.ClientCA != nil || c.Serving.RequestHeader != nil {
		afterSynced("start-cluster-authentication-info-controller", func(ctx context.Context) error {
			return bootstrap.AuthenticationInfo(ctx, loopbackClient, c.Serving.ClientCA, c.Serving.RequestHeader)
		})
	}
	// The record of node ports and the IPAddresses of cluster IPs are
	// repaired before the server is ready, then every
	// controllers.RepairInterval (kube-apiserver's hook of this name).
	generic.AddPostStartHookOrDie("start-service-ip-repair-controllers", func(hc genericapiserver.PostStartHookContext) error {
		if err := controllers.FirstRepair(hc, a.services, parts.peers.Alone); err != nil {
			return err
		}
		running.Go(func() { controllers.RepairEvery(loopbackCtx, a.services, parts.peers.Alone) })
		return nil
	})
	afterSynced("start-legacy-token-tracking-controller", func(ctx context.Context) error {
		return bootstrap.LegacyTokenTracking(ctx, loopbackClient)
	})
	afterSynced("scheduling/bootstrap-system-priority-classes", func(ctx context.Context) error {
		return bootstrap.PriorityClasses(ctx, loopbackClient)
	})
	if parts.config.FlowControl != nil {
		fcSynced := []cache.InformerSynced{fc.PriorityLevelConfigurations().Informer().HasSynced, fc.FlowSchemas().Informer().HasSynced}
		afterSynced("priority-and-fairness-config-producer", func(ctx context.Context) error {
			keep, err := bootstrap.FlowControl(ctx, loopbackClient.FlowcontrolV1(), fc.FlowSchemas().Lister(), fc.PriorityLevelConfigurations().Lister(), fcSynced)
			if err == nil {
				running.Go(func() { keep(loopbackCtx) })
			}
			return err
		})
	}
	// The RBAC informers (the authorizer's, and the aggregation
	// controller's) are made now, so that generic-apiserver-start-informers
	// starts them.
	rbac := factory.Rbac().V1()
	rbacSynced := []cache.DoneChecker{rbac.Roles().Informer().HasSyncedChecker(), rbac.RoleBindings().Informer().HasSyncedChecker(),
		rbac.ClusterRoles().Informer().HasSyncedChecker(), rbac.ClusterRoleBindings().Informer().HasSyncedChecker()}
	aggregated := controllers.Enabled(c.Options.Controllers, controllers.ClusterRoleAggregation)
	afterSynced("rbac/bootstrap-roles", func(ctx context.Context) error {
		return bootstrap.RBAC(ctx, loopbackClient, rbacSynced, rbac.ClusterRoles().Lister(), aggregated)
	})
	if !parts.peers.Embedded() {
		generic.AddPostStartHookOrDie("start-kube-apiserver-identity-lease-controller", func(hc genericapiserver.PostStartHookContext) error {
			running.Go(func() { parts.peers.RunIdentityLease(loopbackCtx, loopbackClient) })
			// Ready once it knows whether it is alone.
			parts.peers.Watch(loopbackCtx, hc, loopbackClient, &running)
			return nil
		})
	}
	for _, c := range controllers.List(c.controllersConfig(loopbackClient, a, parts)) {
		generic.AddPostStartHookOrDie(c.Name, func(hc genericapiserver.PostStartHookContext) error {
			run, err := c.Start(serving.Finishing(hc.LoopbackClientConfig))
			if err != nil {
				return err
			}
			running.Go(func() { run(loopbackCtx) })
			return nil
		})
	}
	return stop, nil
}

// flowSchemaStatusTimeout bounds how long a stop waits for priority and
// fairness to write the FlowSchemas' status (bootstrap.WaitFlowSchemaStatus).
// It writes them one at a time, so a stop soon after a start waits for a
// dozen writes: under a loaded make test, longer than 2 s. The wait ends
// long before the bound unless the writes cannot be made (etcd lost in
// between), or priority and fairness holds them back (a FlowSchema whose
// status it wrote over 5 times in a minute).
const flowSchemaStatusTimeout = 10 * time.Second

// controllersConfig is the config of the in-server controllers, whose
// client is client.
func (c CompletedConfig) controllersConfig(client kubernetes.Interface, a *apiServer, parts *genericParts) controllers.Config {
	cfg := controllers.Config{Client: client, Loopback: serving.Finishing(parts.config.LoopbackClientConfig), Factory: parts.factory, Controllers: c.Options.Controllers,
		RootCA: c.Serving.ServingCA, Namespaced: a.namespaced, Alone: parts.peers.Alone}
	if ca := c.userCA; ca != nil {
		cfg.SigningCert, cfg.SigningKey = ca.CACert, ca.CAKey
	}
	return cfg
}

// afterSync waits until synced closes, and reports whether it has (false:
// ctx ended first).
func afterSync(ctx context.Context, synced <-chan struct{}) bool {
	select {
	case <-synced:
		return true
	case <-ctx.Done():
		return false
	}
}

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
	"fmt"
	"net/http"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	discoveryendpoint "k8s.io/apiserver/pkg/endpoints/discovery/aggregated"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/auth"
	generatedopenapi "github.com/miniapiserver/miniapiserver/pkg/generated/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/server/admissionchain"
	serveropenapi "github.com/miniapiserver/miniapiserver/pkg/server/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/server/peers"
	"github.com/miniapiserver/miniapiserver/pkg/server/serving"
	serverstorage "github.com/miniapiserver/miniapiserver/pkg/server/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols"
	"github.com/miniapiserver/miniapiserver/pkg/version"
)

// genericParts are what genericConfig makes besides the config.
type genericParts struct {
	config    *genericapiserver.Config
	factory   informers.SharedInformerFactory
	admission *admissionchain.Deferred
	// tokens authenticates every bearer token (TokenReview asks it);
	// serviceAccounts issues and checks service account tokens.
	tokens          authenticator.Token
	serviceAccounts *auth.ServiceAccountTokens
	// server is the generic server built from config, once New has built
	// it: shutdown waits for its requests.
	server *atomic.Pointer[genericapiserver.GenericAPIServer]
	// peers says whether other servers share the etcd.
	peers *peers.Peers
}

// genericConfig is the generic API server's config: serving, authn/z,
// admission, OpenAPI, health checks and storage.
func (c CompletedConfig) genericConfig(ctx context.Context, backend *storagebackend.Config, storages *serverstorage.Storages, faults *testcontrols.Faults,
	admissionDone, ready <-chan struct{},
) (*genericParts, error) {
	gc := genericapiserver.NewConfig(api.Codecs)
	gc.EffectiveVersion = version.EffectiveVersion()
	gc.FeatureGate = utilfeature.DefaultFeatureGate
	gc.PublicAddress = c.Serving.PublicAddress
	// kube-apiserver's: watches, and the subresources that stream (logs,
	// exec, attach, port forwarding), escape the request timeout and the
	// in-flight limits.
	gc.LongRunningFunc = genericfilters.BasicLongRunningRequestCheck(sets.NewString("watch", "proxy"), sets.NewString("attach", "exec", "proxy", "log", "portforward"))
	parts := &genericParts{config: gc, server: &atomic.Pointer[genericapiserver.GenericAPIServer]{},
		peers: peers.New(len(c.Options.EtcdServers) == 0, c.Serving.SecureServing.Listener.Addr().String())}

	// Shutdown closes the connections once requests have drained and the
	// watch handlers have returned (the generic server, made from gc, is
	// not there yet when this runs).
	watches := &serving.WatchHandlers{}
	logger := klog.FromContext(ctx)
	gc.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
		// The authenticator is complete now, loopback token included.
		c.Authentication.Authenticator = auth.QuietFailures(c.Authentication.Authenticator)
		if faults != nil { // after authentication and impersonation: rules match the user
			h = faults.Handler(h, api.Codecs)
		}
		return serving.WithLogger(genericapiserver.DefaultBuildHandlerChain(watches.Wrap(serving.WithGzip(h)), c), logger)
	}
	drained := func() {
		if g := parts.server.Load(); g != nil {
			g.NonLongRunningRequestWaitGroup.Wait()
		}
		watches.Wait(watchDrainTimeout)
	}
	secure := *c.Serving.SecureServing
	listener := serving.NewClosingListener(secure.Listener, drained)
	watches.ConnWritten = listener.LastWrite
	secure.Listener = listener
	secure.ClientCA = c.Serving.ClientCA
	if rh := c.Serving.RequestHeader; rh != nil { // a front proxy's certificates are asked for too
		if err := gc.Authentication.ApplyClientCert(rh.CAContentProvider, &secure); err != nil {
			return nil, err
		}
	}
	gc.SecureServing = &secure

	loopback := rest.CopyConfig(c.Serving.Loopback)
	loopback.QPS = -1
	loopback.ContentType = "application/vnd.kubernetes.protobuf"
	loopback.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	gc.LoopbackClientConfig = loopback
	client, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		return nil, err
	}
	if err := c.authenticate(gc, parts, auth.ClientLookup{Client: client}); err != nil {
		return nil, err
	}
	parts.factory = informers.NewSharedInformerFactory(client, 0)
	if gc.Authorization.Authorizer, gc.RuleResolver, err = auth.NewAuthorizer(c.Options.AuthorizationMode, parts.factory); err != nil {
		return nil, err
	}
	// Complete adds the loopback token (AuthorizeClientBearerToken).

	namer := openapi.NewDefinitionNamer(api.Scheme)
	gc.OpenAPIConfig, gc.OpenAPIV3Config = serveropenapi.Configs(generatedopenapi.GetOpenAPIDefinitions, namer)
	gc.SkipOpenAPIInstallation = true // see openAPI

	backend.StorageObjectCountTracker = gc.StorageObjectCountTracker
	gc.RESTOptionsGetter = storage.RESTOptionsGetter{Config: backend, Decorator: storages.Decorator, GarbageCollection: c.Options.GarbageCollection,
		SoleServer: parts.peers.Alone}
	// Shared with the apiextensions server, which adds the CRD groups.
	gc.AggregatedDiscoveryGroupManager = discoveryendpoint.NewResourceManager("apis")
	if err := serverstorage.AddEtcdChecks(ctx, gc, backend); err != nil {
		return nil, err
	}

	parts.admission, err = admissionchain.Add(admissionchain.Config{Generic: gc, Plugins: c.Options.admissionOptions(), Factory: parts.factory,
		Client: client, Loopback: loopback, Services: c.Options.WebhookServices, Ready: ready, Done: admissionDone,
		DefaultNotReadyTolerationSeconds:    c.Options.DefaultNotReadyTolerationSeconds,
		DefaultUnreachableTolerationSeconds: c.Options.DefaultUnreachableTolerationSeconds})
	if err != nil {
		return nil, err
	}
	if c.Generic != nil {
		if err := c.Generic(gc); err != nil {
			return nil, err
		}
	}
	if c.Options.PriorityAndFairness {
		// As k8s.io/apiserver's FeatureOptions.ApplyTo, after the
		// max-in-flight limits are set: their sum is the concurrency limit.
		if gc.MaxRequestsInFlight+gc.MaxMutatingRequestsInFlight <= 0 {
			return nil, fmt.Errorf("invalid configuration: MaxRequestsInFlight=%d and MaxMutatingRequestsInFlight=%d; they must add up to something positive",
				gc.MaxRequestsInFlight, gc.MaxMutatingRequestsInFlight)
		}
		gc.FlowControl = utilflowcontrol.New(parts.factory, client.FlowcontrolV1(), gc.MaxRequestsInFlight+gc.MaxMutatingRequestsInFlight)
	}
	return parts, nil
}

// authenticate sets gc's authenticator and API audiences, and parts'
// tokens and service accounts, from c's Serving.
func (c CompletedConfig) authenticate(gc *genericapiserver.Config, parts *genericParts, lookup auth.Lookup) error {
	s := c.Serving
	gc.Authentication.APIAudiences = s.APIAudiences
	parts.serviceAccounts = &auth.ServiceAccountTokens{Key: s.ServiceAccounts.Signer, PublicKeys: s.ServiceAccounts.PublicKeys,
		Issuers: s.ServiceAccounts.Issuers, Audiences: s.APIAudiences, Lookup: lookup}
	var err error
	if parts.tokens, err = auth.NewTokenAuthenticator(s.AdminToken, c.Options.TokenAuthFile, parts.serviceAccounts); err != nil {
		return err
	}
	gc.Authentication.Authenticator = auth.NewAuthenticator(s.ClientCA, s.RequestHeader, parts.tokens, s.Anonymous)
	gc.Authentication.RequestHeaderConfig = s.RequestHeader // the filter drops the headers once used
	return nil
}

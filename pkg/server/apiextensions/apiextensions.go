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

package apiextensions

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/trace/noop"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	endpointsopenapi "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/notfoundhandler"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/common"

	"github.com/miniapiserver/miniapiserver/pkg/server/encoding"
	"github.com/miniapiserver/miniapiserver/pkg/server/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/server/serving"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Config is what New builds the apiextensions-apiserver from.
type Config struct {
	// Core is the core server's generic config, which New copies (it
	// does not change it). Its RESTOptionsGetter is a
	// storage.RESTOptionsGetter: CRDs and custom resources are stored
	// through it as built-in types are.
	Core *genericapiserver.Config
	// Loopback serves the server's own clients (its CRD informer and
	// controllers) in process.
	Loopback *serving.InProcess
	// Services resolves the service references of conversion webhooks,
	// as admission webhooks' are resolved.
	Services webhook.ServiceResolver
	// Lists learns of the custom resources' storages it writes LISTs of.
	Lists *encoding.CustomResourceLists
}

// Server is the apiextensions-apiserver and the OpenAPI configs of its
// built-in API, which the core server serves.
type Server struct {
	*apiextensionsapiserver.CustomResourceDefinitions
	openAPIConfig   *common.Config
	openAPIV3Config *common.OpenAPIV3Config
}

// New builds the apiextensions-apiserver that serves
// CustomResourceDefinitions and custom resources, as kube-apiserver builds
// it: from a copy of the core server's config, as the core server's
// delegate (requests the core server has no route for go to it). CRDs and
// custom resources are stored through the same decorator as built-in types,
// so custom resources get the same watch caches.
//
// The aggregator in front of both (pkg/server/aggregator) lists the CRD
// groups in discovery, as in kube-apiserver; the servers share the
// aggregated discovery manager, and the core server serves the OpenAPI of
// both (Serve).
//
// Its own clients of the server (its CRD informer and controllers) go
// through loopback, which serves them in process: pkg/server's Run syncs
// the CRD informer before the server listens, so that the readiness check
// waiting for it passes at once.
func New(c Config) (*Server, error) {
	switch {
	case c.Core == nil:
		return nil, errors.New("apiextensions: Config.Core is required")
	case c.Loopback == nil:
		return nil, errors.New("apiextensions: Config.Loopback is required")
	case c.Lists == nil:
		return nil, errors.New("apiextensions: Config.Lists is required")
	}
	core := c.Core
	getter, ok := core.RESTOptionsGetter.(storage.RESTOptionsGetter)
	if !ok {
		return nil, fmt.Errorf("apiextensions: Config.Core.RESTOptionsGetter is a %T, not a storage.RESTOptionsGetter", core.RESTOptionsGetter)
	}
	gc := *core
	gc.LoopbackClientConfig = rest.CopyConfig(core.LoopbackClientConfig)
	gc.LoopbackClientConfig.TLSClientConfig = rest.TLSClientConfig{}
	gc.LoopbackClientConfig.Transport = c.Loopback
	gc.PostStartHooks = map[string]genericapiserver.PostStartHookConfigEntry{}
	gc.RESTOptionsGetter = storage.CRDRESTOptionsGetter(getter)
	gc.MergedResourceConfig = apiextensionsapiserver.DefaultAPIResourceConfigSource()
	namer := endpointsopenapi.NewDefinitionNamer(apiextensionsapiserver.Scheme)
	gc.OpenAPIConfig, gc.OpenAPIV3Config = openapi.Configs(apiextensionsopenapi.GetOpenAPIDefinitions, namer)
	// Its OpenAPI is served by the core server's handlers (see Serve);
	// the configs still give server-side apply its schemas.
	gc.SkipOpenAPIInstallation = true
	config := &apiextensionsapiserver.Config{
		// No SharedInformerFactory: the server would start the core
		// server's factory itself, with a stop channel that closes only
		// after the loopback clients' shutdown waits for its informers.
		GenericConfig: &genericapiserver.RecommendedConfig{Config: gc},
		ExtraConfig: apiextensionsapiserver.ExtraConfig{
			CRDRESTOptionsGetter: storage.CustomResourceRESTOptionsGetter{RESTOptionsGetter: getter, Made: c.Lists.Made},
			MasterCount:          1,
			// Conversion webhooks: a service reference resolves as admission webhooks' do.
			ServiceResolver:     c.Services,
			AuthResolverWrapper: webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, core.LoopbackClientConfig, noop.NewTracerProvider()),
		},
	}
	// The end of the delegation chain, as kube-apiserver's: a path no
	// server serves is a plain 404 (a 503 before the paths are installed).
	notFound := notfoundhandler.New(gc.Serializer, genericapifilters.NoMuxAndDiscoveryIncompleteKey)
	s, err := config.Complete().New(genericapiserver.NewEmptyDelegateWithCustomHandler(notFound))
	if err != nil {
		return nil, err
	}
	return &Server{CustomResourceDefinitions: s, openAPIConfig: gc.OpenAPIConfig, openAPIV3Config: gc.OpenAPIV3Config}, nil
}

// OpenAPI is what the core server's OpenAPI takes of s: the web services
// of apiextensions.k8s.io and its versions, and configs.
func (s *Server) OpenAPI() openapi.Extensions {
	services := openapi.GroupServices(s.GenericAPIServer.Handler.GoRestfulContainer, apiextensionsv1.GroupName)
	return openapi.Extensions{WebServices: services, V2: s.openAPIConfig, V3: s.openAPIV3Config}
}

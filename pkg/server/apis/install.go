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

package apis

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
	"github.com/miniapiserver/miniapiserver/pkg/server/encoding"
	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// Config is what Install serves the APIs with; Server, RESTOptionsGetter
// and the Identity are required.
type Config struct {
	// Server is the generic API server the groups are installed in.
	Server *genericapiserver.GenericAPIServer
	// RESTOptionsGetter gives each resource its storage.
	RESTOptionsGetter generic.RESTOptionsGetter
	// Encodings hands LISTs from the watch caches their items' kept
	// encodings; nil without watch caches.
	Encodings *watchcache.Encodings
	// Identity answers the reviews and issues service account tokens.
	Identity Identity
	// ServiceRanges are the services' cluster IP and node port ranges,
	// which Install refuses unless valid.
	ServiceRanges service.Ranges
	// Kubelet is how pods/log and the streams reach the kubelets; its
	// Nodes is ignored: they read the nodes Install serves.
	Kubelet pod.KubeletConfig
	// Etcd is the storage backend componentstatuses probe.
	Etcd storagebackend.Config
}

// Installed is what Install made that the rest of the server uses.
type Installed struct {
	// Namespaced are the namespaced resources, each in its group's
	// preferred version (not subresources, nor the reviews, which hold
	// nothing): what the namespace controller empties.
	Namespaced []schema.GroupVersionResource
	// Services is the storage of services, whose allocator the node
	// ports' repair loop reads.
	Services *service.Storage
}

// Install serves core/v1 under /api and the other groups under /apis in
// cfg.Server.
func Install(cfg Config) (*Installed, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r, err := newResources(cfg.RESTOptionsGetter, cfg.ServiceRanges)
	if err != nil {
		return nil, err
	}
	coreStorage, err := cfg.coreStorage(r)
	if err != nil {
		return nil, err
	}
	core := genericapiserver.NewDefaultAPIGroupInfo("", api.Scheme, api.ParameterCodec, api.Codecs)
	core.NegotiatedSerializer = encoding.WithCachedListEncoding(core.NegotiatedSerializer, cfg.Encodings)
	core.VersionedResourcesStorageMap["v1"] = coreStorage
	if err := cfg.Server.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, &core); err != nil {
		return nil, fmt.Errorf("installing core/v1: %w", err)
	}
	groups, err := cfg.groups(r)
	if err != nil {
		return nil, err
	}
	if err := cfg.Server.InstallAPIGroups(groups...); err != nil {
		return nil, fmt.Errorf("installing API groups: %w", err)
	}
	cfg.Identity.installIssuerDiscovery(cfg.Server)
	namespaced := namespacedResources(corev1.SchemeGroupVersion, coreStorage)
	for _, g := range groups[:len(groups)-1] { // events.k8s.io Events are core Events
		// Each group's resources once, in its preferred version.
		preferred := g.PrioritizedVersions[0]
		namespaced = append(namespaced, namespacedResources(preferred, g.VersionedResourcesStorageMap[preferred.Version])...)
	}
	return &Installed{Namespaced: namespaced, Services: r.services}, nil
}

func (cfg *Config) validate() error {
	switch {
	case cfg.Server == nil:
		return errors.New("apis: Config.Server is required")
	case cfg.RESTOptionsGetter == nil:
		return errors.New("apis: Config.RESTOptionsGetter is required")
	case cfg.Identity.Authorizer == nil:
		return errors.New("apis: Config.Identity.Authorizer is required")
	case cfg.Identity.Rules == nil:
		return errors.New("apis: Config.Identity.Rules is required")
	case cfg.Identity.Tokens == nil:
		return errors.New("apis: Config.Identity.Tokens is required")
	case cfg.Identity.ServiceAccounts == nil:
		return errors.New("apis: Config.Identity.ServiceAccounts is required")
	}
	return nil
}

package server

import (
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/configmap"
	"github.com/miniapiserver/miniapiserver/pkg/registry/event"
	"github.com/miniapiserver/miniapiserver/pkg/registry/lease"
	"github.com/miniapiserver/miniapiserver/pkg/registry/namespace"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
	"github.com/miniapiserver/miniapiserver/pkg/registry/podtemplate"
	"github.com/miniapiserver/miniapiserver/pkg/registry/secret"
	"github.com/miniapiserver/miniapiserver/pkg/registry/serviceaccount"
	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

type storageFunc func(generic.RESTOptionsGetter) (map[string]rest.Storage, error)

// installAPIs serves core/v1 under /api and coordination.k8s.io/v1 under
// /apis; lists from the watch caches are encoded from their items' kept
// encodings, which encodings hands over (nil without watch caches).
func installAPIs(s *genericapiserver.GenericAPIServer, optsGetter generic.RESTOptionsGetter, encodings *watchcache.Encodings) error {
	core := genericapiserver.NewDefaultAPIGroupInfo("", api.Scheme, api.ParameterCodec, api.Codecs)
	core.NegotiatedSerializer = withCachedListEncoding(core.NegotiatedSerializer, encodings)
	coreStorage, err := collect(optsGetter, namespace.NewStorage, configmap.NewStorage, secret.NewStorage,
		pod.NewStorage, podtemplate.NewStorage, serviceaccount.NewStorage, event.NewStorage)
	if err != nil {
		return err
	}
	core.VersionedResourcesStorageMap["v1"] = coreStorage
	if err := s.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, &core); err != nil {
		return fmt.Errorf("installing core/v1: %w", err)
	}

	coordination := genericapiserver.NewDefaultAPIGroupInfo(coordinationv1.GroupName, api.Scheme, metav1.ParameterCodec, api.Codecs)
	coordination.NegotiatedSerializer = withCachedListEncoding(coordination.NegotiatedSerializer, encodings)
	coordinationStorage, err := collect(optsGetter, lease.NewStorage)
	if err != nil {
		return err
	}
	coordination.VersionedResourcesStorageMap["v1"] = coordinationStorage
	if err := s.InstallAPIGroup(&coordination); err != nil {
		return fmt.Errorf("installing coordination.k8s.io/v1: %w", err)
	}
	return nil
}

func collect(optsGetter generic.RESTOptionsGetter, fns ...storageFunc) (map[string]rest.Storage, error) {
	all := map[string]rest.Storage{}
	for _, fn := range fns {
		m, err := fn(optsGetter)
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			all[k] = v
		}
	}
	return all, nil
}

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
	"maps"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/admissionregistration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apps"
	"github.com/miniapiserver/miniapiserver/pkg/registry/batch"
	"github.com/miniapiserver/miniapiserver/pkg/registry/certificatesigningrequest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/clustertrustbundle"
	"github.com/miniapiserver/miniapiserver/pkg/registry/controllerrevision"
	"github.com/miniapiserver/miniapiserver/pkg/registry/csidriver"
	"github.com/miniapiserver/miniapiserver/pkg/registry/csinode"
	"github.com/miniapiserver/miniapiserver/pkg/registry/csistoragecapacity"
	"github.com/miniapiserver/miniapiserver/pkg/registry/dra"
	"github.com/miniapiserver/miniapiserver/pkg/registry/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/registry/horizontalpodautoscaler"
	"github.com/miniapiserver/miniapiserver/pkg/registry/ingress"
	"github.com/miniapiserver/miniapiserver/pkg/registry/ingressclass"
	"github.com/miniapiserver/miniapiserver/pkg/registry/lease"
	"github.com/miniapiserver/miniapiserver/pkg/registry/networkpolicy"
	"github.com/miniapiserver/miniapiserver/pkg/registry/podcertificaterequest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/priorityclass"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac"
	"github.com/miniapiserver/miniapiserver/pkg/registry/review"
	"github.com/miniapiserver/miniapiserver/pkg/registry/runtimeclass"
	"github.com/miniapiserver/miniapiserver/pkg/registry/servicecidr"
	"github.com/miniapiserver/miniapiserver/pkg/registry/storageclass"
	"github.com/miniapiserver/miniapiserver/pkg/registry/storageversionmigration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/volumeattachment"
	"github.com/miniapiserver/miniapiserver/pkg/registry/volumeattributesclass"
	"github.com/miniapiserver/miniapiserver/pkg/server/encoding"
)

type storageFunc func(generic.RESTOptionsGetter) (map[string]rest.Storage, error)

// apiGroups are the served groups (all at v1) and the storage of each.
// events.k8s.io serves the core Events' storage, and autoscaling serves
// v2 and v1 (see groups).
var apiGroups = []struct {
	group    string
	storages []storageFunc
}{
	{admissionregistrationv1.GroupName, []storageFunc{admissionregistration.NewStorage}},
	{appsv1.GroupName, []storageFunc{apps.NewStorage, controllerrevision.NewStorage}},
	{batchv1.GroupName, []storageFunc{batch.NewStorage}},
	{certificatesv1.GroupName, []storageFunc{certificatesigningrequest.NewStorage, clustertrustbundle.NewStorage}},
	{coordinationv1.GroupName, []storageFunc{lease.NewStorage}},
	{discoveryv1.GroupName, nil}, // endpointslices: newResources makes them, for services/proxy too
	{networkingv1.GroupName, []storageFunc{ingress.NewStorage, networkpolicy.NewStorage, ingressclass.NewStorage, servicecidr.NewStorage}},
	{nodev1.GroupName, []storageFunc{runtimeclass.NewStorage}},
	{policyv1.GroupName, nil}, // poddisruptionbudgets: newResources makes them, for pods/eviction too
	{rbacv1.GroupName, []storageFunc{rbac.NewStorage}},
	{schedulingv1.GroupName, []storageFunc{priorityclass.NewStorage}},
	{storagev1.GroupName, []storageFunc{storageclass.NewStorage, csidriver.NewStorage, csinode.NewStorage, csistoragecapacity.NewStorage,
		volumeattachment.NewStorage, volumeattributesclass.NewStorage}},
	{resourcev1.GroupName, []storageFunc{dra.NewStorage}},
	{storagemigrationv1.GroupName, []storageFunc{storageversionmigration.NewStorage}},
	{flowcontrolv1.GroupName, []storageFunc{flowcontrol.NewStorage}},
}

// GroupVersions are the group versions Install serves: core v1, each of
// apiGroups' at v1, authorization and authentication v1, autoscaling v2 and
// v1, and events.k8s.io v1.
func GroupVersions() []schema.GroupVersion {
	gvs := []schema.GroupVersion{{Version: "v1"}}
	for _, g := range apiGroups {
		gvs = append(gvs, schema.GroupVersion{Group: g.group, Version: "v1"})
	}
	return append(gvs, authorizationv1.SchemeGroupVersion, authenticationv1.SchemeGroupVersion,
		autoscalingv2.SchemeGroupVersion, autoscalingv1.SchemeGroupVersion, eventsv1.SchemeGroupVersion)
}

// groups are the groups served under /apis, with r's endpointslices,
// ipaddresses, poddisruptionbudgets and events, and the storages that need
// the authorizer; events.k8s.io last.
func (cfg *Config) groups(r resources) ([]*genericapiserver.APIGroupInfo, error) {
	var groups []*genericapiserver.APIGroupInfo
	for _, g := range apiGroups {
		info := cfg.groupInfo(g.group)
		storage, err := collect(cfg.RESTOptionsGetter, g.storages...)
		if err != nil {
			return nil, err
		}
		switch g.group {
		case discoveryv1.GroupName:
			maps.Copy(storage, r.endpointSlices)
		case networkingv1.GroupName:
			maps.Copy(storage, r.ipAddresses.Map())
		case policyv1.GroupName:
			maps.Copy(storage, r.budgets.Map())
		case certificatesv1.GroupName:
			// podcertificaterequests ask the authorizer who may sign.
			requests, err := podcertificaterequest.NewStorage(cfg.RESTOptionsGetter, podcertificaterequest.Config{Authorizer: cfg.Identity.Authorizer})
			if err != nil {
				return nil, err
			}
			maps.Copy(storage, requests)
		case rbacv1.GroupName:
			rbac.WithEscalationChecks(storage, rbac.Escalation{Authorizer: cfg.Identity.Authorizer, Rules: cfg.Identity.Rules})
		}
		info.VersionedResourcesStorageMap["v1"] = storage
		groups = append(groups, &info)
	}
	for group, storage := range map[string]map[string]rest.Storage{
		authorizationv1.GroupName:  review.NewAuthorizationStorage(cfg.Identity.Authorizer, cfg.Identity.Rules),
		authenticationv1.GroupName: review.NewAuthenticationStorage(bearertoken.New(cfg.Identity.Tokens)),
	} {
		info := genericapiserver.NewDefaultAPIGroupInfo(group, api.Scheme, api.ParameterCodec, api.Codecs)
		info.VersionedResourcesStorageMap["v1"] = storage
		groups = append(groups, &info)
	}
	// autoscaling serves HorizontalPodAutoscalers in v2 (preferred, and
	// stored) and in v1, converted: one store, hence one watch cache.
	hpas, err := horizontalpodautoscaler.NewStorage(cfg.RESTOptionsGetter)
	if err != nil {
		return nil, err
	}
	autoscaling := cfg.groupInfo(autoscalingv1.GroupName)
	autoscaling.VersionedResourcesStorageMap["v2"] = hpas
	autoscaling.VersionedResourcesStorageMap["v1"] = maps.Clone(hpas)
	groups = append(groups, &autoscaling)
	// events.k8s.io/v1 Events are core Events, converted (upstream stores
	// them in one place too): the same store, hence the same watch cache.
	events := genericapiserver.NewDefaultAPIGroupInfo(eventsv1.GroupName, api.Scheme, api.ParameterCodec, api.Codecs)
	events.VersionedResourcesStorageMap["v1"] = r.events.Map()
	return append(groups, &events), nil
}

// groupInfo is group's, its LISTs encoded from the watch caches' kept
// encodings.
func (cfg *Config) groupInfo(group string) genericapiserver.APIGroupInfo {
	info := genericapiserver.NewDefaultAPIGroupInfo(group, api.Scheme, api.ParameterCodec, api.Codecs)
	info.NegotiatedSerializer = encoding.WithCachedListEncoding(info.NegotiatedSerializer, cfg.Encodings)
	return info
}

// namespacedResources returns the namespaced resources (not subresources,
// nor the reviews, which hold nothing) of storage, sorted.
func namespacedResources(gv schema.GroupVersion, storage map[string]rest.Storage) []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	for _, resource := range slices.Sorted(maps.Keys(storage)) {
		_, lister := storage[resource].(rest.Lister)
		if s, ok := storage[resource].(rest.Scoper); ok && lister && s.NamespaceScoped() && !strings.Contains(resource, "/") {
			out = append(out, gv.WithResource(resource))
		}
	}
	return out
}

// collect is the storages fns make, by resource.
func collect(optsGetter generic.RESTOptionsGetter, fns ...storageFunc) (map[string]rest.Storage, error) {
	all := map[string]rest.Storage{}
	for _, fn := range fns {
		m, err := fn(optsGetter)
		if err != nil {
			return nil, err
		}
		maps.Copy(all, m)
	}
	return all, nil
}

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
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/auth"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/admissionregistration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apps"
	"github.com/miniapiserver/miniapiserver/pkg/registry/batch"
	"github.com/miniapiserver/miniapiserver/pkg/registry/certificatesigningrequest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/clustertrustbundle"
	"github.com/miniapiserver/miniapiserver/pkg/registry/componentstatus"
	"github.com/miniapiserver/miniapiserver/pkg/registry/configmap"
	"github.com/miniapiserver/miniapiserver/pkg/registry/controllerrevision"
	"github.com/miniapiserver/miniapiserver/pkg/registry/csidriver"
	"github.com/miniapiserver/miniapiserver/pkg/registry/csinode"
	"github.com/miniapiserver/miniapiserver/pkg/registry/csistoragecapacity"
	"github.com/miniapiserver/miniapiserver/pkg/registry/dra"
	"github.com/miniapiserver/miniapiserver/pkg/registry/endpoints"
	"github.com/miniapiserver/miniapiserver/pkg/registry/endpointslice"
	"github.com/miniapiserver/miniapiserver/pkg/registry/event"
	"github.com/miniapiserver/miniapiserver/pkg/registry/horizontalpodautoscaler"
	"github.com/miniapiserver/miniapiserver/pkg/registry/ingress"
	"github.com/miniapiserver/miniapiserver/pkg/registry/ingressclass"
	"github.com/miniapiserver/miniapiserver/pkg/registry/ipaddress"
	"github.com/miniapiserver/miniapiserver/pkg/registry/lease"
	"github.com/miniapiserver/miniapiserver/pkg/registry/limitrange"
	"github.com/miniapiserver/miniapiserver/pkg/registry/namespace"
	"github.com/miniapiserver/miniapiserver/pkg/registry/networkpolicy"
	"github.com/miniapiserver/miniapiserver/pkg/registry/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolume"
	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolumeclaim"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
	"github.com/miniapiserver/miniapiserver/pkg/registry/poddisruptionbudget"
	"github.com/miniapiserver/miniapiserver/pkg/registry/podtemplate"
	"github.com/miniapiserver/miniapiserver/pkg/registry/priorityclass"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac"
	"github.com/miniapiserver/miniapiserver/pkg/registry/replicationcontroller"
	"github.com/miniapiserver/miniapiserver/pkg/registry/resourcequota"
	"github.com/miniapiserver/miniapiserver/pkg/registry/review"
	"github.com/miniapiserver/miniapiserver/pkg/registry/runtimeclass"
	"github.com/miniapiserver/miniapiserver/pkg/registry/secret"
	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
	"github.com/miniapiserver/miniapiserver/pkg/registry/serviceaccount"
	"github.com/miniapiserver/miniapiserver/pkg/registry/servicecidr"
	"github.com/miniapiserver/miniapiserver/pkg/registry/storageclass"
	"github.com/miniapiserver/miniapiserver/pkg/registry/storageversionmigration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/volumeattachment"
	"github.com/miniapiserver/miniapiserver/pkg/registry/volumeattributesclass"
	"github.com/miniapiserver/miniapiserver/pkg/server/encoding"
	"github.com/miniapiserver/miniapiserver/pkg/version"
	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

type storageFunc func(generic.RESTOptionsGetter) (map[string]rest.Storage, error)

// apiGroups are the served groups (all at v1) and the storage of each.
// events.k8s.io serves the core Events' storage, and autoscaling serves
// v2 and v1 (see installAPIs).
var apiGroups = []struct {
	group    string
	storages []storageFunc
}{
	{admissionregistrationv1.GroupName, []storageFunc{admissionregistration.NewStorage}},
	{appsv1.GroupName, []storageFunc{apps.NewStorage, controllerrevision.NewStorage}},
	{batchv1.GroupName, []storageFunc{batch.NewStorage}},
	{certificatesv1.GroupName, []storageFunc{certificatesigningrequest.NewStorage, clustertrustbundle.NewStorage}},
	{coordinationv1.GroupName, []storageFunc{lease.NewStorage}},
	{discoveryv1.GroupName, []storageFunc{endpointslice.NewStorage}},
	{networkingv1.GroupName, []storageFunc{ingress.NewStorage, networkpolicy.NewStorage, ingressclass.NewStorage, servicecidr.NewStorage}},
	{nodev1.GroupName, []storageFunc{runtimeclass.NewStorage}},
	{policyv1.GroupName, nil}, // poddisruptionbudgets: installAPIs makes them, for pods/eviction too
	{rbacv1.GroupName, []storageFunc{rbac.NewStorage}},
	{schedulingv1.GroupName, []storageFunc{priorityclass.NewStorage}},
	{storagev1.GroupName, []storageFunc{storageclass.NewStorage, csidriver.NewStorage, csinode.NewStorage, csistoragecapacity.NewStorage,
		volumeattachment.NewStorage, volumeattributesclass.NewStorage}},
	{resourcev1.GroupName, []storageFunc{dra.NewStorage}},
	{storagemigrationv1.GroupName, []storageFunc{storageversionmigration.NewStorage}},
}

// identity is what the APIs that authenticate and authorize answer with:
// the reviews and service account tokens.
type identity struct {
	authorizer authorizer.Authorizer
	rules      authorizer.RuleResolver
	// tokens authenticates bearer tokens (TokenReview).
	tokens authenticator.Token
	// serviceAccounts issues TokenRequest's tokens.
	serviceAccounts *auth.ServiceAccountTokens
}

// issue is a serviceaccount.IssueFunc over id.serviceAccounts.
func (id identity) issue(sa *corev1.ServiceAccount, audiences []string, ttl time.Duration, kind, name string, uid types.UID) (string, time.Time, error) {
	var binding *auth.Binding
	if kind != "" {
		binding = &auth.Binding{Kind: kind, Name: name, UID: string(uid)}
	}
	return id.serviceAccounts.Issue(sa, audiences, ttl, binding)
}

// installAPIs serves core/v1 under /api and the other groups under /apis;
// lists from the watch caches are encoded from their items' kept
// encodings, which encodings hands over (nil without watch caches);
// componentstatuses probe etcd. It returns the namespaced resources, which
// the namespace controller empties.
func installAPIs(s *genericapiserver.GenericAPIServer, optsGetter generic.RESTOptionsGetter, encodings *watchcache.Encodings, id identity, ranges service.Ranges,
	kubelet KubeletOptions, etcd storagebackend.Config) (namespaced []schema.GroupVersionResource, services *service.Storage, err error) {
	core := genericapiserver.NewDefaultAPIGroupInfo("", api.Scheme, api.ParameterCodec, api.Codecs)
	core.NegotiatedSerializer = encoding.WithCachedListEncoding(core.NegotiatedSerializer, encodings)
	r, err := newResources(optsGetter, ranges)
	if err != nil {
		return nil, nil, err
	}
	services = r.services
	coreStorage, err := collect(optsGetter, namespace.NewStorage, configmap.NewStorage, podtemplate.NewStorage, endpoints.NewStorage,
		persistentvolumeclaim.NewStorage, persistentvolume.NewStorage, resourcequota.NewStorage,
		limitrange.NewStorage, replicationcontroller.NewStorage)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range []registry.Mapper{r.services, r.pods, r.nodes, r.secrets, r.serviceAccounts, r.events} {
		maps.Copy(coreStorage, m.Map())
	}
	v := version.Get()
	maps.Copy(coreStorage, componentstatus.NewStorage(componentstatus.Servers("kube-probe/"+v.Major+"."+v.Minor, etcd)))
	// Pods are evicted as their PodDisruptionBudgets allow.
	coreStorage["pods/eviction"] = pod.NewEvictionREST(r.pods.Pods.Store, pod.Budgets{
		List:   r.budgets.PodDisruptionBudgets,
		Get:    r.budgets.PodDisruptionBudgets,
		Status: r.budgets.Status,
	})
	// pods/log and the streams reach the kubelets as kube-apiserver's
	// kubelet client does.
	kubelets, err := pod.NewKubelets(kubelet.config(r.nodes.Nodes))
	if err != nil {
		return nil, nil, err
	}
	coreStorage["pods/log"] = &pod.LogREST{Pods: r.pods.Pods, Kubelets: kubelets}
	maps.Copy(coreStorage, pod.Streams{Pods: r.pods.Pods, Kubelets: kubelets, Authorizer: id.authorizer}.Storage())
	coreStorage["serviceaccounts/token"] = &serviceaccount.TokenREST{
		ServiceAccounts: r.serviceAccounts.ServiceAccounts,
		Pods:            r.pods.Pods,
		Secrets:         r.secrets.Secrets,
		Issue:           id.issue,
		Audiences:       id.serviceAccounts.Audiences,
	}
	core.VersionedResourcesStorageMap["v1"] = coreStorage
	if err := s.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, &core); err != nil {
		return nil, nil, fmt.Errorf("installing core/v1: %w", err)
	}

	var groups []*genericapiserver.APIGroupInfo
	for _, g := range apiGroups {
		info := genericapiserver.NewDefaultAPIGroupInfo(g.group, api.Scheme, api.ParameterCodec, api.Codecs)
		info.NegotiatedSerializer = encoding.WithCachedListEncoding(info.NegotiatedSerializer, encodings)
		if info.VersionedResourcesStorageMap["v1"], err = collect(optsGetter, g.storages...); err != nil {
			return nil, nil, err
		}
		switch g.group {
		case networkingv1.GroupName:
			maps.Copy(info.VersionedResourcesStorageMap["v1"], r.ipAddresses.Map())
		case policyv1.GroupName:
			maps.Copy(info.VersionedResourcesStorageMap["v1"], r.budgets.Map())
		}
		if g.group == rbacv1.GroupName {
			rbac.WithEscalationChecks(info.VersionedResourcesStorageMap["v1"], rbac.Escalation{Authorizer: id.authorizer, Rules: id.rules})
		}
		groups = append(groups, &info)
	}
	for group, storage := range map[string]map[string]rest.Storage{
		authorizationv1.GroupName:  review.NewAuthorizationStorage(id.authorizer, id.rules),
		authenticationv1.GroupName: review.NewAuthenticationStorage(bearertoken.New(id.tokens)),
	} {
		info := genericapiserver.NewDefaultAPIGroupInfo(group, api.Scheme, api.ParameterCodec, api.Codecs)
		info.VersionedResourcesStorageMap["v1"] = storage
		groups = append(groups, &info)
	}
	// autoscaling serves HorizontalPodAutoscalers in v2 (preferred, and
	// stored) and in v1, converted: one store, hence one watch cache.
	hpas, err := horizontalpodautoscaler.NewStorage(optsGetter)
	if err != nil {
		return nil, nil, err
	}
	autoscaling := genericapiserver.NewDefaultAPIGroupInfo(autoscalingv1.GroupName, api.Scheme, api.ParameterCodec, api.Codecs)
	autoscaling.NegotiatedSerializer = encoding.WithCachedListEncoding(autoscaling.NegotiatedSerializer, encodings)
	autoscaling.VersionedResourcesStorageMap["v2"] = hpas
	autoscaling.VersionedResourcesStorageMap["v1"] = maps.Clone(hpas)
	groups = append(groups, &autoscaling)
	// events.k8s.io/v1 Events are core Events, converted (upstream stores
	// them in one place too): the same store, hence the same watch cache.
	events := genericapiserver.NewDefaultAPIGroupInfo(eventsv1.GroupName, api.Scheme, api.ParameterCodec, api.Codecs)
	events.VersionedResourcesStorageMap["v1"] = r.events.Map()
	groups = append(groups, &events)
	if err := s.InstallAPIGroups(groups...); err != nil {
		return nil, nil, fmt.Errorf("installing API groups: %w", err)
	}
	namespaced = namespacedResources(corev1.SchemeGroupVersion, coreStorage)
	for _, g := range groups[:len(groups)-1] { // events.k8s.io Events are core Events
		// Each group's resources once, in its preferred version.
		preferred := g.PrioritizedVersions[0]
		namespaced = append(namespaced, namespacedResources(preferred, g.VersionedResourcesStorageMap[preferred.Version])...)
	}
	return namespaced, services, nil
}

// resources are the resources installAPIs wires to each other, each
// made by its package's typed New.
type resources struct {
	// ipAddresses record the services' cluster IPs.
	ipAddresses *ipaddress.Storage
	services    *service.Storage
	// pods are evicted as budgets allow; pods/log and the streams find
	// their kubelets through nodes; serviceaccounts/token binds tokens to
	// pods and secrets.
	pods            *pod.Storage
	budgets         *poddisruptionbudget.Storage
	nodes           *node.Storage
	serviceAccounts *serviceaccount.Storage
	secrets         *secret.Storage
	// events are served in core/v1 and events.k8s.io/v1.
	events *event.Storage
}

// newResources makes the resources installAPIs wires to each other.
func newResources(optsGetter generic.RESTOptionsGetter, ranges service.Ranges) (r resources, err error) {
	if r.ipAddresses, err = ipaddress.New(optsGetter); err != nil {
		return r, err
	}
	if r.services, err = service.New(optsGetter, r.ipAddresses.IPAddresses, ranges); err != nil {
		return r, err
	}
	if r.pods, err = pod.New(optsGetter); err != nil {
		return r, err
	}
	if r.budgets, err = poddisruptionbudget.New(optsGetter); err != nil {
		return r, err
	}
	if r.nodes, err = node.New(optsGetter); err != nil {
		return r, err
	}
	if r.serviceAccounts, err = serviceaccount.New(optsGetter); err != nil {
		return r, err
	}
	if r.secrets, err = secret.New(optsGetter); err != nil {
		return r, err
	}
	r.events, err = event.New(optsGetter)
	return r, err
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

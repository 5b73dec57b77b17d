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
	"fmt"
	"maps"

	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/componentstatus"
	"github.com/miniapiserver/miniapiserver/pkg/registry/configmap"
	"github.com/miniapiserver/miniapiserver/pkg/registry/endpoints"
	"github.com/miniapiserver/miniapiserver/pkg/registry/endpointslice"
	"github.com/miniapiserver/miniapiserver/pkg/registry/event"
	"github.com/miniapiserver/miniapiserver/pkg/registry/ipaddress"
	"github.com/miniapiserver/miniapiserver/pkg/registry/limitrange"
	"github.com/miniapiserver/miniapiserver/pkg/registry/namespace"
	"github.com/miniapiserver/miniapiserver/pkg/registry/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolume"
	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolumeclaim"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
	"github.com/miniapiserver/miniapiserver/pkg/registry/poddisruptionbudget"
	"github.com/miniapiserver/miniapiserver/pkg/registry/podtemplate"
	"github.com/miniapiserver/miniapiserver/pkg/registry/replicationcontroller"
	"github.com/miniapiserver/miniapiserver/pkg/registry/resourcequota"
	"github.com/miniapiserver/miniapiserver/pkg/registry/secret"
	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
	"github.com/miniapiserver/miniapiserver/pkg/registry/serviceaccount"
	"github.com/miniapiserver/miniapiserver/pkg/version"
)

// resources are the resources wired to each other, each made by its
// package's typed New.
type resources struct {
	// ipAddresses record the services' cluster IPs.
	ipAddresses *ipaddress.Storage
	// services/proxy reads the services, their EndpointSlices (served in
	// discovery.k8s.io/v1) and the pods these target.
	services       *service.Storage
	endpointSlices map[string]rest.Storage
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

// newResources makes the resources wired to each other.
func newResources(optsGetter generic.RESTOptionsGetter, ranges service.Ranges) (r resources, err error) {
	if r.ipAddresses, err = ipaddress.New(optsGetter); err != nil {
		return r, err
	}
	if r.services, err = service.New(optsGetter, r.ipAddresses.IPAddresses, ranges); err != nil {
		return r, err
	}
	if r.endpointSlices, err = endpointslice.NewStorage(optsGetter); err != nil {
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

// coreStorage is core/v1's storage by resource: r's core resources, the
// subresources that wire them to each other, and the rest;
// componentstatuses probe etcd.
func (cfg *Config) coreStorage(r resources) (map[string]rest.Storage, error) {
	coreStorage, err := collect(cfg.RESTOptionsGetter, namespace.NewStorage, configmap.NewStorage, podtemplate.NewStorage, endpoints.NewStorage,
		persistentvolumeclaim.NewStorage, persistentvolume.NewStorage, resourcequota.NewStorage,
		limitrange.NewStorage, replicationcontroller.NewStorage)
	if err != nil {
		return nil, err
	}
	for _, m := range []registry.Mapper{r.services, r.pods, r.nodes, r.secrets, r.serviceAccounts, r.events} {
		maps.Copy(coreStorage, m.Map())
	}
	v := version.Get()
	maps.Copy(coreStorage, componentstatus.NewStorage(componentstatus.Servers("kube-probe/"+v.Major+"."+v.Minor, cfg.Etcd)))
	// Pods are evicted as their PodDisruptionBudgets allow.
	coreStorage["pods/eviction"] = pod.NewEvictionREST(r.pods.Pods.Store, pod.Budgets{
		List:   r.budgets.PodDisruptionBudgets,
		Get:    r.budgets.PodDisruptionBudgets,
		Status: r.budgets.Status,
	})
	// pods/log, the streams and nodes/proxy reach the kubelets as
	// kube-apiserver's kubelet client does.
	kubelet := cfg.Kubelet
	kubelet.Nodes = r.nodes.Nodes
	kubelets, err := pod.NewKubelets(kubelet)
	if err != nil {
		return nil, err
	}
	coreStorage["pods/log"] = &pod.LogREST{Pods: r.pods.Pods, Kubelets: kubelets}
	coreStorage["nodes/proxy"] = pod.NewNodeProxyREST(kubelets)
	// pods/proxy and services/proxy reach the pods' IPs through
	// kube-apiserver's proxy transport.
	transport := pod.NewProxyTransport()
	coreStorage["pods/proxy"] = &pod.ProxyREST{Pods: r.pods.Pods, Transport: transport}
	endpointSlices, ok := r.endpointSlices["endpointslices"].(rest.Lister)
	if !ok {
		return nil, fmt.Errorf("endpointslices: %T is no lister", r.endpointSlices["endpointslices"])
	}
	coreStorage["services/proxy"] = &service.ProxyREST{
		Services:       r.services.Services,
		EndpointSlices: endpointSlices,
		Pods:           r.pods.Pods,
		Transport:      transport,
	}
	maps.Copy(coreStorage, pod.Streams{Pods: r.pods.Pods, Kubelets: kubelets, Authorizer: cfg.Identity.Authorizer}.Storage())
	coreStorage["serviceaccounts/token"] = &serviceaccount.TokenREST{
		ServiceAccounts: r.serviceAccounts.ServiceAccounts,
		Pods:            r.pods.Pods,
		Secrets:         r.secrets.Secrets,
		Issue:           cfg.Identity.issue,
		Audiences:       cfg.Identity.ServiceAccounts.Audiences,
	}
	return coreStorage, nil
}

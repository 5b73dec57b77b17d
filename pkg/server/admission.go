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
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/trace/noop"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	webhookinit "k8s.io/apiserver/pkg/admission/plugin/webhook/initializer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/admission/certificates"
	"github.com/miniapiserver/miniapiserver/pkg/admission/defaulttolerationseconds"
	"github.com/miniapiserver/miniapiserver/pkg/admission/limitranger"
	"github.com/miniapiserver/miniapiserver/pkg/admission/podsecurity"
	"github.com/miniapiserver/miniapiserver/pkg/admission/resourcequota"
	"github.com/miniapiserver/miniapiserver/pkg/admission/serviceaccount"
	"github.com/miniapiserver/miniapiserver/pkg/version"
)

// NewAdmissionOptions returns the admission plugins this server has, in
// kube-apiserver's order: k8s.io/apiserver's NamespaceLifecycle, then
// LimitRanger and ServiceAccount (ours, ported from k8s.io/kubernetes), then PodSecurity
// (k8s.io/pod-security-admission's, as kube-apiserver wraps it), then
// DefaultTolerationSeconds and the certificates.k8s.io plugins
// (CertificateApproval, CertificateSigning, ClusterTrustBundleAttest,
// CertificateSubjectRestriction; ours, ported), then
// k8s.io/apiserver's MutatingAdmissionPolicy, MutatingAdmissionWebhook,
// ValidatingAdmissionPolicy and ValidatingAdmissionWebhook (the mutating
// ones run before the validating ones), then k8s.io/apiserver's
// ResourceQuota with our ports of upstream's evaluators, all on by default, with enable
// and disable as kube-apiserver's --enable-admission-plugins and
// --disable-admission-plugins.
func NewAdmissionOptions(enable, disable []string) *genericoptions.AdmissionOptions {
	o := genericoptions.NewAdmissionOptions()
	limitranger.Register(o.Plugins)
	serviceaccount.Register(o.Plugins)
	podsecurity.Register(o.Plugins)
	defaulttolerationseconds.Register(o.Plugins)
	certificates.Register(o.Plugins)
	resourcequota.Register(o.Plugins)
	ours := append([]string{limitranger.PluginName, serviceaccount.PluginName, podsecurity.PluginName, defaulttolerationseconds.PluginName}, certificates.PluginNames...)
	o.RecommendedPluginOrder = slices.Insert(o.RecommendedPluginOrder, slices.Index(o.RecommendedPluginOrder, lifecycle.PluginName)+1, ours...)
	o.RecommendedPluginOrder = append(o.RecommendedPluginOrder, resourcequota.PluginName)
	o.EnablePlugins, o.DisablePlugins = enable, disable
	return o
}

// addAdmission sets gc's admission chain as the plugins plugins enables. The apiextensions server shares gc's chain,
// so custom resources get it too. Webhooks referring to a Service are
// called at what services resolves them to. Ready closes once the server
// is ready (see openAPIAfter). The plugins stop when settings.done closes (not when
// the server has drained, as upstream's: the informers they start in the
// shared factory must stop before the server's other loopback clients,
// which stop before the HTTP server does).
//
// The chain is built by the returned admission's build, once factory has
// synced (see deferredAdmission); until then, requests wait for it.
func addAdmission(gc *genericapiserver.Config, plugins *genericoptions.AdmissionOptions, settings pluginSettings, factory informers.SharedInformerFactory, client kubernetes.Interface, loopback *rest.Config, services webhook.ServiceResolver, ready <-chan struct{}) (*deferredAdmission, error) {
	done := settings.done
	settings.drained = gc.DrainedNotify()
	dynamicClient, err := dynamic.NewForConfig(loopback)
	if err != nil {
		return nil, err
	}
	client = openAPIAfter(client, ready, done)
	authInfo := webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, loopback, noop.NewTracerProvider())
	// The informers the plugins read, made now so that they start with
	// the factory's others.
	factory.Core().V1().Namespaces().Informer()
	factory.Core().V1().ServiceAccounts().Informer()
	factory.Core().V1().LimitRanges().Informer()
	factory.Core().V1().ResourceQuotas().Informer()
	registration := factory.Admissionregistration().V1()
	for _, i := range []interface {
		Informer() cache.SharedIndexInformer
	}{
		registration.ValidatingWebhookConfigurations(), registration.MutatingWebhookConfigurations(),
		registration.ValidatingAdmissionPolicies(), registration.ValidatingAdmissionPolicyBindings(),
		registration.MutatingAdmissionPolicies(), registration.MutatingAdmissionPolicyBindings(),
	} {
		i.Informer()
	}
	d := &deferredAdmission{built: make(chan struct{})}
	d.build = func() error {
		scratch := *gc
		err := plugins.ApplyTo(&scratch, factory, client, dynamicClient, utilfeature.DefaultFeatureGate, version.EffectiveVersion(),
			webhookinit.NewPluginInitializer(authInfo, services), settings)
		if err != nil {
			return err
		}
		d.chain = scratch.AdmissionControl
		close(d.built)
		return nil
	}
	gc.AdmissionControl = d
	return d, nil
}

// deferredAdmission is an admission chain built once the informers its
// plugins read have synced. The policy plugins wait for them by polling
// every 100ms from the moment they are built; built after, they find them
// synced at once and are ready at once, and so is the server (its
// bootstrap writes go through admission).
type deferredAdmission struct {
	build func() error
	built chan struct{}       // closed once build has set chain
	chain admission.Interface // k8s.io/apiserver's
}

var (
	_ admission.MutationInterface   = (*deferredAdmission)(nil)
	_ admission.ValidationInterface = (*deferredAdmission)(nil)
)

// Handles implements admission.Interface: the chain's plugins, between
// them, handle every operation.
func (d *deferredAdmission) Handles(admission.Operation) bool { return true }

// wait returns the chain once built, or refuses a as a plugin that is not
// ready does if ctx ends first.
func (d *deferredAdmission) wait(ctx context.Context, a admission.Attributes) (admission.Interface, error) {
	select {
	case <-d.built:
		return d.chain, nil
	case <-ctx.Done():
		return nil, admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
}

func (d *deferredAdmission) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	chain, err := d.wait(ctx, a)
	if err != nil {
		return err
	}
	if m, ok := chain.(admission.MutationInterface); ok && m.Handles(a.GetOperation()) {
		return m.Admit(ctx, a, o)
	}
	return nil
}

func (d *deferredAdmission) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	chain, err := d.wait(ctx, a)
	if err != nil {
		return err
	}
	if v, ok := chain.(admission.ValidationInterface); ok && v.Handles(a.GetOperation()) {
		return v.Validate(ctx, a, o)
	}
	return nil
}

// openAPIAfter is client, whose OpenAPI v3 discovery answers once ready
// closes (the server is ready and its OpenAPI built), or done does. The
// MutatingAdmissionPolicy plugin's type converter reads /openapi/v3 every
// 5s from the start; that read computes every group's hash (marshals its
// spec), which would take the CPU from the start, and, as a request, hold
// up a stop. Built first, it costs a request nothing.
func openAPIAfter(client kubernetes.Interface, ready, done <-chan struct{}) kubernetes.Interface {
	return gatedClient{Interface: client, gate: gate{ready: ready, done: done}}
}

type gate struct{ ready, done <-chan struct{} }

// wait reports whether the gate opened (false: done closed first).
func (g gate) wait() bool {
	select {
	case <-g.ready:
		return true
	case <-g.done:
		return false
	}
}

type gatedClient struct {
	kubernetes.Interface
	gate gate
}

func (c gatedClient) Discovery() discovery.DiscoveryInterfaces {
	return gatedDiscovery{DiscoveryInterfaces: c.Interface.Discovery(), gate: c.gate}
}

type gatedDiscovery struct {
	discovery.DiscoveryInterfaces
	gate gate
}

func (d gatedDiscovery) OpenAPIV3() openapi.Client {
	return gatedOpenAPI{Client: d.DiscoveryInterfaces.OpenAPIV3(), gate: d.gate}
}

type gatedOpenAPI struct {
	openapi.Client
	gate gate
}

func (c gatedOpenAPI) Paths() (map[string]openapi.GroupVersion, error) {
	if !c.gate.wait() {
		return map[string]openapi.GroupVersion{}, nil // stopping: nothing to log
	}
	return c.Client.Paths()
}

// pluginSettings are what the plugins get here and not from
// k8s.io/apiserver's initializer (which runs first): their stop channel,
// the quota configuration (kube-apiserver's initializer gives it),
// kube-apiserver's list of resources the policy plugins leave alone
// (the reviews, which are not stored and which a policy could use to lock
// everyone out), and the default tolerations' seconds.
type pluginSettings struct {
	done <-chan struct{}
	// drained closes once the server has answered the requests in flight
	// at its stop (the generic config's DrainedNotify, set by addAdmission).
	drained               <-chan struct{}
	notReady, unreachable int64
}

func (s pluginSettings) Initialize(plugin admission.Interface) {
	if p, ok := plugin.(*defaulttolerationseconds.Plugin); ok {
		p.SetDefaultTolerationSeconds(s.notReady, s.unreachable)
	}
	if p, ok := plugin.(initializer.WantsDrainedNotification); ok {
		stop := s.done
		if _, quota := plugin.(initializer.WantsQuotaConfiguration); quota && s.drained != nil {
			// Its workers evaluate the requests in flight: they stop once
			// those are answered (upstream's drained notification), not
			// with the informers, else a create in flight at the stop
			// would fail with "resource quota evaluation timed out".
			stop = s.drained
		}
		p.SetDrainedNotification(stop)
	}
	// After the stop channel, which the quota plugin's evaluator needs.
	resourcequota.Initialize(plugin)
	if p, ok := plugin.(interface {
		SetExcludedAdmissionResources([]schema.GroupResource)
	}); ok {
		p.SetExcludedAdmissionResources([]schema.GroupResource{
			{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"},
			{Group: "authentication.k8s.io", Resource: "tokenreviews"},
			{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"},
			{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"},
			{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"},
			{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
		})
	}
}

// ServiceAddresses maps the Services that webhooks (admission and CRD
// conversion) refer to onto local addresses, since there is no Service
// network here: "namespace/name:port" to "host:port".
type ServiceAddresses map[string]string

// ParseServiceAddresses checks m's keys and values.
func ParseServiceAddresses(m map[string]string) (ServiceAddresses, error) {
	for k, v := range m {
		if _, _, _, err := splitServiceKey(k); err != nil {
			return nil, err
		}
		if _, _, err := net.SplitHostPort(v); err != nil {
			return nil, fmt.Errorf("webhook service %s: address %q is not host:port", k, v)
		}
	}
	return ServiceAddresses(m), nil
}

// ServiceKey is the key of a Service's port in ServiceAddresses.
func ServiceKey(namespace, name string, port int32) string {
	return namespace + "/" + name + ":" + strconv.Itoa(int(port))
}

func splitServiceKey(k string) (namespace, name string, port int32, err error) {
	ns, rest, ok := strings.Cut(k, "/")
	name, p, ok2 := strings.Cut(rest, ":")
	n, perr := strconv.ParseInt(p, 10, 32)
	if !ok || !ok2 || ns == "" || name == "" || perr != nil || n < 1 || n > 65535 {
		return "", "", 0, fmt.Errorf("webhook service %q is not namespace/name:port", k)
	}
	return ns, name, int32(n), nil
}

// ResolveEndpoint is a webhook.ServiceResolver: the webhook client calls
// https://<address><path>, checking the serving certificate against the
// Service's DNS name (name.namespace.svc), as kube-apiserver does.
func (s ServiceAddresses) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	key := ServiceKey(namespace, name, port)
	addr, ok := s[key]
	if !ok {
		return nil, fmt.Errorf("service %s has no address here (there is no Service network): map it to a local host:port with --webhook-service %s=HOST:PORT or testserver.WithWebhookService", key, key)
	}
	return &url.URL{Scheme: "https", Host: addr}, nil
}

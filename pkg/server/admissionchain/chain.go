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

package admissionchain

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/trace/noop"
	"k8s.io/apiserver/pkg/admission"
	webhookinit "k8s.io/apiserver/pkg/admission/plugin/webhook/initializer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/admission/resourcequota"
	"github.com/miniapiserver/miniapiserver/pkg/version"
)

// Config is what Add needs to set a server's admission chain; all but
// Services and the toleration seconds are required.
type Config struct {
	// Generic is the generic server's config: Add sets its
	// AdmissionControl. The apiextensions server shares it, so custom
	// resources get the chain too.
	Generic *genericapiserver.Config
	// Plugins are the plugins to turn on, and their configuration file
	// (see NewOptions).
	Plugins *genericoptions.AdmissionOptions
	// Factory is the shared informer factory the plugins read: Add makes
	// the informers they read in it, so that they start with its others.
	Factory informers.SharedInformerFactory
	// Client and Loopback reach the server itself.
	Client   kubernetes.Interface
	Loopback *rest.Config
	// Services resolves the Services that webhooks refer to (see
	// ServiceAddresses); nil: upstream's default, the Service's DNS name.
	Services webhook.ServiceResolver
	// Ready closes once the server is ready and its OpenAPI built: the
	// plugins' reads of /openapi/v3 wait for it (see openAPIAfter).
	Ready <-chan struct{}
	// Done stops the plugins (not the server's drain, as upstream's: the
	// informers they start in the shared factory must stop before the
	// server's other loopback clients, which stop before the HTTP server
	// does).
	Done <-chan struct{}
	// DefaultNotReadyTolerationSeconds and
	// DefaultUnreachableTolerationSeconds are the seconds of the
	// tolerations the DefaultTolerationSeconds plugin adds to pods.
	DefaultNotReadyTolerationSeconds, DefaultUnreachableTolerationSeconds int64
}

// validate reports the first required field of c that is not set.
func (c Config) validate() error {
	switch {
	case c.Generic == nil:
		return errors.New("admissionchain: Config.Generic is required")
	case c.Plugins == nil:
		return errors.New("admissionchain: Config.Plugins is required")
	case c.Factory == nil:
		return errors.New("admissionchain: Config.Factory is required")
	case c.Client == nil:
		return errors.New("admissionchain: Config.Client is required")
	case c.Loopback == nil:
		return errors.New("admissionchain: Config.Loopback is required")
	case c.Ready == nil:
		return errors.New("admissionchain: Config.Ready is required")
	case c.Done == nil:
		return errors.New("admissionchain: Config.Done is required")
	}
	return nil
}

// Add sets c.Generic's admission chain as the plugins c.Plugins enables.
// Webhooks referring to a Service are called at what c.Services resolves
// them to. The plugins stop when c.Done closes, but for the quota plugin's
// workers, which stop once the server has drained.
//
// The chain is built by the returned Deferred's Build, once c.Factory has
// synced; until then, requests wait for it.
func Add(c Config) (*Deferred, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	gc := c.Generic
	settings := pluginSettings{done: c.Done, drained: gc.DrainedNotify(),
		notReady: c.DefaultNotReadyTolerationSeconds, unreachable: c.DefaultUnreachableTolerationSeconds}
	dynamicClient, err := dynamic.NewForConfig(c.Loopback)
	if err != nil {
		return nil, err
	}
	client := openAPIAfter(c.Client, c.Ready, c.Done)
	authInfo := webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, c.Loopback, noop.NewTracerProvider())
	// The informers the plugins read, made now so that they start with
	// the factory's others.
	factory := c.Factory
	factory.Core().V1().Namespaces().Informer()
	factory.Core().V1().ServiceAccounts().Informer()
	factory.Core().V1().LimitRanges().Informer()
	factory.Core().V1().ResourceQuotas().Informer()
	factory.Scheduling().V1().PriorityClasses().Informer()
	factory.Storage().V1().StorageClasses().Informer()
	factory.Networking().V1().IngressClasses().Informer()
	factory.Node().V1().RuntimeClasses().Informer()
	factory.Core().V1().Nodes().Informer()
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
	// The quota plugin's ResourceClaim evaluator's informers, which take
	// an index before the factory starts.
	if settings.quota, err = resourcequota.NewExtendedResources(factory); err != nil {
		return nil, err
	}
	d := &Deferred{built: make(chan struct{})}
	d.build = func() error {
		scratch := *gc
		err := c.Plugins.ApplyTo(&scratch, factory, client, dynamicClient, utilfeature.DefaultFeatureGate, version.EffectiveVersion(),
			webhookinit.NewPluginInitializer(authInfo, c.Services), settings)
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

// Deferred is an admission chain built once the informers its
// plugins read have synced. The policy plugins wait for them by polling
// every 100ms from the moment they are built; built after, they find them
// synced at once and are ready at once, and so is the server (its
// bootstrap writes go through admission).
type Deferred struct {
	build func() error
	built chan struct{}       // closed once build has set chain
	chain admission.Interface // k8s.io/apiserver's
}

var (
	_ admission.MutationInterface   = (*Deferred)(nil)
	_ admission.ValidationInterface = (*Deferred)(nil)
)

// Build builds the chain, once the informers of Config.Factory have
// synced; it is called once.
func (d *Deferred) Build() error { return d.build() }

// Handles implements admission.Interface: the chain's plugins, between
// them, handle every operation.
func (d *Deferred) Handles(admission.Operation) bool { return true }

// wait returns the chain once built, or refuses a as a plugin that is not
// ready does if ctx ends first.
func (d *Deferred) wait(ctx context.Context, a admission.Attributes) (admission.Interface, error) {
	select {
	case <-d.built:
		return d.chain, nil
	case <-ctx.Done():
		return nil, admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
}

// Admit waits for the chain, then admits a with it.
func (d *Deferred) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	chain, err := d.wait(ctx, a)
	if err != nil {
		return err
	}
	if m, ok := chain.(admission.MutationInterface); ok && m.Handles(a.GetOperation()) {
		return m.Admit(ctx, a, o)
	}
	return nil
}

// Validate waits for the chain, then validates a with it.
func (d *Deferred) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	chain, err := d.wait(ctx, a)
	if err != nil {
		return err
	}
	if v, ok := chain.(admission.ValidationInterface); ok && v.Handles(a.GetOperation()) {
		return v.Validate(ctx, a, o)
	}
	return nil
}

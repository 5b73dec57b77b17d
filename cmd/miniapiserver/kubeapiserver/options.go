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

package kubeapiserver

import (
	"time"

	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json, as kube-apiserver's
	"k8s.io/component-base/metrics"
	netutils "k8s.io/utils/net"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Options are kube-apiserver 1.37's command line: k8s.io/apiserver's option
// structs where it has them, ports of k8s.io/kubernetes's where it has
// not, in kube-apiserver's flag sets (cmd/kube-apiserver/app/options).
type Options struct {
	Generic        *genericoptions.ServerRunOptions
	Etcd           *genericoptions.EtcdOptions
	SecureServing  *genericoptions.SecureServingOptionsWithLoopback
	Audit          *genericoptions.AuditOptions
	Features       *genericoptions.FeatureOptions
	Authentication *authenticationOptions
	Authorization  *authorizationOptions
	APIEnablement  *genericoptions.APIEnablementOptions
	EgressSelector *genericoptions.EgressSelectorOptions
	Admission      *admissionOptions
	Metrics        *metrics.Options
	Logs           *logsapi.LoggingConfiguration
	Traces         *genericoptions.TracingOptions
	Misc           *miscOptions
}

// NewOptions returns kube-apiserver's defaults.
func NewOptions() *Options {
	etcd := genericoptions.NewEtcdOptions(storagebackend.NewDefaultConfig(storage.DefaultPrefix, nil))
	etcd.DefaultStorageMediaType = "application/vnd.kubernetes.protobuf"
	serving := genericoptions.SecureServingOptions{
		BindAddress: netutils.ParseIPSloppy("0.0.0.0"),
		BindPort:    6443,
		Required:    true,
		ServerCert:  genericoptions.GeneratableKeyCert{PairName: "apiserver", CertDirectory: "/var/run/kubernetes"},
	}
	return &Options{
		Generic:        genericoptions.NewServerRunOptions(),
		Etcd:           etcd,
		SecureServing:  serving.WithLoopback(),
		Audit:          genericoptions.NewAuditOptions(),
		Features:       genericoptions.NewFeatureOptions(),
		Authentication: newAuthenticationOptions(),
		Authorization:  &authorizationOptions{WebhookVersion: "v1beta1", WebhookCacheAuthorizedTTL: 5 * time.Minute, WebhookCacheUnauthorizedTTL: 30 * time.Second},
		APIEnablement:  genericoptions.NewAPIEnablementOptions(),
		EgressSelector: genericoptions.NewEgressSelectorOptions(),
		Admission:      newAdmissionOptions(),
		Metrics:        metrics.NewOptions(),
		Logs:           logs.NewOptions(),
		Traces:         genericoptions.NewTracingOptions(),
		Misc:           newMiscOptions(),
	}
}

// Flags returns the flags in kube-apiserver's sections and order.
func (o *Options) Flags() (fss cliflag.NamedFlagSets) {
	o.Generic.AddUniversalFlags(fss.FlagSet("generic"))
	o.Etcd.AddFlags(fss.FlagSet("etcd"))
	o.SecureServing.AddFlags(fss.FlagSet("secure serving"))
	o.Audit.AddFlags(fss.FlagSet("auditing"))
	o.Features.AddFlags(fss.FlagSet("features"))
	o.Authentication.AddFlags(fss.FlagSet("authentication"))
	o.Authorization.AddFlags(fss.FlagSet("authorization"))
	o.APIEnablement.AddFlags(fss.FlagSet("API enablement"))
	o.EgressSelector.AddFlags(fss.FlagSet("egress selector"))
	o.Admission.AddFlags(fss.FlagSet("admission"))
	o.Metrics.AddFlags(fss.FlagSet("metrics"))
	logsapi.AddFlags(o.Logs, fss.FlagSet("logs"))
	o.Traces.AddFlags(fss.FlagSet("traces"))
	o.Misc.AddFlags(fss.FlagSet("misc"))
	return fss
}

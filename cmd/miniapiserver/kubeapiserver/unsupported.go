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
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// refused are kube-apiserver's flags this server does not implement: set
// to anything but upstream's default, the server refuses to start, naming
// the flag and why.
var refused = map[string]string{
	"authentication-config":                        "structured authentication configuration is not implemented",
	"enable-bootstrap-token-auth":                  "bootstrap token authentication is not implemented",
	"oidc-issuer-url":                              "OIDC authentication is not implemented",
	"oidc-client-id":                               "OIDC authentication is not implemented",
	"oidc-ca-file":                                 "OIDC authentication is not implemented",
	"oidc-username-claim":                          "OIDC authentication is not implemented",
	"oidc-username-prefix":                         "OIDC authentication is not implemented",
	"oidc-groups-claim":                            "OIDC authentication is not implemented",
	"oidc-groups-prefix":                           "OIDC authentication is not implemented",
	"oidc-signing-algs":                            "OIDC authentication is not implemented",
	"oidc-required-claim":                          "OIDC authentication is not implemented",
	"service-account-lookup":                       "service account tokens are always looked up",
	"service-account-max-token-expiration":         "token lifetimes are not capped",
	"service-account-signing-endpoint":             "external JWT signers are not implemented",
	"authentication-token-webhook-config-file":     "webhook token authentication is not implemented",
	"authentication-token-webhook-version":         "webhook token authentication is not implemented",
	"authentication-token-webhook-cache-ttl":       "webhook token authentication is not implemented",
	"authorization-policy-file":                    "ABAC authorization is not implemented",
	"authorization-webhook-config-file":            "webhook authorization is not implemented",
	"authorization-webhook-version":                "webhook authorization is not implemented",
	"authorization-webhook-cache-authorized-ttl":   "webhook authorization is not implemented",
	"authorization-webhook-cache-unauthorized-ttl": "webhook authorization is not implemented",
	"authorization-config":                         "structured authorization configuration is not implemented",
	"egress-selector-config-file":                  "egress selection is not implemented",
	"emulated-version":                             "only 1.37's APIs are served",
	"min-compatibility-version":                    "only 1.37's APIs are served",
	"etcd-servers-overrides":                       "per-resource etcd servers are not implemented",
	"etcd-healthcheck-timeout":                     "etcd's health check timeout is fixed",
	"etcd-readycheck-timeout":                      "etcd's readiness check timeout is fixed",
	"lease-reuse-duration-seconds":                 "etcd lease reuse is fixed",
	"storage-backend":                              "only etcd3 is supported",
	"storage-media-type":                           "objects are stored as protobuf",
	"watch-cache-sizes":                            "the watch cache has no per-resource sizes",
	"encryption-provider-config":                   "encryption at rest is not implemented",
	"enable-logs-handler":                          "there is no /logs handler",
	"max-connection-bytes-per-sec":                 "connections are not throttled",
	"kubernetes-service-node-port":                 "the kubernetes Service is of type ClusterIP",
	"event-ttl":                                    "events are kept until deleted",
}

// noEffect are kube-apiserver's flags that this server takes and that
// change nothing here, with why; envtest, kwokctl and scripts pass some.
var noEffect = map[string]string{
	"emulation-forward-compatible":                "no emulated version",
	"runtime-config-emulation-forward-compatible": "no emulated version",
	"etcd-count-metric-poll-period":               "object counts are polled from etcd every minute",
	"etcd-db-metric-poll-interval":                "etcd's database size is not polled",
	"delete-collection-workers":                   "collections are deleted by one worker",
	"default-watch-cache-size":                    "a no-op in kube-apiserver too",
	"encryption-provider-config-automatic-reload": "encryption at rest is not implemented",
	"service-account-extend-token-expiration":     "no kubelet asks for projected tokens",
	"peer-ca-file":                                "no peer proxying (the UnknownVersionInteroperabilityProxy gate)",
	"peer-advertise-ip":                           "no peer proxying (the UnknownVersionInteroperabilityProxy gate)",
	"peer-advertise-port":                         "no peer proxying (the UnknownVersionInteroperabilityProxy gate)",
	"coordinated-leadership-lease-duration":       "no coordinated leader election",
	"coordinated-leadership-renew-deadline":       "no coordinated leader election",
	"coordinated-leadership-retry-period":         "no coordinated leader election",
	"endpoint-reconciler-type":                    "the kubernetes Service gets no Endpoints",
	"apiserver-count":                             "the kubernetes Service gets no Endpoints",
	"kubelet-read-only-port":                      "deprecated, and read nowhere in kube-apiserver 1.37 either",
	"kubelet-timeout":                             "read nowhere in kube-apiserver 1.37 either (its kubelet client sets no timeout)",
}

// checkRefused returns the first flag of fs set to anything but its
// default that this server refuses, as an error naming it and why.
func checkRefused(fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		why, ok := refused[f.Name]
		if ok && err == nil && !isDefault(f) {
			err = fmt.Errorf("--%s is not supported by miniapiserver: %s", f.Name, why)
		}
	})
	return err
}

// isDefault reports whether f's value is its default (a list flag's
// default is printed as "[a,b]").
func isDefault(f *pflag.Flag) bool {
	if f.Value.String() == f.DefValue {
		return true
	}
	s, ok := f.Value.(pflag.SliceValue)
	return ok && f.DefValue == "["+strings.Join(s.GetSlice(), ",")+"]"
}

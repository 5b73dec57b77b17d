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
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/server/admissionchain"
)

// upstreamPlugins are kube-apiserver 1.37's admission plugins in its
// order (k8s.io/kubernetes pkg/kubeapiserver/options AllOrderedPlugins),
// and whether each is on by default (DefaultOffAdmissionPlugins).
var upstreamPlugins = []struct {
	name string
	on   bool
}{
	{"AlwaysAdmit", false}, {"NamespaceAutoProvision", false}, {"NamespaceLifecycle", true}, {"NamespaceExists", false},
	{"LimitPodHardAntiAffinityTopology", false}, {"LimitRanger", true}, {"ServiceAccount", true}, {"NodeRestriction", false},
	{"TaintNodesByCondition", true}, {"AlwaysPullImages", false}, {"ImagePolicyWebhook", false}, {"PodSecurity", true},
	{"PodNodeSelector", false}, {"Priority", true}, {"DefaultTolerationSeconds", true}, {"PodTolerationRestriction", false},
	{"EventRateLimit", false}, {"ExtendedResourceToleration", false}, {"DefaultStorageClass", true},
	{"StorageObjectInUseProtection", true}, {"PodGroupProtection", true}, {"OwnerReferencesPermissionEnforcement", false},
	{"PersistentVolumeClaimResize", true}, {"RuntimeClass", true}, {"CertificateApproval", true}, {"CertificateSigning", true},
	{"ClusterTrustBundleAttest", true}, {"CertificateSubjectRestriction", true}, {"DefaultIngressClass", true},
	{"DenyServiceExternalIPs", false}, {"PodTopologyLabels", true}, {"NodeDeclaredFeatureValidator", true}, {"PodResizeValidator", true},
	{"MutatingAdmissionPolicy", true}, {"MutatingAdmissionWebhook", true}, {"ValidatingAdmissionPolicy", true},
	{"ValidatingAdmissionWebhook", true}, {"ResourceQuota", true}, {"AlwaysDeny", false},
}

// admissionOptions are kube-apiserver's admission flags (a port of
// k8s.io/kubernetes's AdmissionOptions over k8s.io/apiserver's).
type admissionOptions struct {
	// PluginNames is the deprecated --admission-control: nil if unset.
	PluginNames            []string
	Enable, Disable        []string
	ConfigFile             string
	NotReadyToleration     int64
	UnreachableToleration  int64
	pluginNamesWereChanged func() bool
}

func newAdmissionOptions() *admissionOptions {
	return &admissionOptions{NotReadyToleration: 300, UnreachableToleration: 300}
}

// AddFlags adds kube-apiserver's admission flags, with its help.
func (o *admissionOptions) AddFlags(fs *pflag.FlagSet) {
	var names []string
	for _, p := range upstreamPlugins {
		names = append(names, p.name)
	}
	fs.Int64Var(&o.NotReadyToleration, "default-not-ready-toleration-seconds", o.NotReadyToleration,
		"Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.")
	fs.Int64Var(&o.UnreachableToleration, "default-unreachable-toleration-seconds", o.UnreachableToleration,
		"Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.")
	fs.StringSliceVar(&o.PluginNames, "admission-control", o.PluginNames, "Admission is divided into two phases. "+
		"In the first phase, only mutating admission plugins run. In the second phase, only validating admission plugins run. "+
		"The names in the below list may represent a validating plugin, a mutating plugin, or both. "+
		"The order of plugins in which they are passed to this flag does not matter. Comma-delimited list of: "+strings.Join(sorted(names), ", ")+".")
	_ = fs.MarkDeprecated("admission-control", "Use --enable-admission-plugins or --disable-admission-plugins instead. Will be removed in a future version.")
	fs.Lookup("admission-control").Hidden = false
	fs.StringSliceVar(&o.Enable, "enable-admission-plugins", o.Enable, "admission plugins that should be enabled in addition to default enabled ones ("+
		strings.Join(defaultOn(), ", ")+"). Comma-delimited list of admission plugins: "+strings.Join(sorted(names), ", ")+". The order of plugins in this flag does not matter.")
	fs.StringSliceVar(&o.Disable, "disable-admission-plugins", o.Disable, "admission plugins that should be disabled although they are in the default enabled plugins list ("+
		strings.Join(defaultOn(), ", ")+"). Comma-delimited list of admission plugins: "+strings.Join(sorted(names), ", ")+". The order of plugins in this flag does not matter.")
	fs.StringVar(&o.ConfigFile, "admission-control-config-file", o.ConfigFile, "File with admission control configuration.")
	o.pluginNamesWereChanged = func() bool { return fs.Changed("admission-control") }
}

func sorted(names []string) []string { return slices.Sorted(slices.Values(names)) }

func defaultOn() []string {
	var on []string
	for _, p := range upstreamPlugins {
		if p.on {
			on = append(on, p.name)
		}
	}
	return on
}

// Validate reports what kube-apiserver refuses, in its words, and a plugin
// asked for that this server does not have.
func (o *admissionOptions) Validate() []error {
	var errs []error
	if o.pluginNamesWereChanged() && (o.Enable != nil || o.Disable != nil) {
		errs = append(errs, fmt.Errorf("admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive"))
	}
	known := map[string]bool{}
	for _, p := range upstreamPlugins {
		known[p.name] = true
	}
	ours := admissionchain.NewOptions(nil, nil).Plugins.Registered()
	check := func(flag string, names []string, enabling bool) {
		for _, name := range names {
			switch {
			case !known[name]:
				errs = append(errs, fmt.Errorf("%s plugin %q is unknown", flag, name))
			case enabling && !slices.Contains(ours, name):
				errs = append(errs, fmt.Errorf("--%s: the %s admission plugin is not implemented by miniapiserver (it has %s)", flag, name, strings.Join(ours, ", ")))
			}
		}
	}
	check("admission-control", o.PluginNames, true)
	check("enable-admission-plugins", o.Enable, true)
	check("disable-admission-plugins", o.Disable, false)
	for _, name := range o.Enable {
		if slices.Contains(o.Disable, name) {
			errs = append(errs, fmt.Errorf("%v in enable-admission-plugins and disable-admission-plugins overlapped", name))
		}
	}
	return errs
}

// applyTo sets the plugins o turns on among the server's own: all of them
// on unless disabled, or only those --admission-control names.
func (o *admissionOptions) applyTo(opts *server.Options) {
	ours := admissionchain.NewOptions(nil, nil).Plugins.Registered()
	enable, disable := o.Enable, o.Disable
	if o.pluginNamesWereChanged() {
		enable, disable = nil, nil
		for _, name := range ours {
			if slices.Contains(o.PluginNames, name) {
				enable = append(enable, name)
			} else {
				disable = append(disable, name)
			}
		}
	}
	keep := func(names []string) []string {
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !slices.Contains(ours, n) })
	}
	opts.EnableAdmissionPlugins, opts.DisableAdmissionPlugins = keep(enable), keep(disable)
	opts.AdmissionControlConfigFile = o.ConfigFile
	opts.DefaultNotReadyTolerationSeconds, opts.DefaultUnreachableTolerationSeconds = o.NotReadyToleration, o.UnreachableToleration
}

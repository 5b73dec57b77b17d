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
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/term"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/kubegates"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/version"
)

// NewCommand returns the kube-apiserver command: kube-apiserver 1.37's
// flags and help, serving until ctx ends; ready is called once the server
// is ready.
func NewCommand(ctx context.Context, ready func()) *cobra.Command {
	o := NewOptions()
	gates := o.Generic.ComponentGlobalsRegistry
	inert, registerErr := kubegates.Register()
	cmd := &cobra.Command{
		Use: "kube-apiserver",
		Long: `The Kubernetes API server validates and configures data
for the api objects which include pods, services, replicationcontrollers, and
others. The API Server services REST operations and provides the frontend to the
cluster's shared state through which all other components interact.

This kube-apiserver is miniapiserver's: it stores in the etcd of --etcd-servers
and serves the APIs miniapiserver serves.`,
		SilenceUsage: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if registerErr != nil {
				return registerErr
			}
			if err := gates.Set(); err != nil {
				return err
			}
			// The loopback clients should not log the server's own warnings.
			rest.SetDefaultWarningHandler(rest.NoWarnings{})
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if printed, err := printVersion(cmd); printed || err != nil {
				return err
			}
			if err := logsapi.ValidateAndApply(o.Logs, nil); err != nil {
				return err
			}
			if w := kubegates.Warning(inert); w != "" {
				klog.Warning(w)
			}
			if err := checkRefused(cmd.Flags()); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.Complete(); err != nil {
				return err
			}
			// Apply logs an error when no manifest is given (as upstream's):
			// only a metrics flag asks for it.
			if slices.ContainsFunc([]string{"allow-metric-labels", "allow-metric-labels-manifest", "disabled-metrics", "show-hidden-metrics-for-version"}, cmd.Flags().Changed) {
				o.Metrics.Apply()
			}
			return run(ctx, o, ready)
		},
		Args: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				if len(arg) > 0 {
					return fmt.Errorf("%q does not take any arguments, got %q", cmd.CommandPath(), args)
				}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	named := o.Flags()
	verflag.AddFlags(named.FlagSet("global"))
	globalflag.AddGlobalFlags(named.FlagSet("global"), cmd.Name(), logs.SkipLoggingConfigurationFlags())
	for _, f := range named.FlagSets {
		fs.AddFlagSet(f)
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, named, cols)
	return cmd
}

// printVersion prints the version if --version asks for it, as
// kube-apiserver's verflag does, with the server's version.
func printVersion(cmd *cobra.Command) (bool, error) {
	switch v := cmd.Flags().Lookup("version").Value.String(); v {
	case "false":
		return false, nil
	case "true":
		fmt.Fprintf(cmd.OutOrStdout(), "Kubernetes %s\n", version.GitVersion())
	case "raw":
		fmt.Fprintf(cmd.OutOrStdout(), "%#v\n", version.Get())
	default:
		return false, fmt.Errorf("--version=%s is not supported by miniapiserver: it reports its own version", v)
	}
	return true, nil
}

// run runs the server of o until ctx ends.
func run(ctx context.Context, o *Options, ready func()) error {
	cfg, err := o.Config()
	if err != nil {
		return err
	}
	defer cfg.Close()
	return server.Serve(ctx, cfg, func(s *server.Server) {
		ready()
		klog.FromContext(ctx).Info("Serving", "address", s.Admin.Host, "etcd", s.EtcdServers)
	})
}

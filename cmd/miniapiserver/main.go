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

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/etcdmain"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/cli"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/kubeapiserver"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/kubegates"
	_ "github.com/miniapiserver/miniapiserver/pkg/features" // registers our gates for --feature-gates
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/server/admissionchain"
	"github.com/miniapiserver/miniapiserver/pkg/server/controllers"
	"github.com/miniapiserver/miniapiserver/pkg/version"
)

func main() {
	persona, args := personaOf(os.Args)
	switch persona {
	case personaEtcd:
		etcdmain.Main(append([]string{personaEtcd}, etcdArgs(args, os.LookupEnv)...))
		return
	case personaKubeAPIServer:
		gc := pauseGC(startMemoryLimit)
		ctx := genericapiserver.SetupSignalContext()
		context.AfterFunc(ctx, gc.Stopping)
		cmd := kubeapiserver.NewCommand(ctx, gc.Ready)
		cmd.SetArgs(args)
		os.Exit(cli.Run(cmd))
	}
	gc := pauseGC(startMemoryLimit)
	ctx := genericapiserver.SetupSignalContext()
	context.AfterFunc(ctx, gc.Stopping)
	if err := run(ctx, args, gc.Ready); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "miniapiserver:", err)
		os.Exit(1)
	}
}

// The personas: the binary is kube-apiserver or etcd when it is called by
// that name (a link to it), or given it as its first argument.
const (
	personaKubeAPIServer = "kube-apiserver"
	personaEtcd          = "etcd"
)

// personaOf returns the persona of the command line argv and its
// arguments: "" for miniapiserver's own.
func personaOf(argv []string) (string, []string) {
	for _, p := range []string{personaKubeAPIServer, personaEtcd} {
		if filepath.Base(argv[0]) == p {
			return p, argv[1:]
		}
		if len(argv) > 1 && argv[1] == p {
			return p, argv[2:]
		}
	}
	return "", argv[1:]
}

// run runs the command line args, and calls ready once the server is
// ready.
func run(ctx context.Context, args []string, ready func()) error {
	if len(args) > 0 && args[0] == "kubeconfig" {
		return runKubeconfig(args[1:], os.Stdout)
	}
	if len(args) > 0 && args[0] == "envtest-assets" {
		return runEnvtestAssets(args[1:], os.Stdout)
	}
	opts := server.NewOptions()
	fs := pflag.NewFlagSet("miniapiserver", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "miniapiserver runs a minimal Kubernetes API server with an embedded etcd.\n\nUsage:\n  miniapiserver [flags]\n\nFlags:\n%s", fs.FlagUsages())
	}
	fs.StringVar(&opts.DataDir, "data-dir", opts.DataDir, "Directory for etcd data, certificates and the admin kubeconfig; kept across restarts.")
	fs.IntVar(&opts.SecurePort, "secure-port", opts.SecurePort, "Port to serve HTTPS on; 0 picks a free port.")
	fs.StringVar(&opts.BindAddress, "bind-address", opts.BindAddress, "IP address to serve HTTPS on (0.0.0.0 for all interfaces).")
	fs.StringSliceVar(&opts.EtcdServers, "etcd-servers", opts.EtcdServers, "External etcd client URLs (comma separated). Empty: run an embedded etcd in --data-dir.")
	fs.StringVar(&opts.EtcdPrefix, "etcd-prefix", opts.EtcdPrefix, "The prefix of every key in etcd.")
	fs.StringVar(&opts.EtcdCAFile, "etcd-cafile", opts.EtcdCAFile, "CA bundle that verifies the --etcd-servers' TLS certificates.")
	fs.StringVar(&opts.EtcdCertFile, "etcd-certfile", opts.EtcdCertFile, "Client certificate for TLS to --etcd-servers.")
	fs.StringVar(&opts.EtcdKeyFile, "etcd-keyfile", opts.EtcdKeyFile, "Key of --etcd-certfile.")
	fs.StringVar(&opts.AuthorizationMode, "authorization-mode", opts.AuthorizationMode, "RBAC (system:masters may do anything, other users what their roles allow) or AlwaysAllow.")
	fs.StringVar(&opts.TokenAuthFile, "token-auth-file", opts.TokenAuthFile, "CSV of bearer tokens: token,user,uid,\"group1,group2\" (as kube-apiserver's).")
	fs.BoolVar(&opts.WatchCache, "watch-cache", opts.WatchCache, "Serve reads and watches from the watch cache; false serves everything from etcd.")
	fs.DurationVar(&opts.WatchCacheHistoryWindow, "watch-cache-history-window", opts.WatchCacheHistoryWindow, "How long the watch cache keeps events watches can resume from (at least 75s).")
	fs.IntVar(&opts.WatchCacheHistorySize, "watch-cache-history-size", opts.WatchCacheHistorySize, "The most events the watch cache keeps per resource, whatever their age.")
	fs.StringSliceVar(&opts.CRDPaths, "crds", opts.CRDPaths, "CustomResourceDefinition manifests to install on start: files or directories of .yaml/.yml/.json files (comma separated).")
	fs.StringToStringVar((*map[string]string)(&opts.WebhookServices), "webhook-service", nil, "Where webhooks' Service references are served, there being no Service network: NAMESPACE/NAME:PORT=HOST:PORT (comma separated); used by admission and CRD conversion webhooks, and APIServices.")
	plugins := strings.Join(admissionchain.NewOptions(nil, nil).Plugins.Registered(), ", ")
	fs.StringSliceVar(&opts.EnableAdmissionPlugins, "enable-admission-plugins", nil, "Admission plugins to turn on (comma separated; all are on unless disabled): "+plugins+".")
	fs.StringSliceVar(&opts.DisableAdmissionPlugins, "disable-admission-plugins", nil, "Admission plugins to turn off (comma separated): "+plugins+".")
	fs.StringSliceVar(&opts.Controllers, "controllers", opts.Controllers, "The in-server controllers to run, as kube-controller-manager's --controllers: '*' runs those on by default, 'foo' runs foo, '-foo' does not; "+
		"the first that names one decides. Controllers: "+strings.Join(controllers.Names(), ", ")+" (all but "+controllers.GarbageCollector+" on by default).")
	namespaceDefaults := fs.Bool("namespace-defaults", true, "Give every namespace a \"default\" ServiceAccount and the \"kube-root-ca.crt\" ConfigMap, as kube-controller-manager does "+
		"(false: as --controllers=-"+controllers.ServiceAccount+",-"+controllers.RootCAPublisher+",...).")
	garbageCollector := fs.Bool("enable-garbage-collector", false, "Run a garbage collector: delete dependents whose owners are gone, and honour the Foreground and Orphan propagation policies "+
		"(as --controllers="+controllers.GarbageCollector+",...).")
	fs.BoolVar(&opts.PriorityAndFairness, "enable-priority-and-fairness", opts.PriorityAndFairness, "Give requests API priority and fairness, as kube-apiserver: its FlowSchemas and PriorityLevelConfigurations decide which requests wait and which get 429; false applies kube-apiserver's max-in-flight limits instead.")
	fs.DurationVar(&opts.EtcdCompactionInterval, "etcd-compaction-interval", opts.EtcdCompactionInterval, "How often to compact old etcd revisions; 0 disables compaction.")
	fs.BoolVar(&opts.TestControls, "test-controls", false, "Serve testcontrol.miniapiserver.io: checkpoints of the stored state and their restore (compaction holds back for the checkpoints held), and fault rules.")
	audit := genericoptions.NewAuditOptions() // kube-apiserver's --audit-* flags
	audit.AddFlags(fs)
	inert, err := kubegates.Register()
	if err != nil {
		return err
	}
	utilfeature.DefaultMutableFeatureGate.AddFlag(fs)
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlag(klogFlags.Lookup("v"))
	showVersion := fs.Bool("version", false, "Print the version and exit.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *showVersion {
		fmt.Println("miniapiserver", version.GitVersion())
		return nil
	}
	if err := utilerrors.NewAggregate(audit.Validate()); err != nil {
		return err
	}
	if w := kubegates.Warning(inert); w != "" {
		klog.Warning(w)
	}
	if !*namespaceDefaults {
		opts.Controllers = append([]string{"-" + controllers.ServiceAccount, "-" + controllers.RootCAPublisher}, opts.Controllers...)
	}
	if *garbageCollector {
		opts.GarbageCollection = true
		opts.Controllers = append([]string{controllers.GarbageCollector}, opts.Controllers...)
	}

	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	defer cfg.Close()
	cfg.Generic = audit.ApplyTo
	return server.Serve(ctx, cfg, func(s *server.Server) {
		ready()
		fmt.Printf("miniapiserver %s ready on %s — export KUBECONFIG=%s\n", version.GitVersion(), s.Admin.Host, s.KubeconfigPath)
	})
}

// runKubeconfig writes to out a kubeconfig for a user of the server of a
// data dir: `miniapiserver kubeconfig --user bob --group dev > bob.kubeconfig`.
func runKubeconfig(args []string, out io.Writer) error {
	fs := pflag.NewFlagSet("miniapiserver kubeconfig", pflag.ContinueOnError)
	dataDir := fs.String("data-dir", server.NewOptions().DataDir, "The data dir of the server the user is for (it must have started once).")
	user := fs.String("user", "", "The user's name (required).")
	groups := fs.StringArray("group", nil, "A group of the user (repeatable).")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "miniapiserver kubeconfig prints a kubeconfig for a user, with a client certificate the server trusts.\n"+
			"What the user may do is what RBAC allows it (--group system:masters: anything).\n\nUsage:\n  miniapiserver kubeconfig --user NAME [--group GROUP]... [--data-dir DIR]\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *user == "" {
		return errors.New("kubeconfig: --user is required")
	}
	kc, err := server.UserKubeconfig(*dataDir, *user, *groups)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	_, err = out.Write(kc)
	return err
}

// etcdFastElection are etcd flags that make a single member its leader in
// tens of milliseconds instead of about a second (etcd's defaults are a
// 100ms heartbeat and a 1s election timeout): test clusters start faster.
var etcdFastElection = map[string]string{"heartbeat-interval": "10", "election-timeout": "50"}

// etcdArgs returns args with etcdFastElection's flags in front, but for
// those args or the environment (ETCD_HEARTBEAT_INTERVAL, ...) set: etcd's
// flag parser takes the last of a flag given twice, and refuses a flag
// that shadows its environment variable.
func etcdArgs(args []string, lookupEnv func(string) (string, bool)) []string {
	var defaults []string
	for _, name := range slices.Sorted(maps.Keys(etcdFastElection)) {
		env := "ETCD_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if _, set := lookupEnv(env); set || slices.ContainsFunc(args, func(a string) bool {
			a = strings.TrimLeft(a, "-")
			return a == name || strings.HasPrefix(a, name+"=")
		}) {
			continue
		}
		defaults = append(defaults, "--"+name+"="+etcdFastElection[name])
	}
	return append(defaults, args...)
}

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

package envtest

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// Environment is controller-runtime's envtest.Environment, served by an
// in-process miniapiserver. Start starts it; Stop stops it and removes its
// data. The difference: there is no ControlPlane field (no processes to
// configure).
type Environment struct {
	// Scheme is where Start looks for convertible kinds (a hub and its
	// spokes): their CRDs convert by the webhook. Nil: client-go's
	// scheme.Scheme, as envtest's.
	Scheme *runtime.Scheme

	// Config is set by Start: an admin client config for the server.
	Config *rest.Config

	// KubeConfig is set by Start: an admin kubeconfig for the server.
	KubeConfig []byte

	// CRDInstallOptions are merged with CRDs, CRDDirectoryPaths and
	// ErrorIfCRDPathMissing.
	CRDInstallOptions CRDInstallOptions

	// WebhookInstallOptions are the webhooks to install, and where the
	// suite's webhook server is to serve them (set by Start).
	WebhookInstallOptions WebhookInstallOptions

	// ErrorIfCRDPathMissing makes a CRD path that does not exist an error;
	// otherwise it is skipped, as envtest skips it.
	ErrorIfCRDPathMissing bool

	// CRDs are installed, and Start returns once they are Established and
	// in discovery; then it sets CRDs to every CRD installed (those of
	// the paths too).
	CRDs []*apiextensionsv1.CustomResourceDefinition

	// CRDDirectoryPaths are files or directories of CRD manifests (YAML or
	// JSON), installed as CRDs are.
	CRDDirectoryPaths []string

	// UseExistingCluster makes Start use an existing cluster instead of
	// starting a server, as envtest's: Config's if it is set, or else the
	// current kubeconfig's (KUBECONFIG); the CRDs and webhooks are
	// installed there. USE_EXISTING_CLUSTER=true does the same when it is
	// nil.
	UseExistingCluster *bool

	// Accepted and unused: there are no binaries to find or download.
	DownloadBinaryAssets         bool
	DownloadBinaryAssetsVersion  string
	DownloadBinaryAssetsIndexURL string
	BinaryAssetsDirectory        string

	// Accepted and unused: the server starts and stops in process, in well
	// under a second; its errors go to stderr.
	ControlPlaneStartTimeout time.Duration
	ControlPlaneStopTimeout  time.Duration
	AttachControlPlaneOutput bool

	// ServerOptions adjust the miniapiserver before it starts (its own
	// options, e.g. testserver.WithGarbageCollector()).
	ServerOptions []func(*server.Options)

	server *testserver.Server
}

// CRDInstallOptions are envtest's options for installing CRDs.
type CRDInstallOptions struct {
	// Scheme, if not nil, is looked in instead of Environment.Scheme.
	Scheme *runtime.Scheme
	// Paths are files or directories of CRD manifests.
	Paths []string
	// CRDs are CRD objects.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// ErrorIfPathMissing makes a path that does not exist an error.
	ErrorIfPathMissing bool
	// MaxTime and PollInterval bound WaitForCRDs (Start waits until its
	// CRDs are served). CleanUpAfterUse is accepted and unused: Stop
	// throws the server away.
	MaxTime         time.Duration
	PollInterval    time.Duration
	CleanUpAfterUse bool
	// WebhookOptions are set by Start to Environment.WebhookInstallOptions
	// (as envtest does: its CRD conversion webhooks use them).
	WebhookOptions WebhookInstallOptions
}

// WebhookInstallOptions are envtest's options for installing webhooks:
// Start sets LocalServingHost, LocalServingPort, LocalServingCertDir and
// LocalServingCAData, and installs the webhooks pointed at that address,
// where controller-runtime's webhook server serves them (see
// testserver.WebhookInstallOptions).
type WebhookInstallOptions = testserver.WebhookInstallOptions

// Start starts the server, installs the CRDs, and returns an admin config
// once they are served.
func (te *Environment) Start() (*rest.Config, error) {
	// As envtest: the webhook server's address and certificate are ready
	// whether or not there are webhooks, for the suite to start one.
	te.defaultSchemes()
	hooks := &te.WebhookInstallOptions
	hooks.ConvertibleKinds = append(hooks.ConvertibleKinds, convertibleKinds(te.CRDInstallOptions.Scheme)...)
	if err := hooks.PrepWithoutInstalling(); err != nil {
		return nil, fmt.Errorf("envtest: %w", err)
	}
	te.CRDInstallOptions.WebhookOptions = *hooks
	paths, err := te.crdPaths()
	if err != nil {
		return nil, err
	}
	crds := append(append([]*apiextensionsv1.CustomResourceDefinition(nil), te.CRDs...), te.CRDInstallOptions.CRDs...)
	opts := append([]func(*server.Options){func(o *server.Options) {
		o.CRDPaths = append(o.CRDPaths, paths...)
		o.CRDs = append(o.CRDs, crds...)
	}, testserver.WithWebhooks(hooks)}, te.ServerOptions...)
	if te.useExistingCluster() {
		return te.startOnExisting(opts)
	}
	s, err := testserver.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("envtest: %w", err)
	}
	kubeconfig, err := os.ReadFile(s.KubeconfigPath)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("envtest: %w", err), s.Stop())
	}
	// As envtest's, CRDs become what was installed: those of the paths too.
	te.server, te.Config, te.KubeConfig, te.CRDs = s, rest.CopyConfig(s.Config), kubeconfig, s.CRDs()
	return te.Config, nil
}

// User is a user to add with AddUser: its name and groups.
type User struct {
	Name   string
	Groups []string
}

// AuthenticatedUser is a user AddUser added.
type AuthenticatedUser struct {
	cfg *rest.Config
}

// Config returns a client config that authenticates as the user.
func (u *AuthenticatedUser) Config() *rest.Config { return rest.CopyConfig(u.cfg) }

// AddUser returns a user authenticated by a client certificate the server
// trusts, as envtest's: it may do what RBAC allows it (system:masters may
// do anything). baseConfig's settings other than the server and the
// credentials are kept (nil: none).
func (te *Environment) AddUser(user User, baseConfig *rest.Config) (*AuthenticatedUser, error) {
	if te.server == nil {
		return nil, errors.New("envtest: AddUser before Start")
	}
	cfg, err := te.server.AddUser(user.Name, user.Groups...)
	if err != nil {
		return nil, fmt.Errorf("envtest: %w", err)
	}
	if baseConfig != nil {
		base := rest.AnonymousClientConfig(baseConfig)
		base.Host, base.TLSClientConfig = cfg.Host, cfg.TLSClientConfig
		cfg = base
	}
	return &AuthenticatedUser{cfg: cfg}, nil
}

// crdPaths merges the CRD paths, leaving out those that do not exist
// unless that is an error.
func (te *Environment) crdPaths() ([]string, error) {
	return existingPaths(append(slices.Clone(te.CRDDirectoryPaths), te.CRDInstallOptions.Paths...),
		te.ErrorIfCRDPathMissing || te.CRDInstallOptions.ErrorIfPathMissing)
}

// Stop stops the server and removes its data and the webhook
// certificates. It is safe to call more than once, and after a Start that
// failed.
func (te *Environment) Stop() error {
	var err error
	if te.server != nil {
		err = te.server.Stop()
	}
	return errors.Join(err, te.WebhookInstallOptions.Cleanup())
}

// defaultSchemes sets the schemes as envtest's Start does: Scheme
// client-go's scheme.Scheme unless set, CRDInstallOptions.Scheme Scheme
// unless set.
func (te *Environment) defaultSchemes() {
	if te.Scheme == nil {
		te.Scheme = scheme.Scheme
	}
	if te.CRDInstallOptions.Scheme == nil {
		te.CRDInstallOptions.Scheme = te.Scheme
	}
}

// convertibleKinds are the kinds in scheme that convert through a hub, as
// controller-runtime's conversion.IsConvertible finds them: their CRDs
// convert by webhook. (A kind is convertible when one of its versions is
// the hub, with a Hub method, and the others convert to and from it.)
func convertibleKinds(scheme *runtime.Scheme) []schema.GroupKind {
	if scheme == nil {
		return nil
	}
	type hub interface{ Hub() }
	hubs, spokes := map[schema.GroupKind]int{}, map[schema.GroupKind]int{}
	for gvk := range scheme.AllKnownTypes() {
		obj, err := scheme.New(gvk)
		if err != nil {
			continue
		}
		if _, ok := obj.(hub); ok {
			hubs[gvk.GroupKind()]++
		} else if isConvertible(obj) {
			spokes[gvk.GroupKind()]++
		}
	}
	var kinds []schema.GroupKind
	for gk, n := range hubs {
		if n == 1 && spokes[gk] > 0 {
			kinds = append(kinds, gk)
		}
	}
	return kinds
}

// isConvertible reports whether obj has controller-runtime's Convertible
// methods, ConvertTo(conversion.Hub) error and ConvertFrom(conversion.Hub)
// error (looked up by name: this module does not import controller-runtime).
func isConvertible(obj runtime.Object) bool {
	t := reflect.TypeOf(obj)
	for _, name := range []string{"ConvertTo", "ConvertFrom"} {
		m, ok := t.MethodByName(name)
		if !ok || m.Type.NumIn() != 2 || m.Type.NumOut() != 1 || m.Type.In(1).Kind() != reflect.Interface {
			return false
		}
	}
	return true
}

func (te *Environment) useExistingCluster() bool {
	if te.UseExistingCluster != nil {
		return *te.UseExistingCluster
	}
	return os.Getenv("USE_EXISTING_CLUSTER") == "true"
}

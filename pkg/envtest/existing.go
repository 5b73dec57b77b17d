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
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/miniapiserver/miniapiserver/pkg/server"
)

// startOnExisting is Start with UseExistingCluster, as envtest's: the
// cluster is Config's if set, or else the current kubeconfig's; the CRDs
// and webhook configurations opts asks for are installed there, CRDs set
// to those installed, and KubeConfig made from Config.
func (te *Environment) startOnExisting(opts []func(*server.Options)) (*rest.Config, error) {
	if te.Config == nil {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("envtest: existing cluster: %w", err)
		}
		te.Config = cfg
	}
	o := server.NewOptions()
	for _, f := range opts {
		f(o)
	}
	crds, err := server.InstallOnto(context.Background(), te.Config, o)
	if err != nil {
		return nil, fmt.Errorf("envtest: existing cluster: %w", err)
	}
	te.CRDs = crds
	if te.KubeConfig, err = kubeconfigFor(te.Config); err != nil {
		return nil, fmt.Errorf("envtest: existing cluster: %w", err)
	}
	return te.Config, nil
}

// kubeconfigFor is a kubeconfig with cfg's server and credentials, as
// envtest's KubeConfigFromREST makes it.
func kubeconfigFor(cfg *rest.Config) ([]byte, error) {
	c := clientcmdapi.NewConfig()
	c.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthority: cfg.CAFile,
		CertificateAuthorityData: cfg.CAData, InsecureSkipTLSVerify: cfg.Insecure, TLSServerName: cfg.ServerName}
	c.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{ClientCertificate: cfg.CertFile, ClientCertificateData: cfg.CertData,
		ClientKey: cfg.KeyFile, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken, TokenFile: cfg.BearerTokenFile,
		Username: cfg.Username, Password: cfg.Password}
	c.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest"}
	c.CurrentContext = "envtest"
	return clientcmd.Write(*c)
}

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

package datadir

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfig renders a kubeconfig for cfg with one context, "miniapiserver".
func kubeconfig(cfg *rest.Config) ([]byte, error) {
	const name = "miniapiserver"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, TLSServerName: cfg.ServerName}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	kc.CurrentContext = name
	return clientcmd.Write(*kc)
}

// KubeconfigPath is where the admin kubeconfig of the data dir dir is.
func KubeconfigPath(dir string) string { return filepath.Join(dir, kubeconfigFile) }

// WriteKubeconfig writes a kubeconfig for cfg to path, as the data dir's
// other files are written.
func WriteKubeconfig(path string, cfg *rest.Config) error {
	kc, err := kubeconfig(cfg)
	if err != nil {
		return err
	}
	if err := writeFile(path, kc); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

// UserConfig returns a client config for user name in groups on the
// server whose admin config is admin, authenticated by a client
// certificate signed by c's CA.
func (c *Credentials) UserConfig(admin *rest.Config, name string, groups []string) (*rest.Config, error) {
	certPEM, keyPEM, err := clientCertificate(c.CACert, c.CAKey, name, groups)
	if err != nil {
		return nil, err
	}
	return userConfig(admin, certPEM, keyPEM), nil
}

func userConfig(admin *rest.Config, certPEM, keyPEM []byte) *rest.Config {
	return &rest.Config{
		Host:            admin.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData, ServerName: admin.ServerName, CertData: certPEM, KeyData: keyPEM},
	}
}

// UserKubeconfig returns a kubeconfig for user name in groups on the
// server of the data dir dataDir (which need not be running), with a
// client certificate signed by the data dir's CA.
func UserKubeconfig(dataDir, name string, groups []string) ([]byte, error) {
	if err := CheckOwned(dataDir); err != nil {
		return nil, err
	}
	admin, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dataDir, kubeconfigFile))
	if err != nil {
		return nil, fmt.Errorf("the data dir's admin kubeconfig: %w", err)
	}
	caCertPEM, caKeyPEM, found, err := loadPair(filepath.Join(dataDir, caCertFile), filepath.Join(dataDir, caKeyFile))
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("no CA in %s: start the server on it once", dataDir)
	}
	certPEM, keyPEM, err := clientCertificate(caCertPEM, caKeyPEM, name, groups)
	if err != nil {
		return nil, err
	}
	return kubeconfig(userConfig(admin, certPEM, keyPEM))
}

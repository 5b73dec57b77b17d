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

// Package server assembles miniapiserver: Options -> Config -> Complete -> New
// builds the generic API server, its etcd, its storage and its API groups.
package server

import (
	"context"
	"errors"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server/manifests"
)

// crdsToInstall are the CRDs o asks a server to install on start: those of
// CRDPaths, then copies of CRDs, pointed at ConversionWebhook.
func (o *Options) crdsToInstall() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := manifests.ReadCRDs(o.CRDPaths)
	if err != nil {
		return nil, err
	}
	for _, crd := range o.CRDs {
		crds = append(crds, crd.DeepCopy())
	}
	manifests.SetConversionWebhooks(crds, o.ConversionWebhook)
	return crds, nil
}

// InstallOnto installs what o asks a server to install on start (the CRDs
// of CRDPaths and CRDs, pointed at ConversionWebhook, and the webhook
// configurations) onto the cluster cfg reaches, another server, as
// controller-runtime's envtest does with an existing cluster. It returns
// once the CRDs are served, with the CRDs it installed.
func InstallOnto(ctx context.Context, cfg *rest.Config, o *Options) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	if err := errors.Join(o.Errors...); err != nil {
		return nil, err
	}
	crds, err := o.crdsToInstall()
	if err != nil {
		return nil, err
	}
	if err := manifests.InstallCRDs(ctx, cfg, crds); err != nil {
		return nil, err
	}
	hooks := manifests.Webhooks{Mutating: o.MutatingWebhooks, Validating: o.ValidatingWebhooks}
	if err := hooks.Install(ctx, cfg); err != nil {
		return nil, err
	}
	return crds, nil
}

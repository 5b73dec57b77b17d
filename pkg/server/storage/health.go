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

package storage

import (
	"context"
	"net/http"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	storagefactory "k8s.io/apiserver/pkg/storage/storagebackend/factory"
)

// AddEtcdChecks adds etcd to /healthz, /livez and /readyz, as kube-apiserver does.
func AddEtcdChecks(ctx context.Context, gc *genericapiserver.Config, backend *storagebackend.Config) error {
	health, err := storagefactory.CreateHealthCheck(*backend, ctx.Done())
	if err != nil {
		return err
	}
	ready, err := storagefactory.CreateReadyCheck(*backend, ctx.Done())
	if err != nil {
		return err
	}
	gc.AddHealthChecks(healthz.NamedCheck("etcd", func(*http.Request) error { return health() }))
	gc.AddReadyzChecks(healthz.NamedCheck("etcd-readiness", func(*http.Request) error { return ready() }))
	return nil
}

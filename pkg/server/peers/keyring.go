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

package peers

import (
	"context"
	"path"
	"sync"

	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/miniapiserver/miniapiserver/pkg/auth"
	"github.com/miniapiserver/miniapiserver/pkg/server/keyring"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// StartKeyring shares the service-account public keys of tokens with the
// other servers on backend's etcd (see keyring), under this server's
// identity lease name: tokens any of them signs authenticate on all. The
// returned func withdraws them.
func StartKeyring(ctx context.Context, backend *storagebackend.Config, name string, tokens *auth.ServiceAccountTokens) (stop func(), err error) {
	client, err := storage.NewClient(backend.Transport)
	if err != nil {
		return nil, err
	}
	ring, err := keyring.Start(ctx, keyring.Config{Client: client, Name: name, Keys: tokens.OwnKeys(),
		Prefix: path.Join("/miniapiserver.io/serviceaccountkeys", backend.Prefix) + "/"})
	if err != nil {
		client.Close()
		return nil, err
	}
	tokens.PeerKeys = ring.Peers
	return sync.OnceFunc(func() {
		ring.Stop()
		client.Close()
	}), nil
}

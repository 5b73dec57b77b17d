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

package server

import (
	"errors"

	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server/datadir"
)

// UserConfig returns a client config for user name in groups on the
// server whose admin config is admin, authenticated by a client
// certificate signed by the data dir's CA (as envtest's AddUser does). The
// user can do what RBAC allows it: nothing, until roles are bound to it or
// to one of its groups (system:masters can do anything).
func (s *Server) UserConfig(name string, groups ...string) (*rest.Config, error) {
	if s.userCA == nil {
		return nil, errors.New("the server has no data dir: no CA to sign user certificates with")
	}
	return s.userCA.UserConfig(s.Admin, name, groups)
}

// UserKubeconfig returns a kubeconfig for user name in groups on the
// server of the data dir dataDir (which need not be running), with a
// client certificate signed by the data dir's CA.
func UserKubeconfig(dataDir, name string, groups []string) ([]byte, error) {
	return datadir.UserKubeconfig(dataDir, name, groups)
}

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

// Package datadir keeps what a miniapiserver must find again in its data
// dir across restarts, etcd's data aside: the CA, the serving certificate
// (issued again when it no longer covers the server's hosts), the service
// account signing key, the admin token and the admin kubeconfig, each file
// written atomically with mode 0600; and the lock that keeps a second
// server off the dir. pkg/server takes the lock and the credentials in
// Options.Config, serves with them, and issues user certificates from the
// same CA (Server.UserConfig, UserKubeconfig). It imports nothing of this
// module.
package datadir

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
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// storagePath is where a server reads from: the watch cache or etcd.
type storagePath struct {
	name string   // "cache" or "etcd"
	args []string // server flags selecting it
}

var (
	cachePath = storagePath{name: "cache", args: []string{"--watch-cache=true"}}
	etcdPath  = storagePath{name: "etcd", args: []string{"--watch-cache=false"}}
)

// withArgs is cfg with args after its -server-args, so that they win.
func withArgs(cfg config, args ...string) config {
	cfg.serverArgs = append(slices.Clone(cfg.serverArgs), args...)
	return cfg
}

// ownClient is a clientset with an HTTP client, and so connections, of its
// own: client-go shares one transport between configs with equal TLS
// settings unless their Dial funcs differ. Release it with closeIdle.
func ownClient(rc *rest.Config) (*kubernetes.Clientset, *http.Client, error) {
	c := rest.CopyConfig(rc)
	c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, nil, fmt.Errorf("creating HTTP client: %w", err)
	}
	client, err := kubernetes.NewForConfigAndClient(c, hc)
	if err != nil {
		return nil, nil, fmt.Errorf("creating client: %w", err)
	}
	return client, hc, nil
}

// closeIdle closes the idle connections of an HTTP client made by
// rest.HTTPClientFor, through client-go's round-tripper wrappers.
func closeIdle(c *http.Client) {
	utilnet.CloseIdleConnectionsFor(c.Transport)
}

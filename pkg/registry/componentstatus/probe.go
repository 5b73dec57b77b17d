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

package componentstatus

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	utilio "k8s.io/utils/io"
)

// Result is a probe's outcome, as upstream's probe.Result.
type Result string

const (
	Success Result = "success"
	// Warning is a success with something to say (a redirect not followed).
	Warning Result = "warning"
	Failure Result = "failure"
	Unknown Result = "unknown"
)

// probeTimeout bounds each probe, as upstream's.
const probeTimeout = 20 * time.Second

// maxBody is how much of a probed response upstream's HTTP prober keeps.
const maxBody = 10 << 10

// Server is a component whose health is probed: its result, the message
// (the response's body, or why it failed) and an error.
type Server interface {
	DoServerCheck(ctx context.Context) (Result, string, error)
}

// Servers returns upstream's serversToValidate: kube-controller-manager
// and kube-scheduler on their default secure ports on 127.0.0.1 (their
// certificates unchecked), and etcd-0, etcd-1, ... for each storage
// config; userAgent is what the HTTP probes send ("kube-probe/1.37").
func Servers(userAgent string, etcd ...storagebackend.Config) map[string]Server {
	servers := map[string]Server{
		"controller-manager": &HTTPServer{EnableHTTPS: true, TLSConfig: &tls.Config{InsecureSkipVerify: true}, Addr: "127.0.0.1", Port: 10257, Path: "/healthz", UserAgent: userAgent},
		"scheduler":          &HTTPServer{EnableHTTPS: true, TLSConfig: &tls.Config{InsecureSkipVerify: true}, Addr: "127.0.0.1", Port: 10259, Path: "/healthz", UserAgent: userAgent},
	}
	for i, cfg := range etcd {
		servers[fmt.Sprintf("etcd-%d", i)] = &EtcdServer{Config: cfg}
	}
	return servers
}

// HTTPServer is a component probed with an HTTP GET, as upstream's
// HttpServer with its HTTP prober (redirects followed).
type HTTPServer struct {
	Addr        string
	Port        int
	Path        string
	EnableHTTPS bool
	TLSConfig   *tls.Config
	UserAgent   string

	once   sync.Once
	client *http.Client
}

var _ Server = &HTTPServer{}

// DoServerCheck implements Server: what probe finds, or Unknown and its
// error if it could not tell.
func (s *HTTPServer) DoServerCheck(ctx context.Context) (Result, string, error) {
	s.once.Do(func() {
		// Upstream's dialer also shortens TIME-WAIT (SO_LINGER), for the
		// kubelet's many probes; nothing else differs. The TLS config is
		// cloned: configuring HTTP/2 writes to it.
		transport := utilnet.SetTransportDefaults(&http.Transport{TLSClientConfig: s.TLSConfig.Clone(), DisableKeepAlives: true,
			Proxy: http.ProxyURL(nil), DisableCompression: true})
		s.client = &http.Client{Timeout: probeTimeout, Transport: transport}
	})
	result, message, err := s.probe(ctx)
	if err != nil {
		return Unknown, "", err
	}
	return result, message, nil
}

// probe is upstream's DoHTTPProbe: an answer in 200-399 is a success (a
// redirect left unfollowed, a warning), any other a failure saying its
// status code; a server that cannot be reached fails with the client's
// error as the message.
func (s *HTTPServer) probe(ctx context.Context) (Result, string, error) {
	scheme := "http"
	if s.EnableHTTPS {
		scheme = "https"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, utilnet.FormatURL(scheme, s.Addr, s.Port, s.Path).String(), nil)
	if err != nil {
		return Unknown, "", fmt.Errorf("failed to construct probe request: %w", err)
	}
	req.Header.Set("User-Agent", s.UserAgent)
	req.Header.Set("Accept", "*/*")
	res, err := s.client.Do(req)
	if err != nil {
		return Failure, err.Error(), nil
	}
	defer res.Body.Close()
	b, err := utilio.ReadAtMost(res.Body, maxBody)
	if err != nil && !errors.Is(err, utilio.ErrLimitReached) {
		return Failure, "", err
	}
	switch {
	case res.StatusCode >= http.StatusMultipleChoices && res.StatusCode < http.StatusBadRequest:
		return Warning, fmt.Sprintf("Probe terminated redirects, Response body: %v", string(b)), nil
	case res.StatusCode >= http.StatusOK && res.StatusCode < http.StatusBadRequest:
		return Success, string(b), nil
	}
	return Failure, fmt.Sprintf("HTTP probe failed with statuscode: %d", res.StatusCode), nil
}

// EtcdServer is an etcd cluster, probed as kube-apiserver's /healthz
// probes it: a read through a client of its own.
type EtcdServer struct {
	storagebackend.Config
}

var _ Server = &EtcdServer{}

// DoServerCheck implements Server: "ok", or a failure and its error.
func (s *EtcdServer) DoServerCheck(ctx context.Context) (Result, string, error) {
	prober, err := factory.CreateProber(s.Config)
	if err != nil {
		return Failure, "", err
	}
	defer prober.Close()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if err := prober.Probe(ctx); err != nil {
		return Failure, "", err
	}
	return Success, "ok", nil
}

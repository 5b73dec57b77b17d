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

package aggregator

import (
	"net"
	"net/http"
	"syscall"

	"k8s.io/client-go/rest"
)

// refusedOnceStopping returns a copy of loopback whose requests, once
// stopping closes, fail as a refused connection, as a stopped
// kube-apiserver's clients' do. The server's shutdown ends every watch
// before the aggregator's informers stop (their stop is kube-aggregator's
// post-start hook's); a watch they re-made then was cancelled mid-request
// and logged as an error. A refused one they retry quietly until they stop.
func refusedOnceStopping(loopback *rest.Config, stopping <-chan struct{}) *rest.Config {
	c := rest.CopyConfig(loopback)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			select {
			case <-stopping:
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
			default:
				return rt.RoundTrip(req)
			}
		})
	})
	return c
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

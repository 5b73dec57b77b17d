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

package serving

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Finishing returns cfg whose requests, but watches, run to their end
// when their context ends: the server's own clients stop (their context
// ends) as the server stops, and a request they had in flight, cancelled,
// would be answered as timed out and logged as an error. A watch ends
// with its context.
func Finishing(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return finishingRequests{rt} })
	return cfg
}

type finishingRequests struct{ http.RoundTripper }

func (f finishingRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	if w := req.URL.Query().Get("watch"); w == "true" || w == "1" || strings.Contains(req.URL.Path, "/watch/") {
		return f.RoundTripper.RoundTrip(req)
	}
	return f.RoundTripper.RoundTrip(req.WithContext(context.WithoutCancel(req.Context())))
}

// PollReady polls the /readyz of cfg's server until it answers 200 or ctx
// ends.
func PollReady(ctx context.Context, cfg *rest.Config) error {
	client, err := kubernetes.NewForConfig(Finishing(cfg))
	if err != nil {
		return err
	}
	var lastErr error
	err = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, lastErr = client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return lastErr == nil, nil
	})
	if err != nil {
		return fmt.Errorf("server not ready: %w (last /readyz error: %v)", err, lastErr)
	}
	return nil
}

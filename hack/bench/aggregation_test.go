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

package bench

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

// widgetPath is the object BenchmarkAggregatedGet gets.
const widgetPath = "/apis/bench.example.com/v1/namespaces/default/widgets/w"

// BenchmarkAggregatedGet times GETs, one at a time, of an object an
// extension API server serves, through each server's aggregator: the
// benchmark serves bench.example.com/v1 over TLS, registered by an
// APIService behind an ExternalName Service (localhost), and the server
// proxies each request to it, as kube-apiserver proxies to metrics-server.
func BenchmarkAggregatedGet(b *testing.B) {
	ext := httptest.NewTLSServer(http.HandlerFunc(serveWidgets))
	b.Cleanup(ext.Close)
	servers := startEach(b, func(driver.Kind) string { return b.TempDir() })
	for _, s := range servers {
		if err := registerWidgets(b.Context(), s, ext); err != nil {
			b.Fatal(err)
		}
	}
	onEach(b, func(b *testing.B, kind driver.Kind) {
		rc := servers[kind].Client().Discovery().RESTClient()
		loop(b, func(int) error {
			_, err := rc.Get().AbsPath(widgetPath).DoRaw(b.Context())
			return err
		})
	})
}

// serveWidgets is a tiny extension API server: discovery of
// bench.example.com/v1 and one widget.
func serveWidgets(w http.ResponseWriter, r *http.Request) {
	var body any
	switch r.URL.Path {
	case "/apis/bench.example.com/v1":
		body = metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "bench.example.com/v1",
			APIResources: []metav1.APIResource{{Name: "widgets", Namespaced: true, Kind: "Widget", Verbs: []string{"get"}}}}
	case widgetPath:
		body = metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "Widget", APIVersion: "bench.example.com/v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "default"}}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// registerWidgets registers ext with s, and waits until s serves the widget.
func registerWidgets(ctx context.Context, s *driver.Server, ext *httptest.Server) error {
	_, portText, err := net.SplitHostPort(ext.Listener.Addr().String())
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return err
	}
	client := s.Client()
	if _, err := client.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost", Ports: []corev1.ServicePort{{Port: int32(port)}}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	apiService := map[string]any{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": "v1.bench.example.com"},
		"spec": map[string]any{"group": "bench.example.com", "version": "v1", "insecureSkipTLSVerify": true, "groupPriorityMinimum": 1000, "versionPriority": 15,
			"service": map[string]any{"namespace": "default", "name": "widgets", "port": port}}}
	body, err := json.Marshal(apiService)
	if err != nil {
		return err
	}
	rc := client.Discovery().RESTClient()
	if err := rc.Post().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices").Body(body).Do(ctx).Error(); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return rc.Get().AbsPath(widgetPath).Do(ctx).Error() == nil, nil
	})
}

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

package integration

import (
	"encoding/base64"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// FuzzContinueToken sends arbitrary continue tokens: the answer is a page,
// 400 (malformed), 410 (compacted) or 504 (a revision from the future), never
// another 5xx. `make fuzz` runs it; go test runs the seeds.
func FuzzContinueToken(f *testing.F) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, seed := range []string{
		"", "!!!", enc("{}"), enc("null"), enc(`{"v":"meta.k8s.io/v1","rv":1,"start":"a"}`),
		enc(`{"v":"meta.k8s.io/v1","rv":-1,"start":"cm-001\u0000"}`),
		enc(`{"v":"meta.k8s.io/v1","rv":3,"start":"../../x"}`),
		enc(`{"v":"meta.k8s.io/v1","rv":9223372036854775807,"start":"x"}`),
		enc(`{"v":"meta.k8s.io/v1","rv":3,"start":"/"}`),
	} {
		f.Add(seed)
	}
	s := testserver.Start(f)
	client := kubernetes.NewForConfigOrDie(s.Config)
	f.Fuzz(func(t *testing.T, token string) {
		// One request: client-go would retry a 504 (it has Retry-After) for 10 s.
		opts := metav1.ListOptions{Limit: 2, Continue: token}
		err := client.CoreV1().RESTClient().Get().Namespace("default").Resource("configmaps").
			VersionedParams(&opts, scheme.ParameterCodec).MaxRetries(0).Do(t.Context()).Into(&corev1.ConfigMapList{})
		if err == nil {
			return
		}
		status, ok := err.(apierrors.APIStatus)
		if !ok {
			t.Fatalf("continue=%q: got %v, want a Status", token, err)
		}
		switch code := status.Status().Code; {
		case code == http.StatusBadRequest, code == http.StatusGone, code == http.StatusGatewayTimeout:
		default:
			t.Fatalf("continue=%q: got %d %v, want 400, 410 or 504", token, code, err)
		}
	})
}

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

package testcontrol

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRequests checks what the client sends and how it reads the answers,
// against a stand-in for the server (the real one is exercised by
// test/envtest, on the binary).
func TestRequests(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+string(body))
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/checkpoints"):
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"kind":"Checkpoint","metadata":{"name":"clean"},"status":{"resourceVersion":"42"}}`)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/faultrules"):
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, string(body))
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/faultrules/slow"):
			io.WriteString(w, `{"kind":"FaultRule","metadata":{"name":"slow"},"status":{"hits":7}}`)
		case r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/faultrules/slow"):
			io.WriteString(w, `{"kind":"FaultRule","metadata":{"name":"slow"}}`)
		case strings.HasSuffix(r.URL.Path, "/clean/restore"):
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"kind":"Restore","status":{"deleted":2,"recreated":1,"reverted":3,"resourceVersion":"50"}}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"kind":"Status","status":"Failure","reason":"NotFound","message":"checkpoints.testcontrol.miniapiserver.io \"gone\" not found","code":404}`)
		}
	}))
	defer srv.Close()
	c := New(srv.URL+"/", srv.Client())

	cp, err := c.Checkpoint(context.Background(), "clean")
	if err != nil || cp != (Checkpoint{Name: "clean", ResourceVersion: "42"}) {
		t.Errorf("Checkpoint: %+v, %v; want clean at 42", cp, err)
	}
	st, err := c.Restore(context.Background(), "clean")
	if want := (RestoreStatus{Deleted: 2, Recreated: 1, Reverted: 3, ResourceVersion: "50"}); err != nil || st != want {
		t.Errorf("Restore: %+v, %v; want %+v", st, err, want)
	}
	err = c.DeleteCheckpoint(context.Background(), "gone")
	if !IsNotFound(err) || !strings.Contains(err.Error(), `"gone" not found`) {
		t.Errorf("DeleteCheckpoint of an unknown checkpoint: %v, want the server's NotFound", err)
	}
	ctx := context.Background()
	remove, err := c.InjectFault(ctx, "slow", FaultRule{Match: FaultMatch{Verbs: []string{"create"}, Resources: []string{"pods"}}, Count: 2,
		Delay: &FaultDelay{Before: "1s"}})
	if err != nil {
		t.Fatalf("InjectFault: %v", err)
	}
	if hits, err := c.FaultHits(ctx, "slow"); err != nil || hits != 7 {
		t.Errorf("FaultHits: %d, %v; want 7", hits, err)
	}
	if err := remove(ctx); err != nil {
		t.Errorf("removing the rule: %v", err)
	}
	want := []string{
		`POST /apis/testcontrol.miniapiserver.io/v1alpha1/checkpoints {"apiVersion":"testcontrol.miniapiserver.io/v1alpha1","kind":"Checkpoint","metadata":{"name":"clean"}}`,
		`POST /apis/testcontrol.miniapiserver.io/v1alpha1/checkpoints/clean/restore {"apiVersion":"testcontrol.miniapiserver.io/v1alpha1","kind":"Restore"}`,
		`DELETE /apis/testcontrol.miniapiserver.io/v1alpha1/checkpoints/gone `,
		`POST /apis/testcontrol.miniapiserver.io/v1alpha1/faultrules {"apiVersion":"testcontrol.miniapiserver.io/v1alpha1","kind":"FaultRule","metadata":{"name":"slow"},` +
			`"spec":{"match":{"verbs":["create"],"resources":["pods"]},"count":2,"delay":{"before":"1s"}}}`,
		`GET /apis/testcontrol.miniapiserver.io/v1alpha1/faultrules/slow `,
		`DELETE /apis/testcontrol.miniapiserver.io/v1alpha1/faultrules/slow `,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

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

package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
)

// objects is a Lookup over a few objects.
type objects struct {
	sas     map[string]*corev1.ServiceAccount
	pods    map[string]*corev1.Pod
	secrets map[string]*corev1.Secret
}

func get[T any](m map[string]T, resource, ns, name string) (T, error) {
	if obj, ok := m[ns+"/"+name]; ok {
		return obj, nil
	}
	var zero T
	return zero, apierrors.NewNotFound(corev1.Resource(resource), name)
}

func (o objects) ServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	return get(o.sas, "serviceaccounts", ns, name)
}
func (o objects) Pod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	return get(o.pods, "pods", ns, name)
}
func (o objects) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	return get(o.secrets, "secrets", ns, name)
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func TestServiceAccountTokens(t *testing.T) {
	robot := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "robot", UID: "sa-1"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "pod-1"}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	issuer := &ServiceAccountTokens{Key: newKey(t), Issuer: "https://kubernetes.default.svc.cluster.local", Audiences: []string{"api"}, Now: clock}
	token := func(audiences []string, binding *Binding) string {
		tok, _, err := issuer.Issue(robot, audiences, time.Hour, binding)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	live := objects{sas: map[string]*corev1.ServiceAccount{"ns/robot": robot}, pods: map[string]*corev1.Pod{"ns/web": pod}}
	for _, tc := range []struct {
		name    string
		checker *ServiceAccountTokens
		token   string
		ctx     context.Context
		want    bool // authenticated
		wantErr bool
	}{
		{name: "valid", token: token([]string{"api"}, nil), want: true},
		{name: "bound to a live pod", token: token([]string{"api"}, &Binding{Kind: "Pod", Name: "web", UID: "pod-1"}), want: true},
		{name: "bound to a deleted pod", token: token([]string{"api"}, &Binding{Kind: "Pod", Name: "gone", UID: "pod-2"}), wantErr: true},
		{name: "bound to a pod of the same name, another UID", token: token([]string{"api"}, &Binding{Kind: "Pod", Name: "web", UID: "pod-0"}), wantErr: true},
		{name: "another audience", token: token([]string{"vault"}, nil), wantErr: true},
		{name: "the audience the request asks for", token: token([]string{"vault"}, nil), ctx: authenticator.WithAudiences(context.Background(), authenticator.Audiences{"vault"}), want: true},
		{name: "not a JWT", token: "admin-token"},
		{name: "another key", token: token([]string{"api"}, nil), checker: &ServiceAccountTokens{Key: newKey(t), Issuer: issuer.Issuer, Audiences: []string{"api"}, Lookup: live, Now: clock}},
		{name: "expired", token: token([]string{"api"}, nil), checker: &ServiceAccountTokens{Key: issuer.Key, Issuer: issuer.Issuer, Audiences: []string{"api"}, Lookup: live,
			Now: func() time.Time { return now.Add(2 * time.Hour) }}, wantErr: true},
		{name: "its service account deleted", token: token([]string{"api"}, nil), checker: &ServiceAccountTokens{Key: issuer.Key, Issuer: issuer.Issuer, Audiences: []string{"api"}, Lookup: objects{}, Now: clock}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checker := tc.checker
			if checker == nil {
				checker = &ServiceAccountTokens{Key: issuer.Key, Issuer: issuer.Issuer, Audiences: issuer.Audiences, Lookup: live, Now: clock}
			}
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			resp, ok, err := checker.AuthenticateToken(ctx, tc.token)
			if ok != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("got %t, %v; want %t, error %t", ok, err, tc.want, tc.wantErr)
			}
			if ok {
				u := resp.User
				if u.GetName() != "system:serviceaccount:ns:robot" || u.GetUID() != "sa-1" || len(u.GetGroups()) != 2 || u.GetGroups()[1] != "system:serviceaccounts:ns" {
					t.Errorf("user: got %s %s %v", u.GetName(), u.GetUID(), u.GetGroups())
				}
			}
		})
	}
}

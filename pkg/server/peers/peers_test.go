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

package peers

import (
	"context"
	"regexp"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestIdentityLeaseName(t *testing.T) {
	a, b := identityLeaseName("127.0.0.1:6443"), identityLeaseName("127.0.0.1:6444")
	if again := identityLeaseName("127.0.0.1:6443"); again != a {
		t.Errorf("got %q for the same address, want %q", again, a)
	}
	if a == b {
		t.Errorf("got %q for two addresses, want a name each", a)
	}
	if !regexp.MustCompile(`^apiserver-[a-z2-7]{26}$`).MatchString(a) {
		t.Errorf("got %q, want apiserver- and 26 lower-case base32 characters", a)
	}
}

// identityLease is a lease named name, labelled as identity leases are,
// renewed at renewed.
func identityLease(name string, renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem,
			Labels: map[string]string{identityLabel: identityLabelValue}},
		Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](3600), RenewTime: &metav1.MicroTime{Time: renewed}},
	}
}

func TestLive(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lease *coordinationv1.Lease
		want  bool
	}{
		{name: "renewed now", lease: identityLease("a", time.Now()), want: true},
		{name: "expired", lease: identityLease("a", time.Now().Add(-2*time.Hour)), want: false},
		{name: "never renewed", lease: &coordinationv1.Lease{}, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := live(tc.lease); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAlone(t *testing.T) {
	const address = "127.0.0.1:6443"
	own := identityLease(identityLeaseName(address), time.Now())
	for _, tc := range []struct {
		name     string
		embedded bool
		others   []*coordinationv1.Lease
		want     bool
	}{
		{name: "embedded", embedded: true, want: true},
		{name: "no other lease", want: true},
		{name: "another live lease", others: []*coordinationv1.Lease{identityLease("apiserver-other", time.Now())}, want: false},
		{name: "another expired lease", others: []*coordinationv1.Lease{identityLease("apiserver-other", time.Now().Add(-2*time.Hour))}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(tc.embedded, address)
			if got := p.Embedded(); got != tc.embedded {
				t.Errorf("Embedded: got %v, want %v", got, tc.embedded)
			}
			if !tc.embedded {
				if p.Alone() {
					t.Errorf("Alone before Watch: got true, want false")
				}
				client := fake.NewClientset(own)
				for _, l := range tc.others {
					if err := client.Tracker().Add(l); err != nil {
						t.Fatal(err)
					}
				}
				var running sync.WaitGroup
				ctx, cancel := context.WithCancel(t.Context())
				t.Cleanup(func() { cancel(); running.Wait() })
				until, stop := context.WithTimeout(ctx, 10*time.Second)
				defer stop()
				if !p.Watch(ctx, until, client, &running) {
					t.Fatalf("Watch: got false, want true (it holds its own lease %q)", p.Name())
				}
			}
			if got := p.Alone(); got != tc.want {
				t.Errorf("Alone: got %v, want %v", got, tc.want)
			}
		})
	}
}

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

package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
)

// TestClaimRetriesAnAddressAnotherServerTook: an allocated address that
// another server recorded first (its IPAddress exists) is given up for
// another free one; a requested one is refused. Neither stays pending.
func TestClaimRetriesAnAddressAnotherServerTook(t *testing.T) {
	addrs := usableAddrs(DefaultRanges)
	held := map[string]bool{}
	for _, addr := range addrs[:len(addrs)-1] {
		held[addr.String()] = true // all but one
	}
	records := &ipRecords{held: held}
	a := &allocator{ranges: DefaultRanges, ips: records, list: func(context.Context, bool) ([]corev1.Service, error) { return nil, nil }}
	svc := holding("late", "")
	_, unhold, err := a.claim(context.Background(), &svc, nil, false)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	last := addrs[len(addrs)-1].String()
	if svc.Spec.ClusterIP != last || len(records.created) != 1 || records.created[0] != last {
		t.Errorf("got cluster IP %s and records %v, want the one free address %s recorded", svc.Spec.ClusterIP, records.created, last)
	}
	if len(a.pendingIPs) != 1 {
		t.Errorf("pending while claimed: %v, want %s", a.pendingIPs, last)
	}
	unhold()

	asked := holding("asks", addrs[0].String())
	if _, _, err := a.claim(context.Background(), &asked, nil, false); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided IP is already allocated") {
		t.Errorf("a requested address another holds: got %v, want 422", err)
	}
	if len(a.pendingIPs) != 0 {
		t.Errorf("pending after the claims ended: %v, want none", a.pendingIPs)
	}
}

// TestAllocationsPendUntilTheirWriteEnds: a cluster IP an allocation
// handed out is not handed out again while its service is being written
// (the list does not show it yet), and is free again once the write has
// ended. (Node ports are recorded before the write: see nodeports_test.go.)
func TestAllocationsPendUntilTheirWriteEnds(t *testing.T) {
	a := fakeAllocator()
	first := holding("first", "10.0.0.10", 30080)
	unhold := a.hold(&first)
	svc := holding("same-ip", "10.0.0.10")
	if err := a.allocateNew(context.Background(), &svc, false); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "already allocated") {
		t.Errorf("%s, while the first is being written: got %v, want 422 already allocated", svc.Name, err)
	}
	unhold()
	svc = holding("same-ip", "10.0.0.10")
	if err := a.allocateNew(context.Background(), &svc, false); err != nil {
		t.Errorf("%s, once the first's write has ended (and failed): got %v, want none", svc.Name, err)
	}
	if len(a.pendingIPs) != 0 || len(a.pendingPorts) != 0 {
		t.Errorf("pending after unhold: %v, %v; want none", a.pendingIPs, a.pendingPorts)
	}
}

// TestAFullRangeIsCheckedConsistently: a range the watch cache's lists
// show full (they may still hold Services just deleted) is listed again,
// consistently, before the 500.
func TestAFullRangeIsCheckedConsistently(t *testing.T) {
	var stale []corev1.Service
	for i, addr := range usableAddrs(DefaultRanges) {
		stale = append(stale, holding(fmt.Sprint("deleted-", i), addr.String()))
	}
	a := &allocator{
		ranges: DefaultRanges,
		ips:    &ipRecords{held: map[string]bool{}},
		list: func(_ context.Context, consistent bool) ([]corev1.Service, error) {
			if consistent {
				return stale[1:], nil // the first was deleted
			}
			return stale, nil
		},
	}
	svc := holding("new", "")
	if err := a.allocateNew(context.Background(), &svc, false); err != nil {
		t.Fatalf("allocate: got %v, want the deleted Service's address", err)
	}
	if want := usableAddrs(DefaultRanges)[0].String(); svc.Spec.ClusterIP != want {
		t.Errorf("cluster IP: got %s, want %s, the only free one", svc.Spec.ClusterIP, want)
	}
}

// TestWhichAllocationsListConsistently: an allocation reads the stored
// services and IPAddresses consistently where nothing else checks it: for
// a cluster IP that is not recorded as an IPAddress
// (whose create fails if the address is taken); and where a stale list
// could refuse what it asks for: an address of a Service just deleted.
func TestWhichAllocationsListConsistently(t *testing.T) {
	for _, tt := range []struct {
		name     string
		svc      corev1.Service
		recorded bool
		want     bool
	}{
		{"cluster IP, recorded", holding("web", ""), true, false},
		{"cluster IP, not recorded", holding("web", ""), false, true},
		{"node port, recorded", holding("web", "", 0), true, false}, // the ports from their record
		{"requested cluster IP, recorded", holding("web", "10.0.0.10"), true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var consistent []bool
			a := &allocator{ranges: DefaultRanges, ports: &memPorts{ports: map[int32]bool{}}, list: func(_ context.Context, c bool) ([]corev1.Service, error) {
				consistent = append(consistent, c)
				return nil, nil
			}}
			want := []bool{tt.want}
			if tt.recorded {
				records := &ipRecords{held: map[string]bool{}}
				records.listed = func(opts *metainternalversion.ListOptions) {
					consistent = append(consistent, opts.ResourceVersion == "")
				}
				a.ips = records
				want = append(want, tt.want)
			}
			if err := a.allocateNew(context.Background(), &tt.svc, false); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(consistent, want) {
				t.Errorf("lists (services, then IPAddresses), consistent: got %v, want %v", consistent, want)
			}
		})
	}
}

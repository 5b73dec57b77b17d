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
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	apistorage "k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"
)

// As kube-apiserver's, the node ports handed out are recorded in etcd, in
// one core/v1 RangeAllocation at /ranges/servicenodeports (under the
// storage prefix): its Range is the port range ("30000-32767") and its
// Data a bitmap, bit i standing for port Base+i (a big-endian big.Int, as
// upstream's AllocationBitmap). Every change is a compare-and-swap of the
// whole record, so no two Services get one port, whichever server (of
// several on one etcd) hands it out. A port is recorded before its
// Service is written, and released after its Service is deleted or no
// longer holds it; what a failed server leaves recorded, the repair frees.

// NodePortAllocations is the resource the record is stored as (upstream's).
var NodePortAllocations = corev1.Resource("servicenodeportallocations")

// nodePortsKey is the record's key under the storage prefix.
const nodePortsKey = "/ranges/servicenodeports"

// portRecord is the record of the node ports handed out.
type portRecord interface {
	// held returns the ports the record holds (none if it is absent).
	held(ctx context.Context) (map[int32]bool, error)
	// update changes the ports the record holds by fn, as one
	// compare-and-swap: fn runs again on the record another server wrote
	// meanwhile. Unless create, an absent record is errNoRecord.
	update(ctx context.Context, create bool, fn func(held map[int32]bool) error) error
}

// errNoRecord is update's error for a record not made yet (the repair
// makes it from the stored Services).
var errNoRecord = fmt.Errorf("no record of the node ports allocated")

// etcdPorts is the record in a storage.
type etcdPorts struct {
	storage apistorage.Interface
	// ports is the range the record is written in.
	ports PortRange
	// last is the record as last read or written: the first try of a
	// change starts from it (a stale one costs a read and a retry).
	last *atomic.Pointer[corev1.RangeAllocation]
}

var _ portRecord = etcdPorts{}

// newPortRecord returns the record in optsGetter's storage of
// NodePortAllocations (kept out of the watch caches: it is one key) and
// the func that closes it.
func newPortRecord(optsGetter generic.RESTOptionsGetter, ports PortRange) (etcdPorts, func(), error) {
	opts, err := optsGetter.GetRESTOptions(NodePortAllocations, &corev1.RangeAllocation{})
	if err != nil {
		return etcdPorts{}, nil, err
	}
	newFunc := func() runtime.Object { return &corev1.RangeAllocation{} }
	st, destroy, err := opts.Decorator(opts.StorageConfig, nodePortsKey, nil, newFunc, nil, nil, nil, nil)
	if err != nil {
		return etcdPorts{}, nil, fmt.Errorf("the record of node ports: %w", err)
	}
	return etcdPorts{storage: st, ports: ports, last: &atomic.Pointer[corev1.RangeAllocation]{}}, destroy, nil
}

func (r etcdPorts) held(ctx context.Context) (map[int32]bool, error) {
	ra := &corev1.RangeAllocation{}
	if err := r.storage.Get(ctx, nodePortsKey, apistorage.GetOptions{IgnoreNotFound: true}, ra); err != nil {
		return nil, err
	}
	return portsOf(ra)
}

func (r etcdPorts) update(ctx context.Context, create bool, fn func(held map[int32]bool) error) error {
	var cached runtime.Object
	if last := r.last.Load(); last != nil {
		cached = last.DeepCopy()
	}
	out := &corev1.RangeAllocation{}
	err := r.storage.GuaranteedUpdate(ctx, nodePortsKey, out, true, nil,
		apistorage.SimpleUpdate(func(in runtime.Object) (runtime.Object, error) {
			ra := in.(*corev1.RangeAllocation)
			if ra.ResourceVersion == "" && !create {
				return nil, errNoRecord
			}
			held, err := portsOf(ra)
			if err != nil {
				return nil, err
			}
			if err := fn(held); err != nil {
				return nil, err
			}
			ra.Range, ra.Data = r.ports.String(), r.ports.bitmap(held)
			return ra, nil
		}), cached)
	if err == nil {
		r.last.Store(out)
	}
	return err
}

// portsOf returns the ports ra holds, in the range it was written in.
func portsOf(ra *corev1.RangeAllocation) (map[int32]bool, error) {
	held := map[int32]bool{}
	if ra.Range == "" {
		return held, nil
	}
	from, to, ok := strings.Cut(ra.Range, "-")
	base, err1 := strconv.ParseInt(from, 10, 32)
	last, err2 := strconv.ParseInt(to, 10, 32)
	if !ok || err1 != nil || err2 != nil || last < base {
		return nil, fmt.Errorf("the record of node ports has range %q, want first-last", ra.Range)
	}
	bits := new(big.Int).SetBytes(ra.Data)
	for i := range bits.BitLen() {
		if bits.Bit(i) == 1 && int64(i) <= last-base {
			held[int32(base)+int32(i)] = true
		}
	}
	return held, nil
}

// bitmap is the record's Data for held: the ports of p only (a port
// outside it is no longer handed out, and cannot be again).
func (p PortRange) bitmap(held map[int32]bool) []byte {
	bits := new(big.Int)
	for port := range held {
		if p.Contains(port) {
			bits.SetBit(bits, int(port-p.Base), 1)
		}
	}
	return bits.Bytes()
}

// withDestroy runs destroy after the store's own.
func withDestroy(store *genericregistry.Store, destroy func()) {
	own := store.DestroyFunc
	store.DestroyFunc = func() {
		if own != nil {
			own()
		}
		destroy()
	}
}

// recordNodePorts gives svc the node ports it needs (allocateNodePorts)
// and records those old did not hold, all in one compare-and-swap of the
// record; it returns the ports it recorded. A dry run reads the record
// and writes nothing.
func (a *allocator) recordNodePorts(ctx context.Context, svc, old *corev1.Service, dryRun bool) ([]int32, error) {
	own := map[int32]bool{}
	if old != nil {
		_, ports := holds(old)
		for _, p := range ports {
			own[p] = true
		}
	}
	if dryRun {
		held, err := a.ports.held(ctx)
		if err != nil {
			return nil, storeerr.InterpretGetError(err, NodePortAllocations, "")
		}
		maps.DeleteFunc(held, func(p int32, _ bool) bool { return own[p] })
		return nil, a.ranges.allocateNodePorts(svc, held, true)
	}
	asked := slices.Clone(svc.Spec.Ports)
	var recorded []int32
	err := a.updatePorts(ctx, func(held map[int32]bool) error {
		svc.Spec.Ports, recorded = slices.Clone(asked), nil
		maps.DeleteFunc(held, func(p int32, _ bool) bool { return own[p] })
		if err := a.ranges.allocateNodePorts(svc, held, false); err != nil {
			return err
		}
		_, ports := holds(svc)
		for _, p := range ports {
			if !own[p] && !slices.Contains(recorded, p) {
				recorded = append(recorded, p)
			}
		}
		maps.Copy(held, own) // released once the update is stored
		return nil
	})
	return recorded, err
}

// updatePorts changes the record by fn (with mu held); an absent record
// is made first by a repair.
func (a *allocator) updatePorts(ctx context.Context, fn func(held map[int32]bool) error) error {
	err := a.ports.update(ctx, false, fn)
	if errors.Is(err, errNoRecord) {
		if err = a.repairLocked(ctx, false); err == nil {
			err = a.ports.update(ctx, false, fn)
		}
	}
	return storeerr.InterpretUpdateError(err, NodePortAllocations, "")
}

// releasePorts removes ports from the record.
func (a *allocator) releasePorts(ctx context.Context, ports []int32) {
	if len(ports) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_ = a.ports.update(ctx, false, func(held map[int32]bool) error {
		for _, p := range ports {
			delete(held, p)
		}
		return nil
	})
}

// leakRounds is how many repairs in a row must find a port recorded but
// held by no Service before it is released, when other servers may
// share the etcd (upstream's numRepairsBeforeLeakCleanup): a port another
// server has just recorded is held by no Service until its write ends.
const leakRounds = 3

// RepairNodePorts makes the record of node ports true to the stored
// Services, as upstream's repair controller: it records the ports
// Services hold that it lacks (and makes it if absent), and releases
// ports no Service holds nor a write of this server's is about to. alone
// says no other server shares the etcd: such a port is released at once,
// else on the leakRounds-th repair in a row that finds it so.
func (s *Storage) RepairNodePorts(ctx context.Context, alone bool) error {
	s.allocator.mu.Lock()
	defer s.allocator.mu.Unlock()
	return s.allocator.repairLocked(ctx, alone)
}

func (a *allocator) repairLocked(ctx context.Context, alone bool) error {
	services, err := a.list(ctx, true)
	if err != nil {
		return err
	}
	inUse := map[int32]bool{}
	for p := range a.pendingPorts {
		inUse[p] = true
	}
	for _, svc := range services {
		_, ports := holds(&svc)
		for _, p := range ports {
			inUse[p] = true
		}
	}
	var leaks map[int32]int
	err = a.ports.update(ctx, true, func(held map[int32]bool) error {
		leaks = map[int32]int{}
		for p := range held {
			if inUse[p] {
				continue
			}
			if n := a.leaks[p] + 1; !alone && n < leakRounds {
				leaks[p] = n
				continue
			}
			delete(held, p)
		}
		for p := range inUse {
			if a.ranges.NodePorts.Contains(p) {
				held[p] = true
			}
		}
		return nil
	})
	if err != nil {
		return storeerr.InterpretUpdateError(err, NodePortAllocations, "")
	}
	a.leaks = leaks
	return nil
}

// givenUp is what an update may give up.
type givenUp struct {
	ports []int32
	ip    string
}

// updating notes, as an update of old to svc is about to be written, the
// node ports and cluster IP it may give up: old's, and those asked for
// and recorded for svc (an earlier attempt of the update, which found the
// Service changed meanwhile, recorded ports the update may not hold in
// the end). updated releases them once the update or a delete is stored.
func (a *allocator) updating(svc, old *corev1.Service, asked []int32) {
	_, had := holds(old)
	_, has := holds(svc)
	has = append(has, asked...)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.releasing == nil {
		a.releasing = map[types.UID]givenUp{}
	}
	r := a.releasing[old.UID]
	r.ports = append(append(r.ports, had...), has...)
	if needsClusterIP(old) && !needsClusterIP(svc) {
		r.ip = old.Spec.ClusterIP
	}
	a.releasing[old.UID] = r
}

// updated releases what updating noted for stored (as stored, or as
// deleted: no cluster IP or node ports) that it does not hold.
func (a *allocator) updated(stored *corev1.Service) {
	a.mu.Lock()
	r := a.releasing[stored.UID]
	delete(a.releasing, stored.UID)
	a.mu.Unlock()
	_, has := holds(stored)
	var gone []int32
	for _, p := range r.ports {
		if !slices.Contains(has, p) && !slices.Contains(gone, p) {
			gone = append(gone, p)
		}
	}
	ctx := context.Background()
	a.releasePorts(ctx, gone)
	if r.ip != "" && stored.Spec.ClusterIP != r.ip {
		a.release(ctx, stored, r.ip)
	}
}

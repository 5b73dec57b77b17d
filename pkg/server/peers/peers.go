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
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	coordinationinformers "k8s.io/client-go/informers/coordination/v1"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	"k8s.io/client-go/tools/cache"
)

// Peers says whether this server has its etcd to itself: always with the
// embedded etcd; with --etcd-servers, while no other server's identity
// lease is live there (as the informer of Watch has them).
type Peers struct {
	embedded bool
	// name is this server's identity lease.
	name   string
	leases atomic.Pointer[coordinationlisters.LeaseLister]
}

// New returns the peers of a server serving at address, whose etcd is
// embedded or not (--etcd-servers).
func New(embedded bool, address string) *Peers {
	return &Peers{embedded: embedded, name: identityLeaseName(address)}
}

// Embedded reports whether the server's etcd is embedded: then it has no
// peers, keeps no identity lease and shares no keys.
func (p *Peers) Embedded() bool { return p.embedded }

// Name is the name of this server's identity lease.
func (p *Peers) Name() string { return p.name }

// Alone reports whether no other API server shares the etcd; false until
// Watch has synced.
func (p *Peers) Alone() bool {
	if p.embedded {
		return true
	}
	lister := p.leases.Load()
	if lister == nil {
		return false
	}
	leases, err := (*lister).List(labels.Everything())
	if err != nil {
		return false
	}
	for _, l := range leases {
		if l.Name != p.name && live(l) {
			return false
		}
	}
	return true
}

// live reports whether l was renewed within its duration.
func live(l *coordinationv1.Lease) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return false
	}
	return time.Since(l.Spec.RenewTime.Time) < time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
}

// Watch watches the identity leases until ctx ends, and returns once its
// informer has synced and holds this server's own lease (false: until
// ended first). running joins the informer.
func (p *Peers) Watch(ctx, until context.Context, client kubernetes.Interface, running *sync.WaitGroup) bool {
	informer := coordinationinformers.NewFilteredLeaseInformer(client, metav1.NamespaceSystem, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = identityLabel + "=" + identityLabelValue })
	running.Go(func() { informer.RunWithContext(ctx) })
	if !cache.WaitForCacheSync(until.Done(), informer.HasSynced) {
		return false
	}
	lister := coordinationlisters.NewLeaseLister(informer.GetIndexer())
	p.leases.Store(&lister)
	// Ready once its own lease is there for the others to see.
	err := wait.PollUntilContextCancel(until, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		_, err := lister.Leases(metav1.NamespaceSystem).Get(p.name)
		return err == nil, nil
	})
	return err == nil
}

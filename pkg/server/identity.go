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

package server

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	coordinationinformers "k8s.io/client-go/informers/coordination/v1"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/utils/clock"

	"github.com/miniapiserver/miniapiserver/pkg/auth"
	"github.com/miniapiserver/miniapiserver/pkg/server/keyring"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// kube-apiserver's identity leases (its APIServerIdentity feature): each
// server keeps a Lease in kube-system, labelled so, renewed every 10s,
// valid for an hour.
const (
	identityLabel         = "apiserver.kubernetes.io/identity"
	identityLabelValue    = "kube-apiserver"
	identityLeaseDuration = time.Hour
	identityRenewInterval = 10 * time.Second
)

// peers says whether this server has its etcd to itself: always with the
// embedded etcd; with --etcd-servers, while no other server's identity
// lease is live there (as the informer of watchPeers has them).
type peers struct {
	embedded bool
	// name is this server's identity lease.
	name   string
	leases atomic.Pointer[coordinationlisters.LeaseLister]
}

// Alone reports whether no other API server shares the etcd; false until
// watchPeers has synced.
func (p *peers) Alone() bool {
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

// identityLeaseName is the name of a server's identity lease: upstream's
// ("apiserver-" and a hash of the host name), hashed with the serving
// address too, so that servers on one host have a lease each.
func identityLeaseName(address string) string {
	hostname, _ := os.Hostname()
	hash := sha256.Sum256([]byte(hostname + "\x00" + address + "\x00kube-apiserver"))
	return "apiserver-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(hash[:16]))
}

// runIdentityLease keeps this server's identity lease, as kube-apiserver
// does, until ctx ends; it waits for the kube-system namespace first. The
// lease is left to expire (kube-apiserver deletes it on a graceful stop:
// here, a request to a server whose etcd may be gone would hold the stop
// and log its failure).
func (p *peers) runIdentityLease(ctx context.Context, client kubernetes.Interface) {
	err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return
	}
	hostname, _ := os.Hostname()
	label := func(l *coordinationv1.Lease) error {
		if l.Labels == nil {
			l.Labels = map[string]string{}
		}
		l.Labels[identityLabel] = identityLabelValue
		l.Labels[corev1.LabelHostname] = hostname
		return nil
	}
	lease.NewController(clock.RealClock{}, client, p.name+"_"+string(uuid.NewUUID()), int32(identityLeaseDuration.Seconds()), nil,
		identityRenewInterval, p.name, metav1.NamespaceSystem, label).Run(ctx)
}

// watchPeers watches the identity leases until ctx ends, and returns
// once its informer has synced and holds this server's own lease (false:
// until ended first).
func (p *peers) watchPeers(ctx, until context.Context, client kubernetes.Interface, running *sync.WaitGroup) bool {
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

// startKeyring shares the service-account public keys of tokens with the
// other servers on backend's etcd (see keyring), under this server's
// identity lease name: tokens any of them signs authenticate on all. The
// returned func withdraws them.
func startKeyring(ctx context.Context, backend *storagebackend.Config, name string, tokens *auth.ServiceAccountTokens) (stop func(), err error) {
	client, err := storage.NewClient(backend.Transport)
	if err != nil {
		return nil, err
	}
	ring, err := keyring.Start(ctx, keyring.Config{Client: client, Name: name, Keys: tokens.OwnKeys(),
		Prefix: path.Join("/miniapiserver.io/serviceaccountkeys", backend.Prefix) + "/"})
	if err != nil {
		client.Close()
		return nil, err
	}
	tokens.PeerKeys = ring.Peers
	return sync.OnceFunc(func() {
		ring.Stop()
		client.Close()
	}), nil
}

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
	"crypto/sha256"
	"encoding/base32"
	"os"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/utils/clock"
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

// identityLeaseName is the name of a server's identity lease: upstream's
// ("apiserver-" and a hash of the host name), hashed with the serving
// address too, so that servers on one host have a lease each.
func identityLeaseName(address string) string {
	hostname, _ := os.Hostname()
	hash := sha256.Sum256([]byte(hostname + "\x00" + address + "\x00kube-apiserver"))
	return "apiserver-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(hash[:16]))
}

// RunIdentityLease keeps this server's identity lease, as kube-apiserver
// does, until ctx ends; it waits for the kube-system namespace first. The
// lease is left to expire (kube-apiserver deletes it on a graceful stop:
// here, a request to a server whose etcd may be gone would hold the stop
// and log its failure).
func (p *Peers) RunIdentityLease(ctx context.Context, client kubernetes.Interface) {
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

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

package durability

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestTwoInstancesAgree: two servers on one etcd, each with its data
// dir's own CA and the default in-server controllers, write nothing
// again and again once both are up but their identity leases' renewals
// (kube-apiserver's too): every object they both keep (kube-root-ca.crt in each namespace,
// the authentication info, the kubernetes Service, the default
// ServiceCIDR, the bootstrap roles) converges instead of flapping.
func TestTwoInstancesAgree(t *testing.T) {
	var endpoints []string
	external := framework.ExternalEtcd(t, 0)
	capture := func(o *server.Options) { external(o); endpoints = o.EtcdServers }
	a := testserver.Start(t, capture, testserver.WithNamespaceDefaults())
	client := kubernetes.NewForConfigOrDie(a.Config)
	ctx := t.Context()
	for _, ns := range []string{"one", "two", "three"} {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testserver.Start(t, capture, testserver.WithNamespaceDefaults())

	etcd, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	// What the second server's start writes is bootstrap: a key its
	// controllers set once more is no fight; one set again and again is.
	watchCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	writes := map[string]int{}
	for resp := range etcd.Watch(watchCtx, "/registry/", clientv3.WithPrefix()) {
		for _, ev := range resp.Events {
			writes[string(ev.Kv.Key)]++
		}
	}
	for _, key := range slices.Sorted(maps.Keys(writes)) {
		if strings.HasPrefix(key, "/registry/leases/kube-system/apiserver-") {
			continue // identity leases, renewed every 10s
		}
		if writes[key] > 1 {
			t.Errorf("%s: written %d times in 30s", key, writes[key])
		} else {
			t.Logf("%s: written once", key)
		}
	}
}

// TestServiceAccountTokensAcrossInstances: two servers on one etcd, each
// with its data dir's own service-account key: a token one signs
// authenticates on the other, until the signer stops (it withdraws its
// key).
func TestServiceAccountTokensAcrossInstances(t *testing.T) {
	external := framework.ExternalEtcd(t, 0)
	a := testserver.Start(t, external)
	b := testserver.Start(t, external)
	ctx := t.Context()
	fromA, err := a.ServiceAccountConfig(ctx, "default", "robot")
	if err != nil {
		t.Fatal(err)
	}
	onB := rest.CopyConfig(fromA)
	onB.Host = b.Config.Host
	onB.TLSClientConfig.CAData = b.Config.TLSClientConfig.CAData
	whoAmI := func() (string, error) {
		review, err := kubernetes.NewForConfigOrDie(onB).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return review.Status.UserInfo.Username, nil
	}
	if user, err := whoAmI(); err != nil || user != "system:serviceaccount:default:robot" {
		t.Fatalf("a's token on b: got %q, %v; want system:serviceaccount:default:robot", user, err)
	}
	stopped := time.Now()
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("a stopped in %s", time.Since(stopped))
	defer func() { t.Logf("a's token refused on b %s after a's stop began", time.Since(stopped)) }()
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := whoAmI()
		return apierrors.IsUnauthorized(err), nil
	})
	if err != nil {
		t.Errorf("a's token on b once a stopped: still authenticates, want 401")
	}
}

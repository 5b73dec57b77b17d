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

package crd

import (
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestDeletingCRDDeletesCustomResources deletes a CRD with custom resources
// in two namespaces: they go from etcd, and the CRD with them.
func TestDeletingCRDDeletesCustomResources(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t, testserver.WithCRDs(crdBases))
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(s.Config)
	for _, ns := range []string{"default", "kube-public"} {
		for i := range 3 {
			if _, err := dyn.Resource(cronTabs).Namespace(ns).Create(ctx, cronTab(fmt.Sprint("ct-", i), 1, 0), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: s.EtcdServers, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	stored := func() int64 {
		t.Helper()
		resp, err := etcd.Get(ctx, "/registry/stable.example.com/crontabs/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Count
	}
	if n := stored(); n != 6 {
		t.Fatalf("%d CronTabs in etcd under /registry/stable.example.com/crontabs/, want 6", n)
	}

	crds := apiextensionsclient.NewForConfigOrDie(s.Config).ApiextensionsV1().CustomResourceDefinitions()
	if err := crds.Delete(ctx, "crontabs.stable.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitUntil(t, func() bool {
		_, err := crds.Get(ctx, "crontabs.stable.example.com", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, "the CRD to be deleted")
	if n := stored(); n != 0 {
		t.Errorf("%d CronTabs left in etcd after their CRD was deleted", n)
	}
	// Discovery follows the CRD's delete event (apiextensions-apiserver's
	// discovery controller), a moment after the CRD itself has gone.
	framework.WaitUntil(t, func() bool {
		_, err := client.Discovery().ServerResourcesForGroupVersion("stable.example.com/v1")
		return apierrors.IsNotFound(err)
	}, "discovery of stable.example.com/v1 to answer 404 after the CRD went")
}

// TestDeletingNamespaceDeletesCustomResources: the namespace controller
// empties custom resources too, and only then is the namespace gone.
func TestDeletingNamespaceDeletesCustomResources(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t, testserver.WithCRDs(crdBases))
	ctx := t.Context()
	crs := dynamic.NewForConfigOrDie(s.Config).Resource(cronTabs)
	if _, err := client.CoreV1().Namespaces().Create(ctx, namespace("team"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := crs.Namespace("team").Create(ctx, cronTab("nightly", 1, 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitUntil(t, func() bool {
		_, err := client.CoreV1().Namespaces().Get(ctx, "team", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, "the namespace to be deleted")
	list, err := crs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("CronTabs left after their namespace was deleted: %v", list.Items)
	}
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

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

package namespacedefaults

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/workqueue"

	"github.com/miniapiserver/miniapiserver/pkg/controller/worker"
)

// Upstream's names (pkg/controller/certificates/rootcacertpublisher).
const (
	RootCAConfigMap       = "kube-root-ca.crt"
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
	DefaultServiceAccount = "default"
)

// Controller keeps each active namespace's defaults: the "default"
// ServiceAccount (as kube-controller-manager's serviceaccount-controller)
// and the kube-root-ca.crt ConfigMap (as its
// root-ca-certificate-publisher-controller), either or both.
type Controller struct {
	client kubernetes.Interface
	// rootCA is published if set; defaultSA says whether to make the
	// default ServiceAccounts.
	rootCA    string
	defaultSA bool
	// alone reports whether no other server shares the etcd.
	alone      func() bool
	namespaces corelisters.NamespaceLister
	sas        corelisters.ServiceAccountLister
	configMaps corelisters.ConfigMapLister
	informers  []cache.SharedIndexInformer // its own, which Run runs
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
}

// New returns a controller that writes through client, publishes rootCA
// (PEM) unless it is empty, and makes default ServiceAccounts if
// defaultSA; alone (nil: always) reports whether no other server shares
// the etcd (see syncRootCA). It watches the default ServiceAccounts and the
// kube-root-ca.crt ConfigMaps only (informers of its own, by name), not
// every ServiceAccount and ConfigMap.
func New(client kubernetes.Interface, rootCA []byte, defaultSA bool, namespaces coreinformers.NamespaceInformer, alone func() bool) *Controller {
	if alone == nil {
		alone = func() bool { return true }
	}
	byName := func(name string) internalinterfaces.TweakListOptionsFunc {
		return func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}
	}
	sas := coreinformers.NewFilteredServiceAccountInformer(client, metav1.NamespaceAll, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, byName(DefaultServiceAccount))
	configMaps := coreinformers.NewFilteredConfigMapInformer(client, metav1.NamespaceAll, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, byName(RootCAConfigMap))
	c := &Controller{
		client: client, rootCA: string(rootCA), defaultSA: defaultSA, alone: alone,
		namespaces: namespaces.Lister(), sas: corelisters.NewServiceAccountLister(sas.GetIndexer()), configMaps: corelisters.NewConfigMapLister(configMaps.GetIndexer()),
		informers: []cache.SharedIndexInformer{sas, configMaps},
		synced:    []cache.InformerSynced{namespaces.Informer().HasSynced, sas.HasSynced, configMaps.HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "namespace-defaults"}),
	}
	_, _ = namespaces.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(obj) },
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	})
	// A default deleted or changed is made again.
	for _, informer := range c.informers {
		_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, obj any) { c.enqueueNamespaceOf(obj) },
			DeleteFunc: func(obj any) { c.enqueueNamespaceOf(obj) },
		})
	}
	return c
}

func (c *Controller) enqueue(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		c.queue.Add(ns.Name)
	}
}

func (c *Controller) enqueueNamespaceOf(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	switch o := obj.(type) {
	case *corev1.ServiceAccount:
		if o.Name == DefaultServiceAccount {
			c.queue.Add(o.Namespace)
		}
	case *corev1.ConfigMap:
		if o.Name == RootCAConfigMap {
			c.queue.Add(o.Namespace)
		}
	}
}

// Run keeps the defaults until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	var informers sync.WaitGroup
	defer informers.Wait()
	for _, informer := range c.informers {
		informers.Go(func() { informer.RunWithContext(ctx) })
	}
	worker.Run(ctx, c.queue, c.synced, c.sync, "Namespace defaults not written yet", "namespace")
}

// sync writes what is missing from namespace ns, if it is active.
func (c *Controller) sync(ctx context.Context, ns string) error {
	namespace, err := c.namespaces.Get(ns)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || namespace.Status.Phase != corev1.NamespaceActive {
		return err
	}
	return errors.Join(c.syncServiceAccount(ctx, ns), c.syncRootCA(ctx, ns))
}

func (c *Controller) syncServiceAccount(ctx context.Context, ns string) error {
	if !c.defaultSA {
		return nil
	}
	if _, err := c.sas.ServiceAccounts(ns).Get(DefaultServiceAccount); !apierrors.IsNotFound(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceAccount}}
	_, err := c.client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{})
	return ignorable(err)
}

// syncRootCA publishes rootCA in ns's kube-root-ca.crt, as upstream's
// publisher. But servers on one etcd may each have a CA of their own:
// while not alone, one that finds its CA in the bundle there leaves it,
// and one that does not adds its CA to the certificates still valid
// there, so that the servers agree on the bundle of all their CAs
// instead of writing theirs over each other's.
func (c *Controller) syncRootCA(ctx context.Context, ns string) error {
	if c.rootCA == "" {
		return nil
	}
	cm, err := c.configMaps.ConfigMaps(ns).Get(RootCAConfigMap)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: RootCAConfigMap, Annotations: map[string]string{DescriptionAnnotation: Description}},
			Data: map[string]string{"ca.crt": c.rootCA}}
		_, err = c.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return ignorable(err)
	case err != nil:
		return err
	}
	data := map[string]string{"ca.crt": c.rootCA}
	if !c.alone() {
		data["ca.crt"] = withCA(cm.Data["ca.crt"], c.rootCA, time.Now())
	}
	if maps.Equal(cm.Data, data) && len(cm.BinaryData) == 0 && cm.Annotations[DescriptionAnnotation] != "" {
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data, cm.BinaryData = data, nil
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[DescriptionAnnotation] = Description
	_, err = c.client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	return ignorable(err)
}

// withCA returns bundle if it holds every certificate of ca; else the
// certificates of bundle not expired at now, then ca's. A bundle that is
// not PEM certificates is replaced by ca.
func withCA(bundle, ca string, now time.Time) string {
	have, err := certutil.ParseCertsPEM([]byte(bundle))
	if err != nil {
		return ca
	}
	mine, err := certutil.ParseCertsPEM([]byte(ca))
	if err != nil {
		return ca
	}
	holds := func(c *x509.Certificate) bool { return slices.ContainsFunc(have, c.Equal) }
	if !slices.ContainsFunc(mine, func(c *x509.Certificate) bool { return !holds(c) }) {
		return bundle
	}
	var out []byte
	for _, c := range have {
		if now.Before(c.NotAfter) && !slices.ContainsFunc(mine, c.Equal) {
			out = append(out, pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: c.Raw})...)
		}
	}
	return string(out) + ca
}

// ignorable drops the errors of a write that raced another (it exists
// already) or a namespace being deleted.
func ignorable(err error) error {
	if apierrors.IsAlreadyExists(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

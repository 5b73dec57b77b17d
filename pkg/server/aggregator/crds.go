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

package aggregator

import (
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions/apiextensions/v1"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// registration is what crdRegistration adds APIServices to and removes
// them from: kube-aggregator's autoregister controller.
type registration interface {
	AddAPIServiceToSync(in *apiregistrationv1.APIService)
	RemoveAPIServiceToSync(name string)
}

// crdRegistration keeps an APIService for each group-version a CRD
// serves, a port of k8s.io/kubernetes' crdregistration controller (which
// k8s.io/kubernetes alone publishes): the autoregister controller makes and
// deletes them.
type crdRegistration struct {
	lister   apiextensionslisters.CustomResourceDefinitionLister
	synced   cache.InformerSynced
	register registration
	// initial closes once the CRDs there were at the start are registered.
	initial chan struct{}
	queue   workqueue.TypedRateLimitingInterface[schema.GroupVersion]
}

func newCRDRegistration(crds apiextensionsinformers.CustomResourceDefinitionInformer, register registration) (*crdRegistration, error) {
	c := &crdRegistration{
		lister: crds.Lister(), synced: crds.Informer().HasSynced, register: register, initial: make(chan struct{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[schema.GroupVersion](),
			workqueue.TypedRateLimitingQueueConfig[schema.GroupVersion]{Name: "crd_autoregistration_controller"}),
	}
	_, err := crds.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		// Both: a version a CRD no longer serves loses its APIService.
		UpdateFunc: func(old, new any) { c.enqueue(old); c.enqueue(new) },
		DeleteFunc: c.enqueue,
	})
	return c, err
}

func (c *crdRegistration) enqueue(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return
	}
	for _, v := range crd.Spec.Versions {
		c.queue.Add(schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name})
	}
}

// Run registers the CRDs there are, closes initial, then follows the
// changes until stop closes.
func (c *crdRegistration) Run(workers int, stop <-chan struct{}) {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(stop, c.synced) {
		return
	}
	crds, err := c.lister.List(labels.Everything())
	utilruntime.HandleError(err)
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			utilruntime.HandleError(c.sync(schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}))
		}
	}
	close(c.initial)
	for range workers {
		go wait.Until(c.work, time.Second, stop)
	}
	<-stop
}

func (c *crdRegistration) work() {
	for {
		gv, quit := c.queue.Get()
		if quit {
			return
		}
		if err := c.sync(gv); err != nil {
			utilruntime.HandleError(err)
			c.queue.AddRateLimited(gv)
		} else {
			c.queue.Forget(gv)
		}
		c.queue.Done(gv)
	}
}

// sync registers gv's APIService while a CRD serves gv, with the
// priorities kube-apiserver gives CRDs, and unregisters it once none does.
func (c *crdRegistration) sync(gv schema.GroupVersion) error {
	name := gv.Version + "." + gv.Group
	crds, err := c.lister.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if crd.Spec.Group != gv.Group {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == gv.Version && v.Served {
				c.register.AddAPIServiceToSync(&apiregistrationv1.APIService{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: apiregistrationv1.APIServiceSpec{Group: gv.Group, Version: gv.Version,
						GroupPriorityMinimum: 1000, VersionPriority: 100},
				})
				return nil
			}
		}
	}
	c.register.RemoveAPIServiceToSync(name)
	return nil
}

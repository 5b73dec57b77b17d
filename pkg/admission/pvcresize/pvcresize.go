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

package pvcresize

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	volumehelpers "k8s.io/component-helpers/storage/volume"
)

// PluginName is the plugin's name, as upstream's.
const PluginName = "PersistentVolumeClaimResize"

// Register registers the plugin in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin checks claims' growth against their StorageClasses.
type Plugin struct {
	*admission.Handler
	lister storagelisters.StorageClassLister
}

var (
	_ admission.ValidationInterface                = (*Plugin)(nil)
	_ admission.InitializationValidator            = (*Plugin)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// New returns the plugin; it needs a lister.
func New() *Plugin { return &Plugin{Handler: admission.NewHandler(admission.Update)} }

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	i := f.Storage().V1().StorageClasses()
	p.lister = i.Lister()
	p.SetReadyFunc(i.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.lister == nil {
		return fmt.Errorf("missing storageclass lister")
	}
	return nil
}

// Validate refuses an update that grows the storage request of a claim
// that is not bound, or whose class does not allow expansion.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("persistentvolumeclaims") || a.GetSubresource() != "" {
		return nil
	}
	pvc, ok := a.GetObject().(*corev1.PersistentVolumeClaim)
	old, oldOK := a.GetOldObject().(*corev1.PersistentVolumeClaim)
	if !ok || !oldOK {
		return nil
	}
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) <= 0 {
		return nil
	}
	if old.Status.Phase != corev1.ClaimBound {
		return admission.NewForbidden(a, fmt.Errorf("Only bound persistent volume claims can be expanded"))
	}
	if !p.allowResize(pvc, old) {
		return admission.NewForbidden(a, fmt.Errorf("only dynamically provisioned pvc can be resized and "+
			"the storageclass that provisions the pvc must support resize"))
	}
	return nil
}

// allowResize is whether the claim keeps its class, and the class allows expansion.
func (p *Plugin) allowResize(pvc, old *corev1.PersistentVolumeClaim) bool {
	class, oldClass := volumehelpers.GetPersistentVolumeClaimClass(pvc), volumehelpers.GetPersistentVolumeClaimClass(old)
	if class == "" || class != oldClass {
		return false
	}
	sc, err := p.lister.Get(class)
	return err == nil && sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
}

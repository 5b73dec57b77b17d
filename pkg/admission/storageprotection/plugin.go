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

// Package storageprotection is kube-apiserver's StorageObjectInUseProtection
// admission plugin: a persistent volume, claim or volume attributes class
// is created with the finalizer that keeps it while something uses it
// (released by kube-controller-manager's protection controllers, or by
// the server's own: pkg/controller/storageprotection).
package storageprotection

import (
	"context"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
)

// PluginName is upstream's name of the plugin.
const PluginName = "StorageObjectInUseProtection"

// The finalizers, as upstream's.
const (
	PVCFinalizer = "kubernetes.io/pvc-protection"
	PVFinalizer  = "kubernetes.io/pv-protection"
	VACFinalizer = "kubernetes.io/vac-protection"
)

// Register registers the plugin in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin adds the protection finalizers on create.
type Plugin struct {
	*admission.Handler
}

var _ admission.MutationInterface = (*Plugin)(nil)

// New returns the plugin.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create)}
}

// finalizers are each protected resource's finalizer.
var finalizers = map[string]string{
	corev1.Resource("persistentvolumes").String():          PVFinalizer,
	corev1.Resource("persistentvolumeclaims").String():     PVCFinalizer,
	storagev1.Resource("volumeattributesclasses").String(): VACFinalizer,
}

// Admit appends the finalizer of the created object's resource, unless
// it has it already.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	finalizer, ok := finalizers[a.GetResource().GroupResource().String()]
	if !ok || a.GetSubresource() != "" {
		return nil
	}
	obj, ok := a.GetObject().(metav1.Object)
	if !ok || slices.Contains(obj.GetFinalizers(), finalizer) {
		return nil
	}
	obj.SetFinalizers(append(obj.GetFinalizers(), finalizer))
	return nil
}

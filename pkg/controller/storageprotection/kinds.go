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

package storageprotection

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/utils/ptr"

	admission "github.com/miniapiserver/miniapiserver/pkg/admission/storageprotection"
)

// The controllers' names, as kube-controller-manager's.
const (
	PVCName = "persistentvolumeclaim-protection-controller"
	PVName  = "persistentvolume-protection-controller"
	VACName = "volumeattributesclass-protection-controller"
)

// NewPVC returns the controller of claims' finalizers: a claim being
// deleted is released once no scheduled pod uses it, pods listed live as
// upstream does, not to release a claim a pod just created uses.
func NewPVC(client kubernetes.Interface, pvcs coreinformers.PersistentVolumeClaimInformer, pods coreinformers.PodInformer) *Controller[*corev1.PersistentVolumeClaim] {
	c := newController[*corev1.PersistentVolumeClaim](PVCName, admission.PVCFinalizer)
	c.get = func(key string) (*corev1.PersistentVolumeClaim, error) {
		ns, name, err := cache.SplitMetaNamespaceKey(key)
		if err != nil {
			return nil, err
		}
		return pvcs.Lister().PersistentVolumeClaims(ns).Get(name)
	}
	c.used = func(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (bool, error) {
		list, err := client.CoreV1().Pods(pvc.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return true, err
		}
		return slices.ContainsFunc(list.Items, func(pod corev1.Pod) bool { return podUses(&pod, pvc) }), nil
	}
	c.update = func(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
		_, err := client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
		return err
	}
	c.watch(pvcs.Informer())
	// A pod that goes (or stops, or never was scheduled) may release its claims.
	c.synced = append(c.synced, pods.Informer().HasSynced)
	enqueueClaims := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		for i, v := range pod.Spec.Volumes {
			switch {
			case v.PersistentVolumeClaim != nil:
				c.queue.Add(pod.Namespace + "/" + v.PersistentVolumeClaim.ClaimName)
			case v.Ephemeral != nil:
				c.queue.Add(pod.Namespace + "/" + ephemeral.VolumeClaimName(pod, &pod.Spec.Volumes[i]))
			}
		}
	}
	_, _ = pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueClaims,
		UpdateFunc: func(_, obj any) { enqueueClaims(obj) },
		DeleteFunc: enqueueClaims,
	})
	return c
}

// podUses is upstream's podUsesPVCForDeletion: only a scheduled pod uses
// a claim (a kubelet starts no pod whose claim is being deleted), and an
// ephemeral volume's claim only while the pod is not shut down.
func podUses(pod *corev1.Pod, pvc *corev1.PersistentVolumeClaim) bool {
	if pod.Spec.NodeName == "" {
		return false
	}
	shutDown := pod.DeletionTimestamp != nil && ptr.Deref(pod.DeletionGracePeriodSeconds, -1) == 0
	for i, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name ||
			!shutDown && v.Ephemeral != nil && ephemeral.VolumeClaimName(pod, &pod.Spec.Volumes[i]) == pvc.Name && ephemeral.VolumeIsForPod(pod, pvc) == nil {
			return true
		}
	}
	return false
}

// NewPV returns the controller of volumes' finalizers: a volume being
// deleted is released once it is not Bound.
func NewPV(client kubernetes.Interface, pvs coreinformers.PersistentVolumeInformer) *Controller[*corev1.PersistentVolume] {
	c := newController[*corev1.PersistentVolume](PVName, admission.PVFinalizer)
	c.get = pvs.Lister().Get
	c.used = func(_ context.Context, pv *corev1.PersistentVolume) (bool, error) {
		return pv.Status.Phase == corev1.VolumeBound, nil
	}
	c.update = func(ctx context.Context, pv *corev1.PersistentVolume) error {
		_, err := client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
		return err
	}
	c.watch(pvs.Informer())
	return c
}

// NewVAC returns the controller of volume attributes classes' finalizers:
// a class being deleted is released once no volume and no claim names it.
func NewVAC(client kubernetes.Interface, vacs storageinformers.VolumeAttributesClassInformer,
	pvs coreinformers.PersistentVolumeInformer, pvcs coreinformers.PersistentVolumeClaimInformer) *Controller[*storagev1.VolumeAttributesClass] {
	c := newController[*storagev1.VolumeAttributesClass](VACName, admission.VACFinalizer)
	c.get = vacs.Lister().Get
	c.used = func(_ context.Context, vac *storagev1.VolumeAttributesClass) (bool, error) {
		volumes, err := pvs.Lister().List(labels.Everything())
		if err != nil {
			return true, err
		}
		claims, err := pvcs.Lister().List(labels.Everything())
		if err != nil {
			return true, err
		}
		return slices.ContainsFunc(volumes, func(pv *corev1.PersistentVolume) bool { return slices.Contains(pvClasses(pv), vac.Name) }) ||
			slices.ContainsFunc(claims, func(pvc *corev1.PersistentVolumeClaim) bool { return slices.Contains(pvcClasses(pvc), vac.Name) }), nil
	}
	c.update = func(ctx context.Context, vac *storagev1.VolumeAttributesClass) error {
		_, err := client.StorageV1().VolumeAttributesClasses().Update(ctx, vac, metav1.UpdateOptions{})
		return err
	}
	c.watch(vacs.Informer())
	// A volume or claim that stops naming a class, or goes, may release it.
	c.synced = append(c.synced, pvs.Informer().HasSynced, pvcs.Informer().HasSynced)
	for _, informer := range []cache.SharedIndexInformer{pvs.Informer(), pvcs.Informer()} {
		_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, _ any) { c.enqueueClasses(old) },
			DeleteFunc: c.enqueueClasses,
		})
	}
	return c
}

// enqueueClasses queues the classes a volume or claim names.
func (c *Controller[T]) enqueueClasses(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	var names []string
	switch o := obj.(type) {
	case *corev1.PersistentVolume:
		names = pvClasses(o)
	case *corev1.PersistentVolumeClaim:
		names = pvcClasses(o)
	}
	for _, n := range names {
		c.queue.Add(n)
	}
}

// pvClasses are the classes a volume names.
func pvClasses(pv *corev1.PersistentVolume) []string {
	return nonEmpty(ptr.Deref(pv.Spec.VolumeAttributesClassName, ""))
}

// pvcClasses are the classes a claim names: wanted, current and target.
func pvcClasses(pvc *corev1.PersistentVolumeClaim) []string {
	var target string
	if s := pvc.Status.ModifyVolumeStatus; s != nil {
		target = s.TargetVolumeAttributesClassName
	}
	return nonEmpty(ptr.Deref(pvc.Spec.VolumeAttributesClassName, ""), ptr.Deref(pvc.Status.CurrentVolumeAttributesClassName, ""), target)
}

func nonEmpty(names ...string) []string {
	return slices.DeleteFunc(names, func(n string) bool { return n == "" })
}

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

package resourcequota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// ExtendedResources is what the ResourceClaim evaluator reads besides
// the claim, as upstream's NewEvaluators gives it with DRAExtendedResource
// on: which device class an extended resource names, the pods, and the
// claims a pod owns.
type ExtendedResources struct {
	classes *deviceClasses
	pods    corev1listers.PodLister
	owned   func(namespace string, pod types.UID) ([]*resourcev1.ResourceClaim, error)
	synced  []cache.InformerSynced
}

// HasSynced reports whether the informers have synced and the device
// classes have reached the evaluator.
func (x *ExtendedResources) HasSynced() bool {
	for _, synced := range x.synced {
		if !synced() {
			return false
		}
	}
	return true
}

// claimOwnerIndex indexes the claims the scheduler made for a pod's
// extended resources by namespace/pod UID, upstream's index.
const claimOwnerIndex = "extendedResourceClaimPodUIDOwner"

// NewExtendedResources makes the DeviceClass, Pod and ResourceClaim
// informers of i; call it before i starts (it adds an index).
func NewExtendedResources(i informers.SharedInformerFactory) (*ExtendedResources, error) {
	classes := newDeviceClasses()
	registration, err := i.Resource().V1().DeviceClasses().Informer().AddEventHandler(classes)
	if err != nil {
		return nil, fmt.Errorf("failed to add device class informer event handler: %w", err)
	}
	claims := i.Resource().V1().ResourceClaims().Informer()
	if err := claims.AddIndexers(cache.Indexers{claimOwnerIndex: claimOwnerIndexFunc}); err != nil {
		if _, ok := claims.GetIndexer().GetIndexers()[claimOwnerIndex]; !ok {
			return nil, fmt.Errorf("failed to add resource claim pod owner indexer: %w", err)
		}
	}
	indexer := claims.GetIndexer()
	owned := func(namespace string, pod types.UID) ([]*resourcev1.ResourceClaim, error) {
		objs, err := indexer.ByIndex(claimOwnerIndex, namespace+"/"+string(pod))
		if err != nil {
			return nil, err
		}
		result := make([]*resourcev1.ResourceClaim, 0, len(objs))
		for _, obj := range objs {
			claim, ok := obj.(*resourcev1.ResourceClaim)
			if !ok {
				return nil, fmt.Errorf("failed to get resource claim from indexer")
			}
			result = append(result, claim)
		}
		return result, nil
	}
	pods := i.Core().V1().Pods()
	return &ExtendedResources{classes: classes, pods: pods.Lister(), owned: owned,
		synced: []cache.InformerSynced{registration.HasSynced, pods.Informer().HasSynced, claims.HasSynced}}, nil
}

// podOwner is the pod that controls claim, if the scheduler made claim
// for that pod's extended resources.
func podOwner(claim *resourcev1.ResourceClaim) *metav1.OwnerReference {
	if claim.Annotations[resourcev1.ExtendedResourceClaimAnnotation] != "true" {
		return nil
	}
	ref := metav1.GetControllerOfNoCopy(claim)
	if ref == nil || ref.Kind != "Pod" || ref.APIVersion != "v1" {
		return nil
	}
	return ref
}

func claimOwnerIndexFunc(obj any) ([]string, error) {
	claim, ok := obj.(*resourcev1.ResourceClaim)
	if !ok {
		return nil, nil
	}
	ref := podOwner(claim)
	if ref == nil {
		return nil, nil
	}
	return []string{claim.Namespace + "/" + string(ref.UID)}, nil
}

func (x *ExtendedResources) extendedResource(className string) string {
	if x == nil {
		return ""
	}
	return x.classes.extendedResource(className)
}

func (x *ExtendedResources) deviceClass(name corev1.ResourceName) *resourcev1.DeviceClass {
	if x == nil {
		return nil
	}
	return x.classes.deviceClass(name)
}

// podUsage is upstream's getVerifiedPodUsage: the quota usage of the pod
// claim was made for, if that pod exists, names claim as its extended
// resource claim (or, naming none, owns no earlier claim), else nil.
func (x *ExtendedResources) podUsage(claim *resourcev1.ResourceClaim, c clock.Clock) corev1.ResourceList {
	ref := podOwner(claim)
	if x == nil || ref == nil || x.pods == nil {
		return nil
	}
	pod, err := x.pods.Pods(claim.Namespace).Get(ref.Name)
	if err != nil || pod.UID != ref.UID {
		return nil
	}
	status := pod.Status.ExtendedResourceClaimStatus
	if status != nil && status.ResourceClaimName != claim.Name {
		return nil
	}
	if status == nil {
		if x.owned == nil {
			return nil
		}
		others, err := x.owned(claim.Namespace, pod.UID)
		if err != nil {
			return nil
		}
		for _, o := range others {
			switch o.CreationTimestamp.Time.Compare(claim.CreationTimestamp.Time) {
			case -1:
				return nil
			case 0:
				if o.Name < claim.Name {
					return nil
				}
			}
		}
	}
	usage, err := (&podEvaluator{clock: c}).Usage(pod)
	if err != nil {
		return nil
	}
	return usage
}

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

package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The status checks of upstream's apps validation (Validate*StatusUpdate):
// the counts are not negative, none exceeds status.replicas, available
// pods are ready ones, and collisionCount never goes down.

var statusPath = field.NewPath("status")

// counted is one count of a status, by field name.
type counted struct {
	name  string
	value int64
}

// counts are a status's counts, in upstream's order.
type counts []counted

func (c counts) nonNegative() field.ErrorList {
	var errs field.ErrorList
	for _, n := range c {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(n.value, statusPath.Child(n.name))...)
	}
	return errs
}

// notAbove: each of c is at most limit.
func (c counts) notAbove(limit int32, msg string) field.ErrorList {
	var errs field.ErrorList
	for _, n := range c {
		if n.value > int64(limit) {
			errs = append(errs, field.Invalid(statusPath.Child(n.name), n.value, msg))
		}
	}
	return errs
}

func count(name string, v int32) counted { return counted{name, int64(v)} }

// optional appends the count of an optional field that is set.
func (c counts) optional(name string, v *int32) counts {
	if v == nil {
		return c
	}
	return append(c, count(name, *v))
}

func notDecremented(collisions, old *int32) field.ErrorList {
	if old == nil || collisions != nil && *collisions >= *old {
		return nil
	}
	value := int32(0)
	if collisions != nil {
		value = *collisions
	}
	return field.ErrorList{field.Invalid(statusPath.Child("collisionCount"), value, "cannot be decremented")}
}

const aboveReplicas = "cannot be greater than status.replicas"

func validateDeploymentStatus(obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*appsv1.Deployment).Status, old.(*appsv1.Deployment).Status
	all := counts{{"observedGeneration", s.ObservedGeneration}, count("replicas", s.Replicas), count("updatedReplicas", s.UpdatedReplicas),
		count("readyReplicas", s.ReadyReplicas), count("availableReplicas", s.AvailableReplicas), count("unavailableReplicas", s.UnavailableReplicas)}
	errs := all.optional("terminatingReplicas", s.TerminatingReplicas).optional("collisionCount", s.CollisionCount).nonNegative()
	errs = append(errs, counts{count("updatedReplicas", s.UpdatedReplicas), count("readyReplicas", s.ReadyReplicas), count("availableReplicas", s.AvailableReplicas)}.notAbove(s.Replicas, aboveReplicas)...)
	errs = append(errs, counts{count("availableReplicas", s.AvailableReplicas)}.notAbove(s.ReadyReplicas, "cannot be greater than readyReplicas")...)
	return append(errs, notDecremented(s.CollisionCount, oldS.CollisionCount)...)
}

func validateReplicaSetStatus(obj, _ runtime.Object) field.ErrorList {
	s := obj.(*appsv1.ReplicaSet).Status
	all := counts{count("replicas", s.Replicas), count("fullyLabeledReplicas", s.FullyLabeledReplicas), count("readyReplicas", s.ReadyReplicas),
		count("availableReplicas", s.AvailableReplicas), {"observedGeneration", s.ObservedGeneration}}
	errs := all.optional("terminatingReplicas", s.TerminatingReplicas).nonNegative()
	errs = append(errs, counts{count("fullyLabeledReplicas", s.FullyLabeledReplicas), count("readyReplicas", s.ReadyReplicas), count("availableReplicas", s.AvailableReplicas)}.notAbove(s.Replicas, aboveReplicas)...)
	return append(errs, counts{count("availableReplicas", s.AvailableReplicas)}.notAbove(s.ReadyReplicas, "cannot be greater than readyReplicas")...)
}

func validateStatefulSetStatus(obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*appsv1.StatefulSet).Status, old.(*appsv1.StatefulSet).Status
	all := counts{count("replicas", s.Replicas), count("readyReplicas", s.ReadyReplicas), count("currentReplicas", s.CurrentReplicas),
		count("updatedReplicas", s.UpdatedReplicas), count("availableReplicas", s.AvailableReplicas), {"observedGeneration", s.ObservedGeneration}}
	errs := all.optional("collisionCount", s.CollisionCount).nonNegative()
	errs = append(errs, counts{count("readyReplicas", s.ReadyReplicas), count("currentReplicas", s.CurrentReplicas), count("updatedReplicas", s.UpdatedReplicas), count("availableReplicas", s.AvailableReplicas)}.notAbove(s.Replicas, aboveReplicas)...)
	errs = append(errs, counts{count("availableReplicas", s.AvailableReplicas)}.notAbove(s.ReadyReplicas, "cannot be greater than status.readyReplicas")...)
	return append(errs, notDecremented(s.CollisionCount, oldS.CollisionCount)...)
}

func validateDaemonSetStatus(obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*appsv1.DaemonSet).Status, old.(*appsv1.DaemonSet).Status
	all := counts{count("currentNumberScheduled", s.CurrentNumberScheduled), count("numberMisscheduled", s.NumberMisscheduled),
		count("desiredNumberScheduled", s.DesiredNumberScheduled), count("numberReady", s.NumberReady), {"observedGeneration", s.ObservedGeneration},
		count("updatedNumberScheduled", s.UpdatedNumberScheduled), count("numberAvailable", s.NumberAvailable), count("numberUnavailable", s.NumberUnavailable)}
	errs := all.optional("collisionCount", s.CollisionCount).nonNegative()
	return append(errs, notDecremented(s.CollisionCount, oldS.CollisionCount)...)
}

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

package node

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	netutils "k8s.io/utils/net"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/resourcequota"
)

// Storage is the storage of nodes and nodes/status.
type Storage struct {
	Nodes  *registry.REST
	Status *registry.StatusREST
}

// Map is the storage by resource, as installed.
func (s *Storage) Map() map[string]rest.Storage {
	return map[string]rest.Storage{"nodes": s.Nodes, "nodes/status": s.Status}
}

// NewStorage returns New's storage by resource.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	return registry.StorageMap(New(optsGetter))
}

// New returns the storage of nodes and nodes/status.
func New(optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	base := registry.NewStrategy(false)
	base.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*corev1.Node)) }
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return append(validate(obj.(*corev1.Node)), validateUpdate(obj.(*corev1.Node), old.(*corev1.Node))...)
	}
	base.Warnings = func(obj, _ runtime.Object) []string {
		n := obj.(*corev1.Node)
		var warnings []string
		if n.Spec.ConfigSource != nil {
			warnings = append(warnings, "spec.configSource: the feature is removed")
		}
		if n.Spec.DoNotUseExternalID != "" {
			warnings = append(warnings, "spec.externalID: this field is deprecated, and is unused by Kubernetes")
		}
		for i, cidr := range n.Spec.PodCIDRs {
			warnings = append(warnings, validation.GetWarningsForCIDR(field.NewPath("spec", "podCIDRs").Index(i), cidr)...)
		}
		return warnings
	}
	main, status := registry.SpecAndStatus{GroupVersion: "v1"}.Strategies(base)
	// Kubelets register their node with its status filled in, and upstream's
	// PrepareForCreate keeps it: a create must not clear the status.
	// As upstream's dropDisabledFields, the removed dynamic kubelet
	// config is dropped: from a new node, and from one that had none.
	main.OnCreate = func(obj runtime.Object) {
		n := obj.(*corev1.Node)
		n.Spec.ConfigSource, n.Status.Config = nil, nil
		syncPodCIDRs(&n.Spec)
		addNotReadyTaint(n)
	}
	keepStatus := main.OnUpdate
	main.OnUpdate = func(obj, old runtime.Object) {
		keepStatus(obj, old)
		n := obj.(*corev1.Node)
		if old.(*corev1.Node).Spec.ConfigSource == nil {
			n.Spec.ConfigSource = nil
		}
		syncPodCIDRs(&n.Spec)
	}
	// Upstream validates status updates with ValidateNodeUpdate alone.
	status.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateUpdate(obj.(*corev1.Node), old.(*corev1.Node))
	}

	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("nodes"),
		Singular:   "node",
		ShortNames: []string{"no"},
		New:        func() runtime.Object { return &corev1.Node{} },
		NewList:    func() runtime.Object { return &corev1.NodeList{} },
		Strategy:   main,
		Fields:     func(obj runtime.Object) fields.Set { return api.NodeFields(obj.(*corev1.Node)) },
		Table:      table,
	})
	if err != nil {
		return nil, err
	}
	return &Storage{Nodes: store, Status: registry.NewStatusREST(store, status)}, nil
}

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		registry.AgeColumn,
		{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
	},
	Cells: func(obj runtime.Object) []any {
		n := obj.(*corev1.Node)
		status := "Unknown"
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				status = "NotReady"
				if c.Status == corev1.ConditionTrue {
					status = "Ready"
				}
			}
		}
		if n.Spec.Unschedulable {
			status += ",SchedulingDisabled"
		}
		roles := strings.Join(roles(n.Labels), ",")
		if roles == "" {
			roles = "<none>"
		}
		info := n.Status.NodeInfo
		return []any{n.Name, status, roles, registry.Age(n.CreationTimestamp), info.KubeletVersion,
			address(n, corev1.NodeInternalIP), address(n, corev1.NodeExternalIP),
			orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion)}
	},
}

const (
	// roleLabelPrefix labels a node with a role: node-role.kubernetes.io/<role>.
	roleLabelPrefix = "node-role.kubernetes.io/"
	// roleLabel is the older form: kubernetes.io/role=<role>.
	roleLabel = "kubernetes.io/role"
)

// roles returns the node's roles, sorted, as kubectl finds them.
func roles(labels map[string]string) []string {
	out := sets.New[string]()
	for k, v := range labels {
		switch {
		case strings.HasPrefix(k, roleLabelPrefix):
			if role := strings.TrimPrefix(k, roleLabelPrefix); role != "" {
				out.Insert(role)
			}
		case k == roleLabel && v != "":
			out.Insert(v)
		}
	}
	return sets.List(out)
}

// address returns the node's first address of type t, or "<none>".
func address(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// taintsPath is where upstream reports taint errors: under metadata, not spec.
var taintsPath = field.NewPath("metadata", "taints")

// validate is upstream's ValidateNode but for the metadata: the node's
// annotations, the taints, the status's resources, swap and declared
// features, and podCIDRs.
func validate(n *corev1.Node) field.ErrorList {
	errs := validateAnnotations(n.Annotations)
	errs = append(errs, validateTaints(n.Spec.Taints, taintsPath)...)
	errs = append(errs, validateResources(n)...)
	if swap := n.Status.NodeInfo.Swap; swap != nil && swap.Capacity != nil && *swap.Capacity <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "nodeSwapStatus", "capacity"), *swap.Capacity, "must be greater than zero"))
	}
	errs = append(errs, validateDeclaredFeatures(n.Status.DeclaredFeatures)...)
	if len(n.Spec.PodCIDRs) == 0 {
		return errs
	}
	p := field.NewPath("spec", "podCIDRs")
	for i, cidr := range n.Spec.PodCIDRs {
		errs = append(errs, validation.IsValidCIDRForLegacyField(p.Index(i), cidr, true, nil)...) // StrictIPCIDRValidation, on in 1.37
	}
	if len(n.Spec.PodCIDRs) > 1 {
		dual, err := netutils.IsDualStackCIDRStrings(n.Spec.PodCIDRs)
		if err != nil {
			errs = append(errs, field.InternalError(p, fmt.Errorf("invalid PodCIDRs. failed to check with dual stack with error:%v", err)))
		}
		if !dual || len(n.Spec.PodCIDRs) > 2 {
			errs = append(errs, field.Invalid(p, n.Spec.PodCIDRs, "may specify no more than one CIDR for each IP family"))
		}
	}
	return errs
}

// validateResources is upstream's ValidateNodeResources: capacity and
// allocatable not negative, whole where counted in units (upstream's
// order is a map's; ours sorts the names).
func validateResources(n *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name      string
		resources corev1.ResourceList
	}{{"capacity", n.Status.Capacity}, {"allocatable", n.Status.Allocatable}} {
		for _, name := range slices.Sorted(maps.Keys(list.resources)) {
			errs = append(errs, resourcequota.ValidateQuantity(name, list.resources[name], field.NewPath("status", list.name, string(name)))...)
		}
	}
	return errs
}

var supportedTaintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

func validateTaints(taints []corev1.Taint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[corev1.TaintEffect]sets.Set[string]{}
	for i, taint := range taints {
		p := path.Index(i)
		errs = append(errs, metav1validation.ValidateLabelName(taint.Key, p.Child("key"))...)
		if msgs := validation.IsValidLabelValue(taint.Value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("value"), taint.Value, strings.Join(msgs, ";")))
		}
		switch {
		case taint.Effect == "":
			errs = append(errs, field.Required(p.Child("effect"), ""))
		case !slices.Contains(supportedTaintEffects, taint.Effect):
			errs = append(errs, field.NotSupported(p.Child("effect"), taint.Effect, supportedTaintEffects))
		}
		if seen[taint.Effect].Has(taint.Key) {
			dup := field.Duplicate(p, registry.Internal(taint))
			dup.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, dup)
			continue
		}
		if seen[taint.Effect] == nil {
			seen[taint.Effect] = sets.New[string]()
		}
		seen[taint.Effect].Insert(taint.Key)
	}
	return errs
}

// notReady is the taint a node is created with, until the node lifecycle
// controller (kube-controller-manager's, which neither kube-apiserver nor
// this server runs) sees it ready.
var notReady = corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}

// addNotReadyTaint is kube-apiserver's TaintNodesByCondition admission
// plugin: a node is created with the not-ready taint.
func addNotReadyTaint(n *corev1.Node) {
	for _, t := range n.Spec.Taints {
		if t.MatchTaint(&notReady) {
			return
		}
	}
	n.Spec.Taints = append(n.Spec.Taints, notReady)
}

// syncPodCIDRs keeps podCIDR and podCIDRs in step, as upstream's
// conversions through its internal type, which has podCIDRs only, do: a
// podCIDR that differs from podCIDRs[0] replaces them, and podCIDR is
// podCIDRs[0].
func syncPodCIDRs(spec *corev1.NodeSpec) {
	switch {
	case spec.PodCIDR != "" && (len(spec.PodCIDRs) == 0 || spec.PodCIDRs[0] != spec.PodCIDR):
		spec.PodCIDRs = []string{spec.PodCIDR}
	case spec.PodCIDR == "" && len(spec.PodCIDRs) > 0:
		spec.PodCIDR = spec.PodCIDRs[0]
	}
}

// validateUpdate is upstream's ValidateNodeUpdate but for the metadata,
// config source: the node's annotations, the status's resources,
// declared features and addresses, podCIDRs and providerID set only once (it
// does not check the format of podCIDRs: ValidateNode, run before it on
// an update of the node, does), the taints and externalID.
func validateUpdate(n, old *corev1.Node) field.ErrorList {
	errs := append(validateAnnotations(n.Annotations), validateResources(n)...)
	errs = append(errs, validateDeclaredFeatures(n.Status.DeclaredFeatures)...)
	errs = append(errs, validateAddresses(n)...)
	oldSpec := old.Spec // a node stored before podCIDRs were kept in step
	syncPodCIDRs(&oldSpec)
	// As upstream: one error for a changed length, else one per changed CIDR.
	const cidrMsg = `node updates may not change podCIDR except from "" to valid`
	switch {
	case len(oldSpec.PodCIDRs) == 0:
	case len(n.Spec.PodCIDRs) != len(oldSpec.PodCIDRs):
		errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDRs"), cidrMsg))
	default:
		for i, cidr := range oldSpec.PodCIDRs {
			if n.Spec.PodCIDRs[i] != cidr {
				errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDRs"), cidrMsg))
			}
		}
	}
	switch providerID := field.NewPath("spec", "providerID"); {
	case old.Spec.ProviderID != "" && n.Spec.ProviderID == "":
		errs = append(errs, field.Invalid(providerID, nil, "field cannot be cleared once set"))
	case old.Spec.ProviderID != "" && n.Spec.ProviderID != old.Spec.ProviderID:
		errs = append(errs, field.Invalid(providerID, nil, "field cannot be modified once set"))
	}
	errs = append(errs, validateTaints(n.Spec.Taints, taintsPath)...)
	if n.Spec.DoNotUseExternalID != old.Spec.DoNotUseExternalID {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "externalID"), "may not be updated"))
	}
	return errs
}

// validateAddresses forbids duplicate status.addresses.
func validateAddresses(n *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[corev1.NodeAddress]()
	for i, a := range n.Status.Addresses {
		if seen.Has(a) {
			errs = append(errs, field.Duplicate(field.NewPath("status", "addresses").Index(i), a))
		}
		seen.Insert(a)
	}
	return errs
}

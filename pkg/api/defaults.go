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

package api

import (
	"slices"

	"github.com/distribution/reference"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// addDefaultingFuncs registers the subset of upstream's core/v1 defaults
// (k8s.io/kubernetes pkg/apis/core/v1/defaults.go) that the served types need.
func addDefaultingFuncs(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&corev1.Namespace{}, func(obj any) { defaultNamespace(obj.(*corev1.Namespace)) })
	s.AddTypeDefaultingFunc(&corev1.Secret{}, func(obj any) {
		if sec := obj.(*corev1.Secret); sec.Type == "" {
			sec.Type = corev1.SecretTypeOpaque
		}
	})
	s.AddTypeDefaultingFunc(&corev1.Pod{}, func(obj any) { defaultPod(obj.(*corev1.Pod)) })
	s.AddTypeDefaultingFunc(&corev1.PodTemplate{}, func(obj any) { DefaultPodSpec(&obj.(*corev1.PodTemplate).Template.Spec) })
	if err := addWorkloadDefaults(s); err != nil {
		return err
	}
	addBuiltinDefaults(s)
	addAdmissionRegistrationDefaults(s)
	addAutoscalingDefaults(s)
	addResourceDefaults(s)
	addFlowcontrolDefaults(s)
	// Lists default their items, as upstream's generated defaulters do.
	for _, list := range slices.Concat(defaultedLists, builtinDefaultedLists, admissionRegistrationDefaultedLists, autoscalingDefaultedLists, resourceDefaultedLists, flowcontrolDefaultedLists) {
		s.AddTypeDefaultingFunc(list, func(obj any) {
			_ = meta.EachListItem(obj.(runtime.Object), func(item runtime.Object) error {
				s.Default(item)
				return nil
			})
		})
	}
	return nil
}

var defaultedLists = []runtime.Object{
	&corev1.PodList{}, &corev1.PodTemplateList{}, &corev1.SecretList{}, &corev1.NamespaceList{},
	&corev1.ServiceList{}, &corev1.EndpointsList{}, &corev1.PersistentVolumeClaimList{}, &corev1.PersistentVolumeList{}, &corev1.NodeList{},
	&appsv1.DeploymentList{}, &appsv1.StatefulSetList{}, &appsv1.DaemonSetList{}, &appsv1.ReplicaSetList{},
	&batchv1.JobList{}, &batchv1.CronJobList{}, &discoveryv1.EndpointSliceList{},
	&rbacv1.RoleBindingList{}, &rbacv1.ClusterRoleBindingList{},
}

func defaultNamespace(ns *corev1.Namespace) {
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
	if ns.Name != "" {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
}

// defaultPod applies upstream's pod defaults: the spec's, then those only
// a Pod gets, never a template (SetDefaults_Pod): a negative grace period
// made 1, service links, requests copied from limits, and host ports on
// the host's network; and status.podIP and podIPs kept in step
// (SetDefaults_PodStatus: podIP wins where they differ).
func defaultPod(p *corev1.Pod) {
	DefaultPodSpec(&p.Spec)
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	}
	switch st := &p.Status; {
	case st.PodIP != "" && (len(st.PodIPs) == 0 || st.PodIPs[0].IP != st.PodIP):
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	case st.PodIP == "" && len(st.PodIPs) > 0:
		st.PodIP = st.PodIPs[0].IP
	}
	if p.Spec.EnableServiceLinks == nil {
		p.Spec.EnableServiceLinks = ptr.To(corev1.DefaultEnableServiceLinks)
	}
	if p.Spec.HostNetwork { // a port on the host's network is the host's port
		for _, containers := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
			for i := range containers {
				for j := range containers[i].Ports {
					if port := &containers[i].Ports[j]; port.HostPort == 0 {
						port.HostPort = port.ContainerPort
					}
				}
			}
		}
	}
	for _, containers := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range containers {
			c := &containers[i]
			if c.Resources.Limits != nil && c.Resources.Requests == nil {
				c.Resources.Requests = corev1.ResourceList{}
			}
			for name, limit := range c.Resources.Limits {
				if _, ok := c.Resources.Requests[name]; !ok {
					c.Resources.Requests[name] = limit.DeepCopy()
				}
			}
		}
	}
}

// DefaultPodSpec applies upstream's defaults of a pod spec, in a Pod or a template.
func DefaultPodSpec(spec *corev1.PodSpec) {
	// serviceAccount is an alias of serviceAccountName, which wins.
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount //nolint:staticcheck // kept in step, as upstream does
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName //nolint:staticcheck // kept in step, as upstream does
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr.To[int64](corev1.DefaultTerminationGracePeriodSeconds)
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i].VolumeSource)
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		defaultContainer((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
}

func defaultContainer(c *corev1.Container) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil {
			defaultProbe(p)
		}
	}
	if l := c.Lifecycle; l != nil {
		for _, h := range []*corev1.LifecycleHandler{l.PostStart, l.PreStop} {
			if h != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
	for i := range c.Env {
		if from := c.Env[i].ValueFrom; from != nil {
			defaultFieldRef(from.FieldRef)
			if from.FileKeyRef != nil && from.FileKeyRef.Optional == nil {
				from.FileKeyRef.Optional = ptr.To(false)
			}
		}
	}
}

// defaultProbe applies upstream's SetDefaults_Probe and its actions' defaults.
func defaultProbe(p *corev1.Probe) {
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptr.To("")
	}
}

func defaultHTTPGet(a *corev1.HTTPGetAction) {
	if a == nil {
		return
	}
	if a.Path == "" {
		a.Path = "/"
	}
	if a.Scheme == "" {
		a.Scheme = corev1.URISchemeHTTP
	}
}

func defaultFieldRef(f *corev1.ObjectFieldSelector) {
	if f != nil && f.APIVersion == "" {
		f.APIVersion = "v1"
	}
}

// defaultVolume applies upstream's volume source defaults: an emptyDir
// when none is given, file modes 0644, downward API fields of v1, one-hour
// service account tokens, claims of file systems, an image's pull policy
// as a container's, and the in-tree sources' declared defaults.
func defaultVolume(v *corev1.VolumeSource) {
	if ptr.AllPtrFieldsNil(v) {
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if v.Image != nil && v.Image.PullPolicy == "" {
		v.Image.PullPolicy = defaultPullPolicy(v.Image.Reference)
	}
	if v.ISCSI != nil {
		setIfEmpty(&v.ISCSI.ISCSIInterface, "default")
	}
	if v.RBD != nil {
		defaultRBD(&v.RBD.RBDPool, &v.RBD.RadosUser, &v.RBD.Keyring)
	}
	defaultAzureDisk(v.AzureDisk)
	if v.ScaleIO != nil {
		defaultScaleIO(&v.ScaleIO.StorageMode, &v.ScaleIO.FSType)
	}
	if v.DownwardAPI != nil {
		defaultDownwardAPI(v.DownwardAPI.Items)
	}
	if v.Projected != nil {
		for _, src := range v.Projected.Sources {
			if src.DownwardAPI != nil {
				defaultDownwardAPI(src.DownwardAPI.Items)
			}
			if t := src.ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				t.ExpirationSeconds = ptr.To[int64](3600)
			}
		}
	}
	if e := v.Ephemeral; e != nil && e.VolumeClaimTemplate != nil && e.VolumeClaimTemplate.Spec.VolumeMode == nil {
		e.VolumeClaimTemplate.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	mode := ptr.To(corev1.ConfigMapVolumeSourceDefaultMode)
	switch {
	case v.ConfigMap != nil && v.ConfigMap.DefaultMode == nil:
		v.ConfigMap.DefaultMode = mode
	case v.Secret != nil && v.Secret.DefaultMode == nil:
		v.Secret.DefaultMode = mode
	case v.Projected != nil && v.Projected.DefaultMode == nil:
		v.Projected.DefaultMode = mode
	case v.DownwardAPI != nil && v.DownwardAPI.DefaultMode == nil:
		v.DownwardAPI.DefaultMode = mode
	case v.HostPath != nil && v.HostPath.Type == nil:
		v.HostPath.Type = ptr.To(corev1.HostPathUnset)
	}
}

// defaultPersistentVolumeSource applies the in-tree sources' declared
// defaults (upstream's +default markers) to a persistent volume's source.
func defaultPersistentVolumeSource(v *corev1.PersistentVolumeSource) {
	if v.ISCSI != nil {
		setIfEmpty(&v.ISCSI.ISCSIInterface, "default")
	}
	if v.RBD != nil {
		defaultRBD(&v.RBD.RBDPool, &v.RBD.RadosUser, &v.RBD.Keyring)
	}
	defaultAzureDisk(v.AzureDisk)
	if v.ScaleIO != nil {
		defaultScaleIO(&v.ScaleIO.StorageMode, &v.ScaleIO.FSType)
	}
}

func defaultRBD(pool, user, keyring *string) {
	setIfEmpty(pool, "rbd")
	setIfEmpty(user, "admin")
	setIfEmpty(keyring, "/etc/ceph/keyring")
}

func defaultAzureDisk(d *corev1.AzureDiskVolumeSource) {
	if d == nil {
		return
	}
	if d.CachingMode == nil {
		d.CachingMode = ptr.To(corev1.AzureDataDiskCachingReadWrite)
	}
	if d.FSType == nil {
		d.FSType = ptr.To("ext4")
	}
	if d.ReadOnly == nil {
		d.ReadOnly = ptr.To(false)
	}
	if d.Kind == nil {
		d.Kind = ptr.To(corev1.AzureSharedBlobDisk)
	}
}

func defaultScaleIO(mode, fsType *string) {
	setIfEmpty(mode, "ThinProvisioned")
	setIfEmpty(fsType, "xfs")
}

func setIfEmpty(s *string, value string) {
	if *s == "" {
		*s = value
	}
}

func defaultDownwardAPI(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		defaultFieldRef(items[i].FieldRef)
	}
}

// defaultPullPolicy is upstream's (SetDefaults_Container): Always for an
// image tagged latest, or not tagged and not pinned to a digest;
// IfNotPresent for others, and for a reference that does not parse.
func defaultPullPolicy(image string) corev1.PullPolicy {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return corev1.PullIfNotPresent
	}
	tagged, isTagged := named.(reference.Tagged)
	_, isDigested := named.(reference.Digested)
	if isTagged && tagged.Tag() == "latest" || !isTagged && !isDigested {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

package api

import (
	"strings"

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
	s.AddTypeDefaultingFunc(&corev1.Pod{}, func(obj any) { DefaultPodSpec(&obj.(*corev1.Pod).Spec) })
	s.AddTypeDefaultingFunc(&corev1.PodTemplate{}, func(obj any) { DefaultPodSpec(&obj.(*corev1.PodTemplate).Template.Spec) })
	if err := addWorkloadDefaults(s); err != nil {
		return err
	}
	// Lists default their items, as upstream's generated defaulters do.
	for _, list := range defaultedLists {
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

// DefaultPodSpec applies upstream's pod spec defaults.
func DefaultPodSpec(spec *corev1.PodSpec) {
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
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptr.To(corev1.DefaultEnableServiceLinks)
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
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
		c.ImagePullPolicy = corev1.PullIfNotPresent
		if tag := imageTag(c.Image); tag == "" || tag == "latest" {
			c.ImagePullPolicy = corev1.PullAlways
		}
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	if len(c.Resources.Limits) > 0 && c.Resources.Requests == nil {
		c.Resources.Requests = c.Resources.Limits.DeepCopy()
	}
}

// imageTag returns the tag of an image reference, "" when it has none (digests count as tags).
func imageTag(image string) string {
	if i := strings.LastIndex(image, "@"); i >= 0 {
		return image[i+1:]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[i+1:]
	}
	return ""
}

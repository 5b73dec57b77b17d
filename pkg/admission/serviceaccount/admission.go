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

package serviceaccount

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/ptr"
)

const (
	// PluginName is the plugin's name, as upstream's.
	PluginName = "ServiceAccount"
	// DefaultServiceAccountName is the account of a Pod that names none.
	DefaultServiceAccountName = "default"
	// EnforceMountableSecretsAnnotation, "true" on a ServiceAccount,
	// limits its Pods to the secrets it lists.
	EnforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"
	// VolumeNamePrefix begins the name of the volume the token is in.
	VolumeNamePrefix = "kube-api-access-"
	// MountPath is where every container finds the token, CA and namespace.
	MountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// tokenExpirationSeconds is the projected token's lifetime, as
	// upstream's (its WarnOnlyBoundTokenExpirationSeconds).
	tokenExpirationSeconds = 3607
)

// Register registers the plugin in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// Plugin is the ServiceAccount admission plugin. It mutates and validates
// Pod creates only.
type Plugin struct {
	*admission.Handler
	client   kubernetes.Interface
	accounts corev1listers.ServiceAccountLister
	// generateName names the token volume.
	generateName func(string) string
	// retryInterval is how long to wait between lookups of a missing
	// "default" account, which a controller may be about to make.
	retryInterval func() time.Duration
}

var (
	_ admission.MutationInterface                  = (*Plugin)(nil)
	_ admission.ValidationInterface                = (*Plugin)(nil)
	_ initializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
	_ admission.InitializationValidator            = (*Plugin)(nil)
)

// New returns the plugin; it needs a client and an informer factory.
func New() *Plugin {
	return &Plugin{
		Handler:       admission.NewHandler(admission.Create),
		generateName:  names.SimpleNameGenerator.GenerateName,
		retryInterval: func() time.Duration { return time.Duration(100+rand.IntN(100)) * time.Millisecond },
	}
}

// SetExternalKubeClientSet implements initializer.WantsExternalKubeClientSet.
func (p *Plugin) SetExternalKubeClientSet(c kubernetes.Interface) { p.client = c }

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	i := f.Core().V1().ServiceAccounts()
	p.accounts = i.Lister()
	p.SetReadyFunc(i.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.client == nil || p.accounts == nil {
		return fmt.Errorf("%s admission needs a client and an informer factory", PluginName)
	}
	return nil
}

// Admit sets a created Pod's service account, token volume and image pull
// secrets, then validates it.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return p.Validate(ctx, a, o)
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultServiceAccountName
		pod.Spec.DeprecatedServiceAccount = DefaultServiceAccountName //nolint:staticcheck // kept in step, as upstream does
	}
	sa, err := p.serviceAccount(ctx, a.GetNamespace(), pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.GetNamespace(), pod.Spec.ServiceAccountName, err))
	}
	if automount(sa, pod) {
		p.mountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = make([]corev1.LocalObjectReference, len(sa.ImagePullSecrets))
		for i, s := range sa.ImagePullSecrets {
			pod.Spec.ImagePullSecrets[i].Name = s.Name
		}
	}
	return p.Validate(ctx, a, o)
}

// Validate refuses a created Pod whose service account does not exist, a
// mirror Pod that refers to an account or secrets, and a Pod that refers
// to secrets its account does not list when the account says so.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		if pod.Spec.ServiceAccountName != "" {
			return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference service accounts"))
		}
		if len(secretNames(pod)) > 0 {
			return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference secrets"))
		}
		for _, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for _, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not use ServiceAccountToken volume projections"))
				}
			}
		}
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		return admission.NewForbidden(a, fmt.Errorf("no service account specified for pod %s/%s", a.GetNamespace(), pod.Name))
	}
	sa, err := p.serviceAccount(ctx, a.GetNamespace(), pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %v", a.GetNamespace(), pod.Spec.ServiceAccountName, err))
	}
	if enforce, _ := strconv.ParseBool(sa.Annotations[EnforceMountableSecretsAnnotation]); enforce {
		if err := limitSecretReferences(sa, pod); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

// podOf returns the Pod a creates, if it creates one (not a subresource).
func podOf(a admission.Attributes) (*corev1.Pod, bool) {
	if a.GetOperation() != admission.Create || a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "" {
		return nil, false
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	return pod, ok
}

// serviceAccount returns the account from the informer or, if it is not
// there yet, from the server: once, or for "default" up to 10 times, as
// upstream does, a controller being about to make it.
func (p *Plugin) serviceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	sa, err := p.accounts.ServiceAccounts(namespace).Get(name)
	if !apierrors.IsNotFound(err) {
		return sa, err
	}
	attempts := 1
	if name == DefaultServiceAccountName {
		attempts = 10
	}
	interval := p.retryInterval()
	for i := range attempts {
		if i > 0 {
			t := time.NewTimer(interval)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		sa, err := p.client.CoreV1().ServiceAccounts(namespace).Get(ctx, name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return sa, err
		}
	}
	return nil, apierrors.NewNotFound(corev1.Resource("serviceaccount"), name)
}

// automount reports whether the token is mounted: the Pod's choice, else
// the account's, else yes.
func automount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// mountToken mounts the token volume (made unless the Pod has one) at
// MountPath in every container that mounts nothing there.
func (p *Plugin) mountToken(pod *corev1.Pod) {
	name := ""
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, VolumeNamePrefix) {
			name = v.Name
			break
		}
	}
	hasVolume := name != ""
	if !hasVolume {
		name = p.generateName(VolumeNamePrefix)
	}
	needed := false
	for _, containers := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			c := &containers[i]
			if slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == MountPath }) {
				continue
			}
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: MountPath})
			needed = true
		}
	}
	if needed && !hasVolume {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()}})
	}
}

// TokenVolumeSource is the projected volume of the token, the cluster's
// CA (the kube-root-ca.crt ConfigMap) and the namespace, as upstream's.
func TokenVolumeSource() *corev1.ProjectedVolumeSource {
	return &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To(corev1.ProjectedVolumeSourceDefaultMode),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](tokenExpirationSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}
}

// secretNames returns the secrets pod refers to: volumes (secret,
// projected, and the plugin sources that name one), containers'
// environment and image pull secrets.
func secretNames(pod *corev1.Pod) []string {
	var out []string
	for _, r := range pod.Spec.ImagePullSecrets {
		out = append(out, r.Name)
	}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		out = append(out, containerSecretNames(c)...)
	}
	for _, v := range pod.Spec.Volumes {
		out = append(out, volumeSecretNames(v)...)
	}
	return out
}

func containerSecretNames(c corev1.Container) []string {
	var out []string
	for _, e := range c.EnvFrom {
		if e.SecretRef != nil {
			out = append(out, e.SecretRef.Name)
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			out = append(out, e.ValueFrom.SecretKeyRef.Name)
		}
	}
	return out
}

func volumeSecretNames(v corev1.Volume) []string {
	var out []string
	ref := func(r *corev1.LocalObjectReference) {
		if r != nil && r.Name != "" {
			out = append(out, r.Name)
		}
	}
	switch s := v.VolumeSource; {
	case s.Secret != nil:
		out = append(out, s.Secret.SecretName)
	case s.Projected != nil:
		for _, p := range s.Projected.Sources {
			if p.Secret != nil {
				out = append(out, p.Secret.Name)
			}
		}
	case s.AzureFile != nil:
		out = append(out, s.AzureFile.SecretName)
	case s.CephFS != nil:
		ref(s.CephFS.SecretRef)
	case s.Cinder != nil:
		ref(s.Cinder.SecretRef)
	case s.FlexVolume != nil:
		ref(s.FlexVolume.SecretRef)
	case s.RBD != nil:
		ref(s.RBD.SecretRef)
	case s.ScaleIO != nil:
		ref(s.ScaleIO.SecretRef)
	case s.ISCSI != nil:
		ref(s.ISCSI.SecretRef)
	case s.StorageOS != nil:
		ref(s.StorageOS.SecretRef)
	case s.CSI != nil:
		ref(s.CSI.NodePublishSecretRef)
	}
	return out
}

// limitSecretReferences refuses a Pod whose secret volumes or containers'
// environment refer to a secret sa does not list, or whose image pull
// secrets are not among sa's, as upstream's.
func limitSecretReferences(sa *corev1.ServiceAccount, pod *corev1.Pod) error {
	mountable := map[string]bool{}
	for _, s := range sa.Secrets {
		mountable[s.Name] = true
	}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && !mountable[v.Secret.SecretName] {
			return fmt.Errorf("volume with secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", v.Secret.SecretName, sa.Name)
		}
	}
	for _, cs := range []struct {
		kind       string
		containers []corev1.Container
	}{{"init container", pod.Spec.InitContainers}, {"container", pod.Spec.Containers}} {
		kind := cs.kind
		for _, c := range cs.containers {
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !mountable[e.ValueFrom.SecretKeyRef.Name] {
					return fmt.Errorf("%s %s with envVar %s referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", kind, c.Name, e.Name, e.ValueFrom.SecretKeyRef.Name, sa.Name)
				}
			}
			for _, e := range c.EnvFrom {
				if e.SecretRef != nil && !mountable[e.SecretRef.Name] {
					return fmt.Errorf("%s %s with envFrom referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", kind, c.Name, e.SecretRef.Name, sa.Name)
				}
			}
		}
	}
	pullable := map[string]bool{}
	for _, s := range sa.ImagePullSecrets {
		pullable[s.Name] = true
	}
	for i, r := range pod.Spec.ImagePullSecrets {
		if !pullable[r.Name] {
			return fmt.Errorf(`imagePullSecrets[%d].name="%s" is not allowed because service account %s does not reference that imagePullSecret`, i, r.Name, sa.Name)
		}
	}
	return nil
}

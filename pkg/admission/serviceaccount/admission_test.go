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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// newPlugin returns the plugin over a fake client holding objects, its
// informers synced, and no wait between lookups.
func newPlugin(t *testing.T, objects ...runtime.Object) (*Plugin, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	p := New()
	p.SetExternalKubeClientSet(client)
	p.SetExternalKubeInformerFactory(factory)
	p.generateName = func(prefix string) string { return prefix + "abcde" }
	p.retryInterval = func() time.Duration { return 0 }
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	t.Cleanup(factory.Shutdown)
	return p, client
}

func admit(p *Plugin, pod *corev1.Pod) error {
	a := admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), pod.Namespace, pod.Name,
		corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
	return p.Admit(context.Background(), a, nil)
}

func account(name string, mutate ...func(*corev1.ServiceAccount)) *corev1.ServiceAccount {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	for _, m := range mutate {
		m(sa)
	}
	return sa
}

func pod(mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers:     []corev1.Container{{Name: "c", Image: "nginx"}},
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

var (
	tokenMount  = corev1.VolumeMount{Name: "kube-api-access-abcde", ReadOnly: true, MountPath: MountPath}
	tokenVolume = corev1.Volume{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()}}
)

// mounted is p with the default account's token mounted in each container.
func mounted(p *corev1.Pod) *corev1.Pod {
	p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "default", "default" //nolint:staticcheck // the alias is what upstream sets
	p.Spec.InitContainers[0].VolumeMounts = append(p.Spec.InitContainers[0].VolumeMounts, tokenMount)
	p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, tokenMount)
	p.Spec.Volumes = append(p.Spec.Volumes, tokenVolume)
	return p
}

func TestAdmitMutates(t *testing.T) {
	pullSecrets := func(names ...string) []corev1.LocalObjectReference {
		var out []corev1.LocalObjectReference
		for _, n := range names {
			out = append(out, corev1.LocalObjectReference{Name: n})
		}
		return out
	}
	tests := []struct {
		name     string
		accounts []runtime.Object
		pod      *corev1.Pod
		want     *corev1.Pod
	}{{
		name:     "the default account and its token",
		accounts: []runtime.Object{account("default")},
		pod:      pod(),
		want:     mounted(pod()),
	}, {
		name:     "the account's choice not to mount",
		accounts: []runtime.Object{account("default", func(sa *corev1.ServiceAccount) { sa.AutomountServiceAccountToken = ptr.To(false) })},
		pod:      pod(),
		want: pod(func(p *corev1.Pod) {
			p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "default", "default" //nolint:staticcheck // the alias is what upstream sets
		}),
	}, {
		name:     "the pod's choice wins over the account's",
		accounts: []runtime.Object{account("default", func(sa *corev1.ServiceAccount) { sa.AutomountServiceAccountToken = ptr.To(false) })},
		pod:      pod(func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr.To(true) }),
		want:     mounted(pod(func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr.To(true) })),
	}, {
		name:     "a named account, an existing mount at the path kept",
		accounts: []runtime.Object{account("robot")},
		pod: pod(func(p *corev1.Pod) {
			p.Spec.ServiceAccountName = "robot"
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: MountPath}}
		}),
		want: pod(func(p *corev1.Pod) {
			p.Spec.ServiceAccountName = "robot"
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: MountPath}}
			p.Spec.InitContainers[0].VolumeMounts = []corev1.VolumeMount{tokenMount}
			p.Spec.Volumes = []corev1.Volume{tokenVolume}
		}),
	}, {
		name:     "the account's image pull secrets for a pod with none",
		accounts: []runtime.Object{account("default", func(sa *corev1.ServiceAccount) { sa.ImagePullSecrets = pullSecrets("registry") })},
		pod:      pod(),
		want:     mounted(pod(func(p *corev1.Pod) { p.Spec.ImagePullSecrets = pullSecrets("registry") })),
	}, {
		name:     "the pod's own image pull secrets kept",
		accounts: []runtime.Object{account("default", func(sa *corev1.ServiceAccount) { sa.ImagePullSecrets = pullSecrets("registry") })},
		pod:      pod(func(p *corev1.Pod) { p.Spec.ImagePullSecrets = pullSecrets("mine") }),
		want:     mounted(pod(func(p *corev1.Pod) { p.Spec.ImagePullSecrets = pullSecrets("mine") })),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPlugin(t, tt.accounts...)
			got := tt.pod.DeepCopy()
			if err := admit(p, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pod (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAdmitRefuses(t *testing.T) {
	enforcing := account("default", func(sa *corev1.ServiceAccount) {
		sa.Annotations = map[string]string{EnforceMountableSecretsAnnotation: "true"}
		sa.Secrets = []corev1.ObjectReference{{Name: "allowed"}}
	})
	secretVolume := func(name string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}}
		}
	}
	tests := []struct {
		name     string
		accounts []runtime.Object
		pod      *corev1.Pod
		want     string // the error's message; "" for none
	}{{
		name: "a missing account",
		pod:  pod(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "robot" }),
		want: `pods "p" is forbidden: error looking up service account ns/robot: serviceaccount "robot" not found`,
	}, {
		name: "a missing default account",
		pod:  pod(),
		want: `pods "p" is forbidden: error looking up service account ns/default: serviceaccount "default" not found`,
	}, {
		name:     "a secret the account does not list, when it enforces",
		accounts: []runtime.Object{enforcing},
		pod:      pod(secretVolume("other")),
		want:     `pods "p" is forbidden: volume with secret.secretName="other" is not allowed because service account default does not reference that secret`,
	}, {
		name:     "a secret the account lists",
		accounts: []runtime.Object{enforcing},
		pod:      pod(secretVolume("allowed")),
	}, {
		name:     "a secret in an environment the account does not list",
		accounts: []runtime.Object{enforcing},
		pod: pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "other"}, Key: "k"}}}}
		}),
		want: `pods "p" is forbidden: container c with envVar E referencing secret.secretName="other" is not allowed because service account default does not reference that secret`,
	}, {
		name: "a mirror pod naming an account",
		pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
			p.Spec.ServiceAccountName = "default"
		}),
		want: `pods "p" is forbidden: a mirror pod may not reference service accounts`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPlugin(t, tt.accounts...)
			err := admit(p, tt.pod.DeepCopy())
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tt.want {
				t.Fatalf("got %v, want 403 %q", err, tt.want)
			}
		})
	}
}

// TestDefaultAccountLookedUpAgain: a "default" account not yet in the
// informer, nor on the server at the first few lookups, is waited for, as
// the controller making it may be about to; any other account is looked up
// once. (Validate, after Admit, looks it up again, as upstream's does.)
func TestDefaultAccountLookedUpAgain(t *testing.T) {
	for _, tt := range []struct {
		account   string
		wantGets  int
		wantFound bool
	}{{account: "default", wantGets: 4, wantFound: true}, {account: "robot", wantGets: 1}} {
		t.Run(tt.account, func(t *testing.T) {
			p, client := newPlugin(t)
			gets := 0
			client.PrependReactor("get", "serviceaccounts", func(k8stesting.Action) (bool, runtime.Object, error) {
				gets++
				if gets < 3 {
					return true, nil, apierrors.NewNotFound(corev1.Resource("serviceaccounts"), tt.account)
				}
				return true, account(tt.account), nil
			})
			err := admit(p, pod(func(p *corev1.Pod) { p.Spec.ServiceAccountName = tt.account }))
			if (err == nil) != tt.wantFound || gets != tt.wantGets {
				t.Fatalf("got %v after %d lookups, want found %v after %d", err, gets, tt.wantFound, tt.wantGets)
			}
		})
	}
}

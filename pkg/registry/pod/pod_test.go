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

package pod

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// pods are the stores of pods and pods/status on one registrytest.MemStorage.
type pods struct {
	mem       *registrytest.MemStorage
	store     *registry.REST
	status    *registry.StatusREST
	ephemeral *SpecREST
	resize    *SpecREST
}

func newPods(t testing.TB) pods {
	t.Helper()
	mem := registrytest.NewMemStorage()
	s, err := New(mem.Options("pods"))
	if err != nil {
		t.Fatalf("New: got error %v, want none", err)
	}
	return pods{mem: mem, store: s.Pods, status: s.Status, ephemeral: s.EphemeralContainers, resize: s.Resize}
}

// seed stores p (in namespace default) as it is, and returns the stored copy.
func (p pods) seed(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	key, err := p.store.KeyFunc(genericapirequest.WithNamespace(context.Background(), pod.Namespace), pod.Name)
	if err != nil {
		t.Fatalf("KeyFunc: %v", err)
	}
	return p.mem.Seed(t, key, pod).(*corev1.Pod)
}

// validPod returns a defaulted pod that passes validation.
func validPod() *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1"}},
			Containers:     []corev1.Container{{Name: "app", Image: "nginx:1.25"}, {Name: "sidecar", Image: "envoy:1"}},
		},
	}
	api.Scheme.Default(p)
	return p
}

func modified(p *corev1.Pod, mutate func(*corev1.Pod)) *corev1.Pod {
	p = p.DeepCopy()
	mutate(p)
	return p
}

func TestStorage(t *testing.T) {
	p := newPods(t)
	if diff := cmp.Diff([]string{"po"}, p.store.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"all"}, p.store.Categories()); diff != "" {
		t.Errorf("Categories (-want +got):\n%s", diff)
	}
	if !p.store.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got false, want true")
	}
	if p.store.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got true, want false")
	}
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	if diff := cmp.Diff(registry.Fieldpaths("v1", "status"), p.store.GetResetFields(), equal); diff != "" {
		t.Errorf("pods reset fields (-want +got):\n%s", diff)
	}
	wantStatus := registry.Fieldpaths("v1", "spec", "metadata.deletionTimestamp", "metadata.ownerReferences")
	if diff := cmp.Diff(wantStatus, p.status.GetResetFields(), equal); diff != "" {
		t.Errorf("pods/status reset fields (-want +got):\n%s", diff)
	}
}

func TestPrepareForCreate(t *testing.T) {
	resources := func(req, lim string) corev1.ResourceRequirements {
		var r corev1.ResourceRequirements
		if req != "" {
			r.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(req), corev1.ResourceMemory: resource.MustParse(req + "Gi")}
		}
		if lim != "" {
			r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(lim), corev1.ResourceMemory: resource.MustParse(lim + "Gi")}
		}
		return r
	}
	tests := []struct {
		name    string
		init    []corev1.ResourceRequirements
		app     []corev1.ResourceRequirements
		wantQOS corev1.PodQOSClass
	}{
		{name: "no resources", app: []corev1.ResourceRequirements{{}}, wantQOS: corev1.PodQOSBestEffort},
		{name: "requests only", app: []corev1.ResourceRequirements{resources("1", "")}, wantQOS: corev1.PodQOSBurstable},
		{name: "requests below limits", app: []corev1.ResourceRequirements{resources("1", "2")}, wantQOS: corev1.PodQOSBurstable},
		{name: "requests equal limits", app: []corev1.ResourceRequirements{resources("1", "1")}, wantQOS: corev1.PodQOSGuaranteed},
		{name: "limits only (requests default to them)", app: []corev1.ResourceRequirements{resources("", "1")}, wantQOS: corev1.PodQOSGuaranteed},
		{name: "one container without resources", app: []corev1.ResourceRequirements{resources("1", "1"), {}}, wantQOS: corev1.PodQOSBurstable},
		{
			name:    "cpu limit only",
			app:     []corev1.ResourceRequirements{{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
			wantQOS: corev1.PodQOSBurstable,
		},
		{name: "init container without resources", init: []corev1.ResourceRequirements{{}}, app: []corev1.ResourceRequirements{resources("1", "1")}, wantQOS: corev1.PodQOSBurstable},
		{name: "init container guaranteed too", init: []corev1.ResourceRequirements{resources("2", "2")}, app: []corev1.ResourceRequirements{resources("1", "1")}, wantQOS: corev1.PodQOSGuaranteed},
	}
	strategy := newPods(t).store.CreateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}
			for i, r := range tt.init {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: fmt.Sprintf("init-%d", i), Image: "busybox:1", Resources: r})
			}
			for i, r := range tt.app {
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprintf("app-%d", i), Image: "nginx:1", Resources: r})
			}
			api.Scheme.Default(pod)
			// A client-written status is dropped.
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", QOSClass: corev1.PodQOSGuaranteed, Message: "hi"}
			strategy.PrepareForCreate(context.Background(), pod)
			want := corev1.PodStatus{Phase: corev1.PodPending, QOSClass: tt.wantQOS}
			if diff := cmp.Diff(want, pod.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareForUpdateKeepsStatus(t *testing.T) {
	strategy := newPods(t).store.UpdateStrategy
	old := validPod()
	old.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", QOSClass: corev1.PodQOSBestEffort}
	obj := modified(old, func(p *corev1.Pod) {
		p.Spec.Containers[0].Image = "nginx:1.26"
		p.Status = corev1.PodStatus{Phase: corev1.PodSucceeded}
	})
	strategy.PrepareForUpdate(context.Background(), obj, old)
	if diff := cmp.Diff(old.Status, obj.Status); diff != "" {
		t.Errorf("status after PrepareForUpdate (-want +got):\n%s", diff)
	}
	if got, want := obj.Spec.Containers[0].Image, "nginx:1.26"; got != want {
		t.Errorf("image after PrepareForUpdate: got %q, want %q", got, want)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []string
	}{
		{name: "valid", pod: validPod(), want: []string{}},
		{
			name: "no containers",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.Containers = nil }),
			want: []string{"spec.containers: Required value"},
		},
		{
			name: "container without a name",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.Containers[1].Name = "" }),
			want: []string{"spec.containers[1].name: Required value"},
		},
		{
			name: "container name that is no DNS label",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.Containers[0].Name = "App_1" }),
			want: []string{"spec.containers[0].name: Invalid value"},
		},
		{
			name: "duplicate container names",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.Containers[1].Name = "app" }),
			want: []string{"spec.containers[1].name: Duplicate value"},
		},
		{
			name: "app container named like an init container", // the init container's name is the duplicate, as upstream's
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.Containers[0].Name = "init" }),
			want: []string{"spec.initContainers[0].name: Duplicate value"},
		},
		{
			name: "container without an image",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }),
			want: []string{"spec.containers[0].image: Required value"},
		},
		{
			name: "init container without a name or an image",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.InitContainers[0] = corev1.Container{}; api.Scheme.Default(p) }),
			want: []string{"spec.initContainers[0].image: Required value", "spec.initContainers[0].name: Required value"},
		},
		{
			name: "a port out of range, a duplicate port name, an unknown protocol",
			pod: modified(validPod(), func(p *corev1.Pod) {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 99999, Protocol: corev1.ProtocolTCP},
					{Name: "http", ContainerPort: 81, HostPort: 70000, Protocol: "QUIC"}}
			}),
			want: []string{"spec.containers[0].ports[0].containerPort: Invalid value", "spec.containers[0].ports[1].hostPort: Invalid value",
				"spec.containers[0].ports[1].name: Duplicate value", "spec.containers[0].ports[1].protocol: Unsupported value"},
		},
		{
			name: "duplicate volumes, a mount of no volume, a path mounted twice",
			pod: modified(validPod(), func(p *corev1.Pod) {
				empty := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
				p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: empty}, {Name: "v", VolumeSource: empty}}
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "v", MountPath: "/a"}, {Name: "w", MountPath: "/a"}}
			}),
			want: []string{"spec.containers[0].volumeMounts[1].mountPath: Invalid value", "spec.containers[0].volumeMounts[1].name: Not found",
				"spec.volumes[1].name: Duplicate value"},
		},
		{
			name: "requests over limits, an extended resource's request under its limit",
			pod: modified(validPod(), func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), "example.com/gpu": resource.MustParse("1")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), "example.com/gpu": resource.MustParse("2")},
				}
			}),
			want: []string{"spec.containers[0].resources.requests: Invalid value", "spec.containers[0].resources.requests: Invalid value"},
		},
		{
			name: "unsupported restartPolicy",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }),
			want: []string{"spec.restartPolicy: Unsupported value"},
		},
		{
			name: "restartPolicy Never",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }),
			want: []string{},
		},
		{
			name: "nodeName that is no DNS subdomain",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.NodeName = "Node_1" }),
			want: []string{"spec.nodeName: Invalid value"},
		},
		{
			name: "valid nodeName",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.NodeName = "node-1.example.com" }),
			want: []string{},
		},
		{ // upstream defaults a pod's to 1, and warns of a template's
			name: "negative terminationGracePeriodSeconds",
			// decoding defaults it to 1, as upstream's
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](-1); api.Scheme.Default(p) }),
			want: []string{},
		},
		{
			name: "zero terminationGracePeriodSeconds",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0) }),
			want: []string{},
		},
		{
			name: "zero activeDeadlineSeconds",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](0) }),
			want: []string{"spec.activeDeadlineSeconds: Invalid value"},
		},
		{
			name: "invalid name and missing namespace",
			pod:  modified(validPod(), func(p *corev1.Pod) { p.Name, p.Namespace = "Web!", "" }),
			want: []string{"metadata.name: Invalid value", "metadata.namespace: Required value"},
		},
	}
	strategy := newPods(t).store.CreateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(strategy.Validate(context.Background(), tt.pod))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	toleration := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	scheduled := modified(validPod(), func(p *corev1.Pod) { p.Spec.NodeName = "node-1" })
	tolerating := modified(validPod(), func(p *corev1.Pod) { p.Spec.Tolerations = []corev1.Toleration{toleration} })
	tests := []struct {
		name     string
		old, obj *corev1.Pod
		want     []string
	}{
		{name: "no change", old: validPod(), obj: validPod(), want: []string{}},
		{
			name: "labels may change",
			old:  validPod(),
			obj:  modified(validPod(), func(p *corev1.Pod) { p.Labels = map[string]string{"a": "b"} }),
			want: []string{},
		},
		{
			name: "container image may change",
			old:  validPod(),
			obj:  modified(validPod(), func(p *corev1.Pod) { p.Spec.Containers[1].Image = "envoy:2" }),
			want: []string{},
		},
		{
			name: "init container image may change",
			old:  validPod(),
			obj:  modified(validPod(), func(p *corev1.Pod) { p.Spec.InitContainers[0].Image = "busybox:2" }),
			want: []string{},
		},
		{
			name: "activeDeadlineSeconds may be set",
			old:  validPod(),
			obj:  modified(validPod(), func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) }),
			want: []string{},
		},
		{
			name: "tolerations may be added",
			old:  tolerating,
			obj: modified(tolerating, func(p *corev1.Pod) {
				p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "other", Operator: corev1.TolerationOpExists})
			}),
			want: []string{},
		},
		{
			name: "tolerations may not be removed",
			old:  tolerating,
			obj:  modified(tolerating, func(p *corev1.Pod) { p.Spec.Tolerations = nil }),
			want: []string{"spec.tolerations: Forbidden"},
		},
		{
			name: "tolerations may not be changed",
			old:  tolerating,
			obj:  modified(tolerating, func(p *corev1.Pod) { p.Spec.Tolerations[0].Value = "cpu" }),
			want: []string{"spec.tolerations: Forbidden"},
		},
		{
			name: "an unscheduled pod is given a node by its binding only",
			old:  validPod(),
			obj:  modified(validPod(), func(p *corev1.Pod) { p.Spec.NodeName = "node-1" }),
			want: []string{"spec: Forbidden"},
		},
		{
			name: "a scheduled pod may not move",
			old:  scheduled,
			obj:  modified(scheduled, func(p *corev1.Pod) { p.Spec.NodeName = "node-2" }),
			want: []string{"spec: Forbidden"},
		},
		{
			name: "containers may not be added",
			old:  validPod(),
			obj: modified(validPod(), func(p *corev1.Pod) {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "extra", Image: "x:1"})
				api.Scheme.Default(p)
			}),
			want: []string{"spec.containers: Forbidden"},
		},
		{
			name: "containers may not be removed",
			old:  validPod(),
			obj:  modified(validPod(), func(p *corev1.Pod) { p.Spec.Containers = p.Spec.Containers[:1] }),
			want: []string{"spec.containers: Forbidden"},
		},
		{
			name: "container env may not change",
			old:  validPod(),
			obj:  modified(validPod(), func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"}} }),
			want: []string{"spec: Forbidden"},
		},
		{
			name: "restartPolicy may not change",
			old:  validPod(),
			obj:  modified(validPod(), func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }),
			want: []string{"spec: Forbidden"},
		},
		{
			name: "the new spec is validated too",
			old:  validPod(),
			obj:  modified(validPod(), func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }),
			// by ValidatePodSpec and by the update's checks, as upstream
			want: []string{"spec.containers[0].image: Required value", "spec.containers[0].image: Required value"},
		},
		{
			name: "name is immutable",
			old:  validPod(),
			obj:  modified(validPod(), func(p *corev1.Pod) { p.Name = "other" }),
			want: []string{"metadata.name: Invalid value"},
		},
	}
	strategy := newPods(t).store.UpdateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(registrytest.ValidateUpdate(strategy, tt.obj, tt.old))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSchedulingGatesOnCreate: a gated pod is created with upstream's
// PodScheduled=False condition, and may not name a node.
func TestSchedulingGatesOnCreate(t *testing.T) {
	p := newPods(t)
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	gated := modified(validPod(), func(pod *corev1.Pod) {
		pod.UID, pod.ResourceVersion = "", ""
		pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
	})
	out, err := p.store.Create(ctx, gated, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	conds := out.(*corev1.Pod).Status.Conditions
	if len(conds) != 1 || conds[0].Type != corev1.PodScheduled || conds[0].Status != corev1.ConditionFalse || conds[0].Reason != "SchedulingGated" ||
		conds[0].Message != "Scheduling is blocked due to non-empty scheduling gates" || conds[0].LastTransitionTime.IsZero() {
		t.Errorf("conditions: got %+v, want PodScheduled False SchedulingGated", conds)
	}
	bound := modified(gated, func(pod *corev1.Pod) { pod.Name, pod.Spec.NodeName = "bound", "n1" })
	_, err = p.store.Create(ctx, bound, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	wantInvalid(t, err, "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared")
}

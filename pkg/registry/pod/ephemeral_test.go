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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// debugger is the ephemeral container kubectl debug adds.
func debugger(name string) corev1.EphemeralContainer {
	return corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: name, Image: "busybox:1", ImagePullPolicy: corev1.PullIfNotPresent,
		TerminationMessagePath: corev1.TerminationMessagePathDefault, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}}
}

// updateThrough sends an update of the pod web, made by mutating what is
// stored, through the updater.
func updateThrough(t *testing.T, updater rest.Updater, stored *corev1.Pod, mutate func(*corev1.Pod)) (*corev1.Pod, error) {
	t.Helper()
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	out, _, err := updater.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(modified(stored, mutate)), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return out.(*corev1.Pod), nil
}

// wantInvalid fails unless err is a 422 whose message has each of want.
func wantInvalid(t *testing.T, err error, want ...string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got error %v, want Invalid", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q: want it to contain %q", err.Error(), w)
		}
	}
}

// TestEphemeralContainersAreAddedOnly: pods/ephemeralcontainers adds an
// ephemeral container and changes nothing else of the pod, metadata
// included; the pod's generation counts it.
func TestEphemeralContainersAreAddedOnly(t *testing.T) {
	p := newPods(t)
	stored := p.seed(t, modified(validPod(), func(pod *corev1.Pod) {
		pod.Generation = 1
		pod.Status.Phase = corev1.PodRunning
	}))
	got, err := updateThrough(t, p.ephemeral, stored, func(pod *corev1.Pod) {
		pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugger("debugger")}
		pod.Spec.EphemeralContainers[0].TargetContainerName = "app"
		pod.Spec.Containers[0].Image = "nginx:1.26" // not this endpoint's to change
		pod.Status.Phase = corev1.PodFailed
		pod.Labels = map[string]string{"debugged": "yes"}
	})
	if err != nil {
		t.Fatalf("adding an ephemeral container: got error %v, want none", err)
	}
	if n := len(got.Spec.EphemeralContainers); n != 1 || got.Spec.EphemeralContainers[0].Name != "debugger" {
		t.Errorf("ephemeral containers: got %v, want debugger", got.Spec.EphemeralContainers)
	}
	if img := got.Spec.Containers[0].Image; img != "nginx:1.25" {
		t.Errorf("container image: got %q, want the stored nginx:1.25", img)
	}
	if got.Status.Phase != corev1.PodRunning {
		t.Errorf("phase: got %q, want the stored Running", got.Status.Phase)
	}
	if _, ok := got.Labels["debugged"]; ok {
		t.Errorf("labels: got %v, want the stored ones (upstream's ResetObjectMetaForStatus)", got.Labels)
	}
	if got.Generation != 2 {
		t.Errorf("generation: got %d, want 2", got.Generation)
	}

	// A second update may add another, but neither change nor drop one.
	if _, err := updateThrough(t, p.ephemeral, got, func(pod *corev1.Pod) { pod.Spec.EphemeralContainers = nil }); err != nil {
		wantInvalid(t, err, `spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be removed`)
	} else {
		t.Errorf("removing an ephemeral container: got no error, want Invalid")
	}
	_, err = updateThrough(t, p.ephemeral, got, func(pod *corev1.Pod) { pod.Spec.EphemeralContainers[0].Image = "busybox:2" })
	// The diff is of the internal types' JSON, field names as Go writes them, as upstream's.
	wantInvalid(t, err, `spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be changed`, `- "Image": "busybox:1",`, `+ "Image": "busybox:2",`)
}

// TestEphemeralContainersValidation: upstream's checks of an ephemeral
// container, each error as upstream words it.
func TestEphemeralContainersValidation(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*corev1.EphemeralContainer)
		stored func(*corev1.Pod)
		want   string
	}{
		{name: "a container's name", mutate: func(c *corev1.EphemeralContainer) { c.Name = "app" }, want: `spec.ephemeralContainers[0].name: Duplicate value: "app"`},
		{name: "an unknown target", mutate: func(c *corev1.EphemeralContainer) { c.TargetContainerName = "nope" }, want: `spec.ephemeralContainers[0].targetContainerName: Not found: "nope"`},
		{name: "no image", mutate: func(c *corev1.EphemeralContainer) { c.Image = "" }, want: `spec.ephemeralContainers[0].image: Required value`},
		{name: "ports", mutate: func(c *corev1.EphemeralContainer) { c.Ports = []corev1.ContainerPort{{ContainerPort: 80}} }, want: `spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container`},
		{name: "a probe", mutate: func(c *corev1.EphemeralContainer) { c.ReadinessProbe = &corev1.Probe{} }, want: `spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container`},
		{name: "a subpath", mutate: func(c *corev1.EphemeralContainer) {
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPath: "x"}}
		}, want: `spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container`},
		{name: "a static pod", mutate: func(*corev1.EphemeralContainer) {}, stored: func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
		}, want: `: Forbidden: static pods do not support ephemeral containers`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPods(t)
			pod := validPod()
			if tt.stored != nil {
				tt.stored(pod)
			}
			_, err := updateThrough(t, p.ephemeral, p.seed(t, pod), func(pod *corev1.Pod) {
				c := debugger("debugger")
				tt.mutate(&c)
				pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{c}
			})
			wantInvalid(t, err, tt.want)
		})
	}
}

// TestEphemeralContainersOnlyThroughTheSubresource: a create may not set
// them; an update of the pod may not add them.
func TestEphemeralContainersOnlyThroughTheSubresource(t *testing.T) {
	p := newPods(t)
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	pod := modified(validPod(), func(pod *corev1.Pod) {
		pod.UID, pod.ResourceVersion = "", ""
		pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugger("debugger")}
	})
	_, err := p.store.Create(ctx, pod, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	wantInvalid(t, err, "spec.ephemeralContainers: Forbidden: cannot be set on create")

	stored := p.seed(t, validPod())
	_, err = updateThrough(t, p.store, stored, func(pod *corev1.Pod) {
		pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugger("debugger")}
	})
	wantInvalid(t, err, "spec: Forbidden: pod updates may not change fields")
}

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

package limitranger

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// compute is upstream's getComputeResourceList: an empty string leaves
// the resource out.
func compute(cpu, memory string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		l[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return l
}

func storage(s string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(s)}
}

func needs(requests, limits corev1.ResourceList) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: requests, Limits: limits}
}

// item is upstream's createLimitRange's one item.
func item(t corev1.LimitType, lo, hi, def, defRequest, ratio corev1.ResourceList) corev1.LimitRangeItem {
	return corev1.LimitRangeItem{Type: t, Min: lo, Max: hi, Default: def, DefaultRequest: defRequest, MaxLimitRequestRatio: ratio}
}

func limitRange(items ...corev1.LimitRangeItem) *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "test", Name: "abc"}, Spec: corev1.LimitRangeSpec{Limits: items}}
}

// validLimitRange is upstream's.
func validLimitRange() *corev1.LimitRange {
	return limitRange(
		item(corev1.LimitTypePod, compute("50m", "2Mi"), compute("200m", "4Gi"), nil, nil, nil),
		item(corev1.LimitTypeContainer, compute("25m", "1Mi"), compute("100m", "2Gi"), compute("75m", "10Mi"), compute("50m", "5Mi"), nil),
	)
}

// podOf is upstream's validPod (n containers of r) with init containers
// of inits.
func podOf(name string, n int, r corev1.ResourceRequirements, inits ...corev1.ResourceRequirements) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "test", Name: name}}
	for i := range n {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "foo-" + strconv.Itoa(i), Image: "foo:V" + strconv.Itoa(i), Resources: *r.DeepCopy()})
	}
	for i, r := range inits {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: "foo-" + strconv.Itoa(i), Image: "foo:V" + strconv.Itoa(i), Resources: *r.DeepCopy()})
	}
	return pod
}

// TestSetDefaults: upstream's TestMergePodResourceRequirements and
// TestPodLimitFuncApplyDefault: what a container lacks is set, what it
// has is kept, and the annotation names what was set.
func TestSetDefaults(t *testing.T) {
	memory := needs(compute("", "512Mi"), nil)
	full := needs(compute("100m", "512Mi"), compute("200m", "1G"))
	fullInit := needs(compute("200m", "1G"), compute("400m", "2G"))
	for _, tt := range []struct {
		name           string
		pod            *corev1.Pod
		want, wantInit corev1.ResourceRequirements
		annotation     string
	}{{
		name:       "no resources",
		pod:        podOf("empty-resources", 1, needs(nil, nil)),
		want:       needs(compute("50m", "5Mi"), compute("75m", "10Mi")),
		annotation: "LimitRanger plugin set: cpu, memory request for container foo-0; cpu, memory limit for container foo-0",
	}, {
		name:       "memory request",
		pod:        podOf("limit-memory", 1, memory, memory),
		want:       needs(compute("50m", "512Mi"), compute("75m", "10Mi")),
		wantInit:   needs(compute("50m", "512Mi"), compute("75m", "10Mi")),
		annotation: "LimitRanger plugin set: cpu request for container foo-0; cpu, memory limit for container foo-0; cpu request for init container foo-0; cpu, memory limit for init container foo-0",
	}, {
		name:     "all set",
		pod:      podOf("limit-memory", 1, full, fullInit),
		want:     full,
		wantInit: fullInit,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			setDefaults(validLimitRange(), tt.pod)
			if diff := cmp.Diff(tt.want, tt.pod.Spec.Containers[0].Resources); diff != "" {
				t.Errorf("container (-want +got):\n%s", diff)
			}
			if len(tt.pod.Spec.InitContainers) > 0 {
				if diff := cmp.Diff(tt.wantInit, tt.pod.Spec.InitContainers[0].Resources); diff != "" {
					t.Errorf("init container (-want +got):\n%s", diff)
				}
			}
			if got := tt.pod.Annotations[Annotation]; got != tt.annotation {
				t.Errorf("annotation: got %q, want %q", got, tt.annotation)
			}
		})
	}
}

// TestValidatePod: rows of upstream's TestPodLimitFunc (its success and
// error cases), each error with the message upstream's format makes.
func TestValidatePod(t *testing.T) {
	sidecar := func(p *corev1.Pod, r corev1.ResourceRequirements) *corev1.Pod {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "sidecar", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: r})
		return p
	}
	podLevel := func(p *corev1.Pod, r corev1.ResourceRequirements) *corev1.Pod {
		p.Spec.Resources = &r
		return p
	}
	ctr, pod := corev1.LimitTypeContainer, corev1.LimitTypePod
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		lr   corev1.LimitRangeItem
		want string
	}{
		{"ctr-min-cpu-request", podOf("p", 1, needs(compute("100m", ""), nil)), item(ctr, compute("50m", ""), nil, nil, nil, nil), ""},
		{"ctr-min-cpu-request below", podOf("p", 1, needs(compute("50m", ""), nil)), item(ctr, compute("100m", ""), nil, nil, nil, nil),
			"minimum cpu usage per Container is 100m, but request is 50m"},
		{"ctr-min-cpu-no-request", podOf("p", 1, needs(nil, nil)), item(ctr, compute("100m", ""), nil, nil, nil, nil),
			"minimum cpu usage per Container is 100m.  No request is specified"},
		{"ctr-min-cpu-limit below", podOf("p", 1, needs(compute("200m", ""), compute("50m", ""))), item(ctr, compute("100m", ""), nil, nil, nil, nil),
			"minimum cpu usage per Container is 100m, but limit is 50m"},
		{"ctr-max-cpu-limit", podOf("p", 1, needs(compute("", ""), compute("100m", ""))), item(ctr, nil, compute("100m", ""), nil, nil, nil), ""},
		{"ctr-max-cpu-no-limit", podOf("p", 1, needs(compute("100m", ""), nil)), item(ctr, nil, compute("200m", ""), nil, nil, nil),
			"maximum cpu usage per Container is 200m.  No limit is specified"},
		{"ctr-max-mem-limit above", podOf("p", 1, needs(nil, compute("", "3Gi"))), item(ctr, nil, compute("", "2Gi"), nil, nil, nil),
			"maximum memory usage per Container is 2Gi, but limit is 3Gi"},
		{"two containers, two resources", podOf("x", 2, needs(compute("50m", "1Mi"), compute("50m", "1Mi"))), item(ctr, compute("100m", "2Mi"), nil, nil, nil, nil),
			"[minimum cpu usage per Container is 100m, but request is 50m, minimum memory usage per Container is 2Mi, but request is 1Mi]"},
		{"init container", podOf("p", 1, needs(compute("100m", ""), compute("100m", "")), needs(compute("100m", ""), compute("300m", ""))),
			item(ctr, nil, compute("200m", ""), nil, nil, nil), "maximum cpu usage per Container is 200m, but limit is 300m"},
		{"ctr-ratio", podOf("p", 1, needs(compute("100m", ""), compute("300m", ""))), item(ctr, nil, nil, nil, nil, compute("2", "")),
			"cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000"},
		{"ctr-ratio within", podOf("p", 1, needs(compute("", "250Mi"), compute("", "500Mi"))), item(ctr, nil, nil, nil, nil, compute("", "2")), ""},
		{"ctr-ratio no request", podOf("p", 1, needs(nil, compute("", "500Mi"))), item(ctr, nil, nil, nil, nil, compute("", "2")),
			"memory max limit to request ratio per Container is 2, but no request is specified or request is 0"},
		{"pod-max-cpu-limit", podOf("p", 3, needs(nil, compute("100m", ""))), item(pod, nil, compute("200m", ""), nil, nil, nil),
			"maximum cpu usage per Pod is 200m, but limit is 300m"},
		{"pod-min-memory-request", podOf("p", 2, needs(compute("", "60Mi"), nil)), item(pod, compute("", "100Mi"), nil, nil, nil, nil), ""},
		{"pod-init-max-local-ephemeral-storage-limit",
			podOf("p", 1, needs(nil, corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("500Mi")}),
				needs(nil, corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1.5Gi")})),
			item(pod, nil, corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}, nil, nil, nil),
			"maximum ephemeral-storage usage per Pod is 1Gi, but limit is 1536Mi"},
		{"ctr-max-cpu-limit-restartable-init-container",
			sidecar(podOf("p", 1, needs(compute("1000m", ""), compute("1500m", ""))), needs(compute("1500m", ""), nil)),
			item(pod, nil, compute("2", ""), nil, nil, nil), "maximum cpu usage per Pod is 2, but request is 2500m"},
		{"pod-level-resources-exceeding-max",
			podLevel(podOf("p", 3, needs(compute("100m", "60Mi"), compute("200m", "100Mi"))), needs(compute("200m", "180Mi"), compute("500m", "280Mi"))),
			item(pod, nil, compute("400m", "200Mi"), nil, nil, nil),
			"[maximum cpu usage per Pod is 400m, but limit is 500m, maximum memory usage per Pod is 200Mi, but limit is 280Mi]"},
		{"pod-level-requests-less-than-min",
			podLevel(podOf("p", 3, needs(compute("50m", "60Mi"), nil)), needs(compute("100m", "200Mi"), nil)),
			item(pod, compute("160m", "200Mi"), nil, nil, nil, nil), "minimum cpu usage per Pod is 160m, but request is 100m"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := validatePod(limitRange(tt.lr), tt.pod); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestValidateClaim: upstream's TestPersistentVolumeClaimLimitFunc rows:
// a claim's requested storage against the PersistentVolumeClaim item.
func TestValidateClaim(t *testing.T) {
	claim := func(requests corev1.ResourceList) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: requests}}}
	}
	pvc := corev1.LimitTypePersistentVolumeClaim
	for _, tt := range []struct {
		name  string
		claim *corev1.PersistentVolumeClaim
		lr    corev1.LimitRangeItem
		want  string
	}{
		{"pvc-min-only", claim(storage("5Gi")), item(pvc, storage("1Gi"), nil, nil, nil, nil), ""},
		{"pvc-min-max", claim(storage("5Gi")), item(pvc, storage("1Gi"), storage("10Gi"), nil, nil, nil), ""},
		{"pvc-below-min", claim(storage("500Mi")), item(pvc, storage("1Gi"), nil, nil, nil, nil),
			"minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"},
		{"pvc-above-max", claim(storage("20Gi")), item(pvc, nil, storage("10Gi"), nil, nil, nil),
			"maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"},
		{"pvc-no-request", claim(nil), item(pvc, nil, storage("10Gi"), nil, nil, nil),
			"maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified"},
		{"container item ignored", claim(storage("20Gi")), item(corev1.LimitTypeContainer, nil, storage("10Gi"), nil, nil, nil), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := validateClaim(limitRange(tt.lr), tt.claim); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

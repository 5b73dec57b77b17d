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

package watchcache

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podWithQuantities has Quantities behind a pointer (emptyDir.sizeLimit),
// in a struct in a slice (overhead is a map: its values are copies), and
// in containers' resources.
func podWithQuantities() *corev1.Pod {
	size := resource.MustParse("512Mi")
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "5"},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &size}}}},
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			}}},
		},
	}
}

// TestEncodingANormalizedObjectConcurrently encodes one cached pod from
// many goroutines at once, as JSON and protobuf, as the watch, list and
// table paths do. Without normalize the race detector reports the write
// of the Quantity's cached string (run with -race, as make test does).
func TestEncodingANormalizedObjectConcurrently(t *testing.T) {
	pod := podWithQuantities()
	normalize(pod)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			b, err := json.Marshal(pod)
			if err != nil || !strings.Contains(string(b), `"sizeLimit":"512Mi"`) {
				t.Errorf("got %s, %v; want a sizeLimit of 512Mi", b, err)
			}
		})
		wg.Go(func() {
			if _, err := pod.Marshal(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestNormalizeSkipsTypesWithoutQuantities(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  any
		want bool
	}{
		{"pod", &corev1.Pod{}, true},
		{"configmap", &corev1.ConfigMap{}, false},
		{"secret", &corev1.Secret{}, false},
		{"namespace", &corev1.Namespace{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mayHoldQuantity(reflect.TypeOf(tc.obj)); got != tc.want {
				t.Errorf("got %t, want %t", got, tc.want)
			}
		})
	}
}

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

package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

const (
	Namespace   = "default" // where the benchmarks' objects are
	PayloadSize = 1 << 10   // bytes of data per ConfigMap or custom resource
)

// CreateConfigMaps creates n ConfigMaps named bench-00000... in Namespace
// with workers concurrent clients, stopping at the first error.
func CreateConfigMaps(ctx context.Context, client kubernetes.Interface, n, workers int) error {
	return ForEach(ctx, n, workers, func(ctx context.Context, i int) error {
		return CreateConfigMap(ctx, client, i)
	})
}

// ForEach calls do for 0..n-1 from workers goroutines, stopping at the first
// error.
func ForEach(ctx context.Context, n, workers int, do func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	indexes := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range indexes {
				if err := do(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	feedIndexes(ctx, indexes, n)
	wg.Wait()
	return context.Cause(ctx)
}

// feedIndexes sends 0..n-1 to indexes until ctx is done, then closes it.
func feedIndexes(ctx context.Context, indexes chan<- int, n int) {
	defer close(indexes)
	for i := range n {
		select {
		case indexes <- i:
		case <-ctx.Done():
			return
		}
	}
}

func CreateConfigMap(ctx context.Context, client kubernetes.Interface, i int) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName(i)},
		Data:       map[string]string{"payload": Payload(i)},
	}
	if _, err := client.CoreV1().ConfigMaps(Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating ConfigMap %s: %w", cm.Name, err)
	}
	return nil
}

func ConfigMapName(i int) string { return fmt.Sprintf("bench-%05d", i) }

// TouchConfigMap sets the data key "seq" of ConfigMap i to value with a
// merge patch, so the client needs no GET first. The value must differ from
// the key's current one: an update that changes nothing writes nothing.
func TouchConfigMap(ctx context.Context, client kubernetes.Interface, i int, value string) error {
	patch, err := json.Marshal(map[string]any{"data": map[string]string{"seq": value}})
	if err != nil {
		return err
	}
	_, err = client.CoreV1().ConfigMaps(Namespace).Patch(ctx, ConfigMapName(i), types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("patching ConfigMap %s: %w", ConfigMapName(i), err)
	}
	return nil
}

// Payload is PayloadSize bytes of printable text that differs per object.
func Payload(i int) string {
	seed := fmt.Sprintf("configmap %05d of the LIST benchmark; ", i)
	return strings.Repeat(seed, PayloadSize/len(seed)+1)[:PayloadSize]
}

// ExactRVWrites is how many ConfigMaps RVBeforeWrites updates.
const ExactRVWrites = 100

// RVBeforeWrites takes the current resourceVersion of the objects
// ConfigMaps, then updates ExactRVWrites of them, so that a LIST at exactly
// that resourceVersion reads history: a snapshot of the cache, or etcd's.
func RVBeforeWrites(ctx context.Context, client kubernetes.Interface, objects int) (string, error) {
	list, err := client.CoreV1().ConfigMaps(Namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return "", fmt.Errorf("listing ConfigMaps: %w", err)
	}
	rv := list.ResourceVersion
	for i := range ExactRVWrites {
		if err := TouchConfigMap(ctx, client, i*objects/ExactRVWrites, rv+"-"+strconv.Itoa(i)); err != nil {
			return "", err
		}
	}
	return rv, nil
}

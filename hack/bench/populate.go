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

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

const (
	namespace   = "default"
	payloadSize = 1 << 10 // bytes of data per ConfigMap
)

// populateStats describes how the populated data dir was filled.
type populateStats struct {
	objects  int
	duration time.Duration
}

// populate starts a server on a new data dir, creates objects ConfigMaps
// with cfg.workers concurrent clients, and stops the server.
func populate(ctx context.Context, cfg config, dataDir string, objects int) (populateStats, error) {
	return populateWith(ctx, cfg, dataDir, objects, "ConfigMaps", func(ctx context.Context, s *server) error {
		return createConfigMaps(ctx, s, objects, cfg.workers)
	})
}

// populateWith starts a server on a new data dir, has create make objects
// objects of the kind what names, times it, and stops the server.
func populateWith(ctx context.Context, cfg config, dataDir string, objects int, what string,
	create func(context.Context, *server) error) (populateStats, error) {
	s, err := startServer(ctx, cfg, dataDir)
	if err != nil {
		return populateStats{}, fmt.Errorf("populate: %w", err)
	}
	progress("populate: creating %d %s with %d clients", objects, what, cfg.workers)
	began := time.Now()
	err = create(ctx, s)
	st := populateStats{objects: objects, duration: time.Since(began)}
	if err = errors.Join(err, s.Stop()); err != nil {
		return populateStats{}, fmt.Errorf("populate: %w", err)
	}
	progress("populate: done in %s (%.0f creates/s)", fmtDuration(st.duration), float64(st.objects)/st.duration.Seconds())
	return st, nil
}

// createConfigMaps creates n ConfigMaps named bench-00000... in namespace,
// stopping at the first error.
func createConfigMaps(ctx context.Context, s *server, n, workers int) error {
	client, err := s.client()
	if err != nil {
		return err
	}
	return forEach(ctx, n, workers, func(ctx context.Context, i int) error {
		return createConfigMap(ctx, client, i)
	})
}

// forEach calls do for 0..n-1 from workers goroutines, stopping at the first
// error.
func forEach(ctx context.Context, n, workers int, do func(context.Context, int) error) error {
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

func createConfigMap(ctx context.Context, client kubernetes.Interface, i int) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: configMapName(i)},
		Data:       map[string]string{"payload": payload(i)},
	}
	if _, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating ConfigMap %s: %w", cm.Name, err)
	}
	return nil
}

func configMapName(i int) string { return fmt.Sprintf("bench-%05d", i) }

// touchConfigMap sets the data key "seq" of ConfigMap i to value with a
// merge patch, so the client needs no GET first. The value must differ from
// the key's current one: an update that changes nothing writes nothing.
func touchConfigMap(ctx context.Context, client kubernetes.Interface, i int, value string) error {
	patch, err := json.Marshal(map[string]any{"data": map[string]string{"seq": value}})
	if err != nil {
		return err
	}
	_, err = client.CoreV1().ConfigMaps(namespace).Patch(ctx, configMapName(i), types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("patching ConfigMap %s: %w", configMapName(i), err)
	}
	return nil
}

// payload is payloadSize bytes of printable text that differs per object.
func payload(i int) string {
	seed := fmt.Sprintf("configmap %05d of the LIST benchmark; ", i)
	return strings.Repeat(seed, payloadSize/len(seed)+1)[:payloadSize]
}

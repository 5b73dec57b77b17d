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

package server

import (
	"context"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/garbagecollector"
)

// newGarbageCollector makes the garbage collector with the loopback
// config cfg; it runs until its context ends.
func newGarbageCollector(cfg *rest.Config) (func(context.Context), error) {
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	gc, err := garbagecollector.New(garbagecollector.Config{Metadata: meta, Discovery: disc})
	if err != nil {
		return nil, err
	}
	return gc.Run, nil
}

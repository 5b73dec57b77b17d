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
	"sync"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"

	"github.com/miniapiserver/miniapiserver/pkg/garbagecollector"
)

// addGarbageCollector adds the post-start hook "garbage-collector", which
// runs the garbage collector with the loopback client until ctx ends, as a
// goroutine of controllers.
func addGarbageCollector(ctx context.Context, generic *genericapiserver.GenericAPIServer, controllers *sync.WaitGroup) {
	generic.AddPostStartHookOrDie("garbage-collector", func(hc genericapiserver.PostStartHookContext) error {
		meta, err := metadata.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		disc, err := discovery.NewDiscoveryClientForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		gc, err := garbagecollector.New(garbagecollector.Config{Metadata: meta, Discovery: disc})
		if err != nil {
			return err
		}
		controllers.Go(func() { gc.Run(ctx) })
		return nil
	})
}

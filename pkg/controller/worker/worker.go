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

// Package worker runs the work queue of the server's controllers.
package worker

import (
	"context"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Run waits until synced, then syncs each key queue hands out, one at a
// time, until ctx ends; then it shuts queue down. A key whose sync fails
// is logged at V(2) as msg, with the error under the name key, and
// queued again at the queue's rate limit.
func Run(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], synced []cache.InformerSynced, sync func(context.Context, string) error, msg, key string) {
	defer utilruntime.HandleCrash()
	defer queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return
	}
	stop := context.AfterFunc(ctx, queue.ShutDown)
	defer stop()
	for {
		k, quit := queue.Get()
		if quit {
			return
		}
		if err := sync(ctx, k); err != nil {
			klog.FromContext(ctx).V(2).Info(msg, key, k, "err", err)
			queue.AddRateLimited(k)
		} else {
			queue.Forget(k)
		}
		queue.Done(k)
	}
}

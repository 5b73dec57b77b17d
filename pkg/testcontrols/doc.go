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

// Package testcontrols owns what a test may do to a running server beyond
// the Kubernetes API: checkpoints of the stored state and their restore,
// and injected faults.
//
// A checkpoint is an etcd revision held back from compaction
// (checkpoints.go, compactor.go). From the oldest checkpoint on, one etcd
// watch records, for each key changed since each checkpoint, its value at
// that checkpoint (recorder.go). A restore (restore.go) writes those values
// back, and deletes the keys made since, each as one compare-and-swap
// transaction of its own: resourceVersions only grow, every watcher sees
// ordinary ADDED, MODIFIED and DELETED events, and the cost follows the
// number of keys changed, not the number stored. One key per transaction,
// because a client resumes a watch from the resourceVersion of the last
// event it saw: two objects' events at one revision could lose the second
// to a watch that broke between them.
//
// Fault rules (faults.go, faultrules.go) are held in memory. Three hooks
// apply them: Faults.Handler, after authentication, decides which rules
// hit a request (counting each hit) and answers errors and drops;
// WrapStorage, around each resource's storage, holds the delays, answers a
// watch's 410 and keeps the open watches that an EndWatch rule ends
// (inject.go); Followed, under each watch cache, holds back the events a
// WatchCacheLag rule delays (lag.go).
package testcontrols

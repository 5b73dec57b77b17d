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

// Package garbagecollector deletes objects whose owners are gone and carries
// out foreground and orphan deletions, as kube-controller-manager's garbage
// collector does, in small.
//
// The collector discovers every resource that supports delete, list and
// watch (custom resources included: it re-discovers every second) and
// watches each with a metadata-only informer (monitors.go). From what they
// observe it keeps a graph (graph.go): the objects by UID and, for every
// owner UID, the dependents that refer to it. Events on the graph queue
// objects to look at; workers decide with live reads of the object and of
// its owners, so that a lagging informer never makes them delete wrongly
// (operations.go):
//
//   - an object none of whose owners exists any more (deleted, or replaced by
//     one with another UID) is deleted in the background; one with some owners
//     left loses the ownerReferences to the others;
//   - an owner being deleted with the foregroundDeletion finalizer gets its
//     dependents deleted, and loses the finalizer once no dependent with
//     blockOwnerDeletion is left;
//   - an owner being deleted with the orphan finalizer is removed from its
//     dependents' ownerReferences, then loses the finalizer.
//
// Usage, with a client config for the API server:
//
//	meta, _ := metadata.NewForConfig(cfg)
//	disc, _ := discovery.NewDiscoveryClientForConfig(cfg)
//	gc, err := garbagecollector.New(garbagecollector.Config{Metadata: meta, Discovery: disc})
//	...
//	go gc.Run(ctx) // until ctx ends
package garbagecollector

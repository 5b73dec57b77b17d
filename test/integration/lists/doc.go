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

// Package lists tests LISTs on both storage paths: resourceVersions and
// pagination from the watch cache's snapshots and from etcd, continue
// tokens across servers on one etcd, chunking and compaction, the encoding
// of cached lists, and what the storage metrics count.
package lists

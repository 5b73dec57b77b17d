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

import "context"

// cacheSnapshots is miniapiserver's gauge of the snapshots of its state
// each watch cache holds (KEP-4988), by group and resource.
const cacheSnapshots = "miniapiserver_watch_cache_snapshots"

// ListsFromSnapshots is how many LISTs of resource miniapiserver's watch
// cache has served from its snapshots so far: continuations and
// exact-resourceVersion LISTs. kube-apiserver has no such metric: 0.
func (s *Server) ListsFromSnapshots(ctx context.Context, resource string) (float64, error) {
	return s.cacheLists(ctx, resource, "snapshot")
}

// Snapshots is how many snapshots of resource miniapiserver's watch cache
// holds now. kube-apiserver has no such metric: 0.
func (s *Server) Snapshots(ctx context.Context, resource string) (float64, error) {
	m, err := s.Scrape(ctx, cacheSnapshots)
	if err != nil {
		return 0, err
	}
	return m.Sum(cacheSnapshots, `resource="`+resource+`"`)
}

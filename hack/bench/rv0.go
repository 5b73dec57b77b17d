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
)

// rv0Stats are the RV=0 listings from the watch cache and from etcd.
type rv0Stats struct {
	cache, etcd []listStats // in rv0Variants order
}

func rv0Variants() []listVariant {
	return []listVariant{
		{encoding: "JSON", accept: acceptJSON, rv: "0"},
		{encoding: "protobuf", accept: acceptProtobuf, rv: "0"},
	}
}

// benchRV0 lists with resourceVersion=0 from a server with the watch cache,
// then from one without it, both on the populated data dir.
func benchRV0(ctx context.Context, cfg config, dataDir string) (rv0Stats, error) {
	var st rv0Stats
	var err error
	if st.cache, err = listOnServer(ctx, withArgs(cfg, cachePath.args...), dataDir, "LIST (cache)", rv0Variants()); err != nil {
		return rv0Stats{}, err
	}
	if st.etcd, err = listOnServer(ctx, withArgs(cfg, etcdPath.args...), dataDir, "LIST (etcd)", rv0Variants()); err != nil {
		return rv0Stats{}, err
	}
	return st, nil
}

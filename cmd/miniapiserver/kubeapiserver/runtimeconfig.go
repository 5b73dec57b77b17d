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

package kubeapiserver

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/server/resourceconfig"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

// runtimeConfig reads --runtime-config and returns whether the test
// controls are served, and what to warn of. The served APIs are fixed, so
// an entry may only ask for what is served anyway, as harnesses do
// (kwokctl's --kube-runtime-config=api/all=true): api/all, api/ga, api/beta
// and api/alpha on (warned of but for api/ga: kube-apiserver's alpha and
// beta APIs this server lacks stay unserved), and GROUP/VERSION[/RESOURCE]
// on for a served group version (api/v1: core). The test controls' group
// is on only when named (api/all does not turn it on). Turning an API off,
// or on one that is not served, is refused, naming the entry.
func (o *Options) runtimeConfig() (testControls bool, warnings []string, err error) {
	served := server.ServedGroupVersions()
	for _, key := range slices.Sorted(maps.Keys(o.APIEnablement.RuntimeConfig)) {
		value := o.APIEnablement.RuntimeConfig[key]
		on := true
		if value != "" {
			if on, err = strconv.ParseBool(value); err != nil {
				return false, nil, fmt.Errorf("--runtime-config %s=%s: %w", key, value, err)
			}
		}
		matcher := matchers[key]
		tokens := strings.Split(key, "/")
		if !matcher && len(tokens) != 2 && len(tokens) != 3 {
			return false, nil, fmt.Errorf("runtime-config invalid key %s", key) // upstream's
		}
		gv := schema.GroupVersion{Group: tokens[0], Version: tokens[1]}
		if gv.Group == "api" && gv.Version == "v1" {
			gv.Group = ""
		}
		switch {
		case gv == v1alpha1.SchemeGroupVersion && len(tokens) == 2:
			testControls = on
		case !on:
			return false, nil, fmt.Errorf("--runtime-config %s=%s is not supported by miniapiserver: its APIs cannot be turned off (see docs/kube-apiserver.md)", key, value)
		case key == resourceconfig.APIGA:
		case matcher:
			warnings = append(warnings, fmt.Sprintf("--runtime-config %s=true: kube-apiserver's alpha and beta APIs that miniapiserver does not serve stay unserved (docs/reference.md lists what it serves)", key))
		case !slices.Contains(served, gv):
			return false, nil, fmt.Errorf("--runtime-config %s is not supported by miniapiserver: it does not serve %s (see docs/reference.md)", key, gv)
		}
	}
	return testControls, warnings, nil
}

// matchers are the keys that name APIs by maturity.
var matchers = map[string]bool{resourceconfig.APIAll: true, resourceconfig.APIGA: true, resourceconfig.APIBeta: true, resourceconfig.APIAlpha: true}

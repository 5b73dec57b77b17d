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

package version

import (
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

func TestGitVersionIsSemverOfTheLibraries(t *testing.T) {
	v, err := utilversion.ParseSemantic(GitVersion())
	if err != nil {
		t.Fatalf("gitVersion %q: %v", GitVersion(), err)
	}
	if v.Major() != 1 || v.Minor() != 37 {
		t.Errorf("got %s, want v1.37.x", v)
	}
	info := EffectiveVersion().Info()
	if info.GitVersion != GitVersion() || info.Major != "1" || info.Minor != "37" {
		t.Errorf("got %+v, want gitVersion %s major 1 minor 37", info, GitVersion())
	}
	// As kube-apiserver 1.37 reports them on /version.
	if info.EmulationMajor != "1" || info.EmulationMinor != "37" || info.MinCompatibilityMajor != "1" || info.MinCompatibilityMinor != "36" {
		t.Errorf("got %+v, want emulation 1.37 and minimum compatibility 1.36", info)
	}
}

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
	"runtime/debug"
	"strings"

	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/component-base/compatibility"
	baseversion "k8s.io/component-base/version"
)

// Set at build time with -ldflags "-X github.com/miniapiserver/miniapiserver/pkg/version.gitVersion=...".
// An unstamped build (go test, go run) derives gitVersion from the k8s.io/apiserver
// module it was built with: k8s.io/apiserver v0.37.2 serves Kubernetes v1.37.2.
var (
	gitVersion = ""
	gitCommit  = ""
	buildDate  = ""
)

// GitVersion is the semver reported as gitVersion, e.g. "v1.37.2".
func GitVersion() string {
	if gitVersion != "" {
		return gitVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "k8s.io/apiserver" {
				if v, ok := strings.CutPrefix(dep.Version, "v0."); ok {
					return "v1." + v
				}
			}
		}
	}
	return "v" + baseversion.DefaultKubeBinaryVersion + ".0"
}

// Get returns the full version info served on /version.
func Get() apimachineryversion.Info {
	info := baseversion.Get()
	info.GitVersion = GitVersion()
	info.Major, info.Minor = majorMinor(info.GitVersion)
	if gitCommit != "" {
		info.GitCommit = gitCommit
		info.GitTreeState = "clean"
	}
	if buildDate != "" {
		info.BuildDate = buildDate
	}
	return info
}

func majorMinor(v string) (string, string) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return "1", "37"
	}
	return parts[0], parts[1]
}

// EffectiveVersion is the component version genericapiserver needs; its Info()
// reports Get() instead of component-base's unstamped "v0.0.0-master", with
// the emulation and minimum compatibility versions kube-apiserver reports
// (its own minor, and the one before).
func EffectiveVersion() compatibility.EffectiveVersion {
	return effectiveVersion{compatibility.NewEffectiveVersionFromString(baseversion.DefaultKubeBinaryVersion, "", "")}
}

type effectiveVersion struct {
	compatibility.MutableEffectiveVersion
}

func (v effectiveVersion) Info() *apimachineryversion.Info {
	info := Get()
	compat := v.MutableEffectiveVersion.Info()
	info.EmulationMajor, info.EmulationMinor = compat.EmulationMajor, compat.EmulationMinor
	info.MinCompatibilityMajor, info.MinCompatibilityMinor = compat.MinCompatibilityMajor, compat.MinCompatibilityMinor
	return &info
}

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

package pod

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// overlappingPathWarnings warns of the files of one ConfigMap, Secret,
// DownwardAPI or projected volume that would be written to the same path,
// or to a path inside another's.
func overlappingPathWarnings(volumes []corev1.Volume) []string {
	var warnings []string
	warn := func(v *corev1.Volume, desc, body string) {
		warnings = append(warnings, fmt.Sprintf("volume %q (%s): overlapping paths: %s", v.Name, desc, body))
	}
	for i := range volumes {
		v := &volumes[i]
		if v.ConfigMap != nil && v.ConfigMap.Items != nil {
			for _, o := range mappingOverlaps(keyPaths(v.ConfigMap.Items, "")) {
				warn(v, fmt.Sprintf("ConfigMap %q", v.ConfigMap.Name), o)
			}
		}
		if v.Secret != nil && v.Secret.Items != nil {
			for _, o := range mappingOverlaps(keyPaths(v.Secret.Items, "")) {
				warn(v, fmt.Sprintf("Secret %q", v.Secret.SecretName), o)
			}
		}
		if v.DownwardAPI != nil && v.DownwardAPI.Items != nil {
			for _, o := range mappingOverlaps(downwardAPIPaths(v.DownwardAPI.Items, "")) {
				warn(v, "DownwardAPI", o)
			}
		}
		if v.Projected == nil {
			continue
		}
		var all []pathAndSource
		for _, source := range v.Projected.Sources {
			if source == (corev1.VolumeProjection{}) {
				warnings = append(warnings, fmt.Sprintf("volume %q (Projected) has no sources provided", v.Name))
				continue
			}
			for _, ps := range projectionPaths(&source) {
				ps.path = strings.TrimRight(ps.path, "/")
				for _, c := range overlaps(all, ps) {
					warn(v, "Projected", fmt.Sprintf("%s with %s", ps, c))
				}
				all = append(all, ps)
			}
		}
	}
	return warnings
}

// projectionPaths returns the paths one source of a projected volume writes.
func projectionPaths(source *corev1.VolumeProjection) []pathAndSource {
	switch {
	case source.ConfigMap != nil && source.ConfigMap.Items != nil:
		return keyPaths(source.ConfigMap.Items, fmt.Sprintf("ConfigMap %q", source.ConfigMap.Name))
	case source.Secret != nil && source.Secret.Items != nil:
		return keyPaths(source.Secret.Items, fmt.Sprintf("Secret %q", source.Secret.Name))
	case source.DownwardAPI != nil && source.DownwardAPI.Items != nil:
		return downwardAPIPaths(source.DownwardAPI.Items, "DownwardAPI")
	case source.ServiceAccountToken != nil:
		return []pathAndSource{{source.ServiceAccountToken.Path, "ServiceAccountToken"}}
	case source.ClusterTrustBundle != nil:
		b := source.ClusterTrustBundle
		name := ptr.Deref(b.Name, ptr.Deref(b.SignerName, ""))
		return []pathAndSource{{b.Path, fmt.Sprintf("ClusterTrustBundle %q", name)}}
	case source.PodCertificate != nil:
		var paths []pathAndSource
		for _, p := range []pathAndSource{
			{source.PodCertificate.CertificateChainPath, "PodCertificate chain"},
			{source.PodCertificate.KeyPath, "PodCertificate key"},
			{source.PodCertificate.CredentialBundlePath, "PodCertificate credential bundle"},
		} {
			if p.path != "" {
				paths = append(paths, p)
			}
		}
		return paths
	}
	return nil
}

// pathAndSource is a path and where it came from, for the warning.
type pathAndSource struct {
	path, source string
}

func (ps pathAndSource) String() string {
	if ps.source != "" {
		return fmt.Sprintf("%q (%s)", ps.path, ps.source)
	}
	return fmt.Sprintf("%q", ps.path)
}

func keyPaths(items []corev1.KeyToPath, source string) []pathAndSource {
	paths := make([]pathAndSource, 0, len(items))
	for _, item := range items {
		paths = append(paths, pathAndSource{item.Path, source})
	}
	return paths
}

func downwardAPIPaths(items []corev1.DownwardAPIVolumeFile, source string) []pathAndSource {
	paths := make([]pathAndSource, 0, len(items))
	for _, item := range items {
		paths = append(paths, pathAndSource{item.Path, source})
	}
	return paths
}

// mappingOverlaps returns, for each path that overlaps an earlier one, "A with B".
func mappingOverlaps(paths []pathAndSource) []string {
	var found []string
	var all []pathAndSource
	for _, ps := range paths {
		ps.path = strings.TrimRight(ps.path, "/")
		for _, c := range overlaps(all, ps) {
			found = append(found, fmt.Sprintf("%s with %s", ps, c))
		}
		all = append(all, ps)
	}
	return found
}

// overlaps returns the items of haystack that needle's path equals or
// that one is a directory of the other. The API server's separator is /.
func overlaps(haystack []pathAndSource, needle pathAndSource) []pathAndSource {
	if needle.path == "" {
		return nil
	}
	var result []pathAndSource
	for _, item := range haystack {
		switch {
		case item.path == "":
		case item == needle,
			strings.HasPrefix(item.path+"/", needle.path+"/"),
			strings.HasPrefix(needle.path+"/", item.path+"/"):
			result = append(result, item)
		}
	}
	return result
}

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

package controllers

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/miniapiserver/miniapiserver/pkg/controller/csrsigning"
	"github.com/miniapiserver/miniapiserver/pkg/controller/resourcequota"
	"github.com/miniapiserver/miniapiserver/pkg/controller/storageprotection"
)

// The in-server controllers, by kube-controller-manager's names (its
// --controllers takes these, and the short ones without "-controller").
const (
	Namespace              = "namespace-controller"
	ClusterRoleAggregation = "clusterrole-aggregation-controller"
	ServiceAccount         = "serviceaccount-controller"
	RootCAPublisher        = "root-ca-certificate-publisher-controller"
	PolicyStatus           = "validatingadmissionpolicy-status-controller"
	GarbageCollector       = "garbage-collector-controller"
	CSRSigning             = csrsigning.Name
	ResourceQuota          = resourcequota.Name
	PVCProtection          = storageprotection.PVCName
	PVProtection           = storageprotection.PVName
	VACProtection          = storageprotection.VACName
)

// defaults are the in-server controllers; on says which "*" runs.
var defaults = map[string]bool{
	Namespace: true, ClusterRoleAggregation: true, ServiceAccount: true,
	RootCAPublisher: true, PolicyStatus: true, GarbageCollector: false, CSRSigning: true,
	ResourceQuota: true, PVCProtection: true, PVProtection: true, VACProtection: true,
}

// Names are the names of the in-server controllers, sorted.
func Names() []string { return slices.Sorted(maps.Keys(defaults)) }

// Validate refuses names in list (Options.Controllers) that are no
// in-server controller's.
func Validate(list []string) []error {
	var errs []error
	for _, c := range list {
		name := strings.TrimPrefix(c, "-")
		_, known := defaults[name]
		_, knownShort := defaults[name+"-controller"]
		if c != "*" && !known && !knownShort {
			errs = append(errs, fmt.Errorf("--controllers: %q is not an in-server controller (%s)", c, strings.Join(Names(), ", ")))
		}
	}
	return errs
}

// Enabled reports whether list (Options.Controllers) runs controller
// name, as kube-controller-manager's IsControllerEnabled.
func Enabled(list []string, name string) bool {
	short := strings.TrimSuffix(name, "-controller")
	star := false
	for _, c := range list {
		switch c {
		case name, short:
			return true
		case "-" + name, "-" + short:
			return false
		case "*":
			star = true
		}
	}
	return star && defaults[name]
}

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

package openapi

import (
	"testing"

	restful "github.com/emicklei/go-restful/v3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// TestCoreV3IsSharedByRoutes: containers with the same routes share one
// OpenAPI v3 service; another route makes another.
func TestCoreV3IsSharedByRoutes(t *testing.T) {
	container := func(paths ...string) *restful.Container {
		c := restful.NewContainer()
		ws := new(restful.WebService).Path("/apis/example.com/v1")
		for _, p := range paths {
			ws.Route(ws.GET(p).To(func(*restful.Request, *restful.Response) {}).Operation("get" + p))
		}
		c.Add(ws)
		return c
	}
	cfg := &common.OpenAPIV3Config{
		Info:           &spec.Info{InfoProps: spec.InfoProps{Title: "test"}},
		GetDefinitions: func(common.ReferenceCallback) map[string]common.OpenAPIDefinition { return nil },
	}
	shared := func(c *restful.Container) *handler3.OpenAPIService {
		t.Helper()
		s, err := sharedCoreV3(c, cfg, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := shared(container("/things"))
	if b := shared(container("/things")); b != a {
		t.Error("two containers with the same routes got two services")
	}
	if c := shared(container("/things", "/others")); c == a {
		t.Error("containers with other routes got the same service")
	}
}

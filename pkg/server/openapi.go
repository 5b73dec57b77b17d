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

package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	restful "github.com/emicklei/go-restful/v3"
	openapibuilder "k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/apiserver/pkg/server/routes"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/common/restfuladapter"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// openAPI is /openapi/v2 and /openapi/v3: the core server's APIs and
// apiextensions.k8s.io, which kube-apiserver's aggregator merges, and every
// CRD (apiextensions-apiserver's OpenAPI controllers add them once built).
//
// genericapiserver's PrepareRun would build both specs before the server
// listens (~75 ms of CPU, a fifth of a start then). Server.Run builds them in the background
// instead, with upstream's own InstallV2 and InstallV3, and requests wait
// for them. (Right after a start, kube-apiserver's own OpenAPI lacks the
// CRDs for a moment too, until the controllers have added them.)
type openAPI struct {
	core      *genericapiserver.GenericAPIServer
	ext       *apiExtensions
	v2Config  *common.Config // the core server's, completed
	v3Config  *common.OpenAPIV3Config
	installed *mux.PathRecorderMux // where build installs them
	built     chan struct{}        // closed once build has run; then:
	v2        *handler.OpenAPIService
	static    *spec.Swagger // v2's, apiextensions.k8s.io's merged in
	v3        *handler3.OpenAPIService
	err       error // of build, when requests get it
}

// newOpenAPI serves /openapi/v2 and /openapi/v3 on core, whose config
// skips genericapiserver's installation.
func newOpenAPI(core *genericapiserver.GenericAPIServer, ext *apiExtensions, v2Config *common.Config, v3Config *common.OpenAPIV3Config) *openAPI {
	o := &openAPI{core: core, ext: ext, v2Config: v2Config, v3Config: v3Config,
		installed: mux.NewPathRecorderMux("openapi"), built: make(chan struct{})}
	wait := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-o.built:
		case <-r.Context().Done():
			return
		}
		if o.err != nil {
			http.Error(w, o.err.Error(), http.StatusInternalServerError)
			return
		}
		o.installed.ServeHTTP(w, r)
	})
	m := core.Handler.NonGoRestfulMux
	m.Handle("/openapi/v2", wait)
	m.Handle("/openapi/v3", wait)
	m.HandlePrefix("/openapi/v3/", wait)
	return o
}

// build builds and installs both specs, once; requests wait for it.
func (o *openAPI) build() {
	defer close(o.built)
	container := o.core.Handler.GoRestfulContainer
	o.v3 = routes.OpenAPI{V3Config: o.v3Config}.InstallV3(container, o.installed)
	var coreSpec *spec.Swagger
	o.v2, coreSpec = routes.OpenAPI{Config: o.v2Config}.InstallV2(container, o.installed)

	extServices := o.ext.webServices()
	for _, ws := range extServices {
		v3, err := builder3.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices([]*restful.WebService{ws}), o.ext.openAPIV3Config)
		if err != nil {
			o.err = fmt.Errorf("building the OpenAPI v3 spec of %s: %w", ws.RootPath(), err)
			return
		}
		o.v3.UpdateGroupVersion(strings.TrimPrefix(ws.RootPath(), "/"), v3)
	}
	extSpec, err := builder.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices(extServices), o.ext.openAPIConfig)
	if err == nil {
		o.static, err = openapibuilder.MergeSpecs(coreSpec, extSpec)
	}
	if err != nil {
		o.err = fmt.Errorf("building the OpenAPI v2 spec: %w", err)
		return
	}
	if err := o.v2.UpdateSpec(o.static); err != nil {
		o.err = err
		return
	}
	// /openapi/v3 lists each group with the hash of its spec: compute
	// them now, not in the first request for it.
	o.v3.HandleDiscovery(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/openapi/v3", nil))
}

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
	"sync"

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
// listens (~75 ms of CPU, a fifth of a start then). Server.Run builds v3
// in the background instead, once the server is ready (the
// MutatingAdmissionPolicy plugin reads its index every few seconds), and v2
// on its first request (clients read v3 nowadays; v2 is most of a
// server's heap after start), both with upstream's own InstallV2 and
// InstallV3; requests wait for them. (Right after a start,
// kube-apiserver's own OpenAPI lacks the CRDs for a moment too, until the
// controllers have added them.)
type openAPI struct {
	core      *genericapiserver.GenericAPIServer
	ext       *apiExtensions
	v2Config  *common.Config // the core server's, completed
	v3Config  *common.OpenAPIV3Config
	installed *mux.PathRecorderMux // where the builds install them
	v3Built   chan struct{}        // closed once buildV3 has run; then:
	v3        *handler3.OpenAPIService
	v3Err     error // of buildV3, when requests get it
	v2Once    sync.Once
	v2Built   chan struct{} // closed once buildV2 has run; then:
	v2        *handler.OpenAPIService
	static    *spec.Swagger // v2's, apiextensions.k8s.io's merged in
	v2Err     error         // of buildV2
}

// newOpenAPI serves /openapi/v2 and /openapi/v3 on core, whose config
// skips genericapiserver's installation.
func newOpenAPI(core *genericapiserver.GenericAPIServer, ext *apiExtensions, v2Config *common.Config, v3Config *common.OpenAPIV3Config) *openAPI {
	o := &openAPI{core: core, ext: ext, v2Config: v2Config, v3Config: v3Config,
		installed: mux.NewPathRecorderMux("openapi"), v3Built: make(chan struct{}), v2Built: make(chan struct{})}
	after := func(built chan struct{}, err *error, start func()) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			start()
			select {
			case <-built:
			case <-r.Context().Done():
				return
			}
			if *err != nil {
				http.Error(w, (*err).Error(), http.StatusInternalServerError)
				return
			}
			o.installed.ServeHTTP(w, r)
		}
	}
	m := core.Handler.NonGoRestfulMux
	m.Handle("/openapi/v2", after(o.v2Built, &o.v2Err, o.startV2))
	v3 := after(o.v3Built, &o.v3Err, func() {})
	m.Handle("/openapi/v3", v3)
	m.HandlePrefix("/openapi/v3/", v3)
	return o
}

// buildV3 builds and installs the v3 spec, once; requests wait for it.
func (o *openAPI) buildV3() {
	defer close(o.v3Built)
	o.v3 = routes.OpenAPI{V3Config: o.v3Config}.InstallV3(o.core.Handler.GoRestfulContainer, o.installed)
	for _, ws := range o.ext.webServices() {
		v3, err := builder3.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices([]*restful.WebService{ws}), o.ext.openAPIV3Config)
		if err != nil {
			o.v3Err = fmt.Errorf("building the OpenAPI v3 spec of %s: %w", ws.RootPath(), err)
			return
		}
		o.v3.UpdateGroupVersion(strings.TrimPrefix(ws.RootPath(), "/"), v3)
	}
	// /openapi/v3 lists each group with the hash of its spec: compute
	// them now, not in the first request for it.
	o.v3.HandleDiscovery(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/openapi/v3", nil))
}

// startV2 builds the v2 spec in the background, the first time only.
func (o *openAPI) startV2() { o.v2Once.Do(func() { go o.buildV2() }) }

// buildV2 builds and installs the v2 spec; requests wait for it.
func (o *openAPI) buildV2() {
	defer close(o.v2Built)
	var coreSpec *spec.Swagger
	o.v2, coreSpec = routes.OpenAPI{Config: o.v2Config}.InstallV2(o.core.Handler.GoRestfulContainer, o.installed)
	extSpec, err := builder.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices(o.ext.webServices()), o.ext.openAPIConfig)
	if err == nil {
		o.static, err = openapibuilder.MergeSpecs(coreSpec, extSpec)
	}
	if err != nil {
		o.v2Err = fmt.Errorf("building the OpenAPI v2 spec: %w", err)
		return
	}
	o.v2Err = o.v2.UpdateSpec(o.static)
}

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
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	restful "github.com/emicklei/go-restful/v3"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions/apiextensions/v1"
	openapicontroller "k8s.io/apiextensions-apiserver/pkg/controller/openapi"
	openapibuilder "k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	openapiv3controller "k8s.io/apiextensions-apiserver/pkg/controller/openapiv3"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/mux"
	apiroutes "k8s.io/apiserver/pkg/server/routes"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/common/restfuladapter"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Server is /openapi/v2 and /openapi/v3: the core server's APIs and
// apiextensions.k8s.io, which kube-apiserver's aggregator merges, and every
// CRD (apiextensions-apiserver's OpenAPI controllers add them once built).
//
// genericapiserver's PrepareRun would build both specs before the server
// listens, a large part of a start. The server's Run builds v3 (BuildV3)
// in the background instead, once the server is ready (the
// MutatingAdmissionPolicy plugin reads its index every few seconds), and v2
// on its first request (clients read v3 nowadays; v2 is most of a
// server's heap after start), both with upstream's own InstallV2 and
// InstallV3; requests wait for them. (Right after a start,
// kube-apiserver's own OpenAPI lacks the CRDs for a moment too, until the
// controllers have added them.)
type Server struct {
	core      *genericapiserver.GenericAPIServer
	ext       Extensions
	v2Config  *common.Config // the core server's, completed
	v3Config  *common.OpenAPIV3Config
	installed *mux.PathRecorderMux     // where the builds install them
	v3Built   chan struct{}            // closed once buildV3 has run; then:
	coreV3    *handler3.OpenAPIService // the built-in groups, apiextensions.k8s.io's too, shared (see sharedCoreV3)
	coreGVs   map[string]bool          // their names ("apis/apps/v1")
	v3        *handler3.OpenAPIService // this server's own: the CRDs
	v3Err     error                    // of buildV3, when requests get it
	v2Once    sync.Once
	v2Built   chan struct{} // closed once buildV2 has run; then:
	v2        *handler.OpenAPIService
	static    *spec.Swagger // v2's, apiextensions.k8s.io's merged in
	v2Err     error         // of buildV2
}

// Extensions are apiextensions.k8s.io's web services (those of its
// versions) and OpenAPI configs, which the core server serves.
type Extensions struct {
	WebServices []*restful.WebService
	V2          *common.Config
	V3          *common.OpenAPIV3Config
}

// New serves /openapi/v2 and /openapi/v3 on core, whose config skips
// genericapiserver's installation, with v2Config and v3Config, core's
// completed configs.
func New(core *genericapiserver.GenericAPIServer, ext Extensions, v2Config *common.Config, v3Config *common.OpenAPIV3Config) *Server {
	o := &Server{core: core, ext: ext, v2Config: v2Config, v3Config: v3Config,
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

// BuildV3 builds and installs the v3 spec, once; requests wait for it.
// The built-in groups come from sharedCoreV3; /openapi/v3 lists them with
// this server's CRDs.
func (o *Server) BuildV3() {
	defer close(o.v3Built)
	o.coreV3, o.v3Err = sharedCoreV3(o.core.Handler.GoRestfulContainer, o.v3Config, o.ext.WebServices, o.ext.V3)
	if o.v3Err != nil {
		return
	}
	core, err := discoveryOf(o.coreV3)
	if err != nil {
		o.v3Err = err
		return
	}
	o.coreGVs = map[string]bool{}
	for gv := range core.Paths {
		o.coreGVs[gv] = true
	}
	o.v3 = handler3.NewOpenAPIService()
	o.installed.HandleFunc("/openapi/v3", o.serveV3Discovery)
	o.installed.HandlePrefix("/openapi/v3/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.coreGVs[strings.TrimPrefix(r.URL.Path, "/openapi/v3/")] {
			o.coreV3.HandleGroupVersion(w, r)
			return
		}
		rw := &writeTracker{ResponseWriter: w}
		o.v3.HandleGroupVersion(rw, r)
		if !rw.wrote { // a group version it does not have: handler3 writes nothing, a 200
			w.WriteHeader(http.StatusNotFound) // as kube-apiserver's aggregator answers
		}
	}))
}

// writeTracker records whether anything was written through it.
type writeTracker struct {
	http.ResponseWriter
	wrote bool
}

func (w *writeTracker) WriteHeader(code int) {
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *writeTracker) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// serveV3Discovery is /openapi/v3: the shared core groups and this
// server's own, each with the hash of its spec.
func (o *Server) serveV3Discovery(w http.ResponseWriter, r *http.Request) {
	all, err := discoveryOf(o.coreV3)
	if err == nil {
		var own *handler3.OpenAPIV3Discovery
		if own, err = discoveryOf(o.v3); err == nil {
			maps.Copy(all.Paths, own.Paths)
		}
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body, err := json.Marshal(all)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Etag", strconv.Quote(fmt.Sprintf("%X", sha512.Sum512(body))))
	http.ServeContent(w, r, "/openapi/v3", time.Time{}, bytes.NewReader(body))
}

// discoveryOf is s's /openapi/v3 document.
func discoveryOf(s *handler3.OpenAPIService) (*handler3.OpenAPIV3Discovery, error) {
	rec := httptest.NewRecorder()
	s.HandleDiscovery(rec, httptest.NewRequest(http.MethodGet, "/openapi/v3", nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("the OpenAPI v3 index: %d %s", rec.Code, rec.Body)
	}
	d := &handler3.OpenAPIV3Discovery{}
	if err := json.Unmarshal(rec.Body.Bytes(), d); err != nil {
		return nil, fmt.Errorf("the OpenAPI v3 index: %w", err)
	}
	return d, nil
}

// coreV3s are the OpenAPI v3 services of the built-in APIs, by their
// routes: the servers of one process (in-process test servers) serve the
// same built-in APIs, whose specs and encodings are most of what a server
// holds after start, so they are built once and shared.
var coreV3s = struct {
	sync.Mutex
	byRoutes map[string]*handler3.OpenAPIService
}{byRoutes: map[string]*handler3.OpenAPIService{}}

// sharedCoreV3 returns the OpenAPI v3 service of c's routes (with cfg)
// and ext's (apiextensions.k8s.io, with extCfg), building it the first
// time: c's with upstream's InstallV3, ext's as kube-apiserver's aggregator
// does. The first request for it would compute each group's hash: that is
// done now too.
func sharedCoreV3(c *restful.Container, cfg *common.OpenAPIV3Config, ext []*restful.WebService, extCfg *common.OpenAPIV3Config) (*handler3.OpenAPIService, error) {
	var routes []string
	for _, ws := range append(c.RegisteredWebServices(), ext...) {
		for _, r := range ws.Routes() {
			routes = append(routes, r.Method+" "+r.Path+" "+r.Operation)
		}
	}
	slices.Sort(routes)
	key := fmt.Sprintf("%X", sha512.Sum512([]byte(strings.Join(routes, "\n"))))
	coreV3s.Lock()
	defer coreV3s.Unlock()
	if s, ok := coreV3s.byRoutes[key]; ok {
		return s, nil
	}
	s := apiroutes.OpenAPI{V3Config: cfg}.InstallV3(c, mux.NewPathRecorderMux("openapi-v3"))
	for _, ws := range ext {
		v3, err := builder3.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices([]*restful.WebService{ws}), extCfg)
		if err != nil {
			return nil, fmt.Errorf("building the OpenAPI v3 spec of %s: %w", ws.RootPath(), err)
		}
		s.UpdateGroupVersion(strings.TrimPrefix(ws.RootPath(), "/"), v3)
	}
	if _, err := discoveryOf(s); err != nil {
		return nil, err
	}
	coreV3s.byRoutes[key] = s
	return s, nil
}

// startV2 builds the v2 spec in the background, the first time only.
func (o *Server) startV2() { o.v2Once.Do(func() { go o.buildV2() }) }

// buildV2 builds and installs the v2 spec; requests wait for it.
func (o *Server) buildV2() {
	defer close(o.v2Built)
	var coreSpec *spec.Swagger
	o.v2, coreSpec = apiroutes.OpenAPI{Config: o.v2Config}.InstallV2(o.core.Handler.GoRestfulContainer, o.installed)
	extSpec, err := builder.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices(o.ext.WebServices), o.ext.V2)
	if err == nil {
		o.static, err = openapibuilder.MergeSpecs(coreSpec, extSpec)
	}
	if err != nil {
		o.v2Err = fmt.Errorf("building the OpenAPI v2 spec: %w", err)
		return
	}
	o.v2Err = o.v2.UpdateSpec(o.static)
}

// RunCRDControllers runs apiextensions-apiserver's OpenAPI controllers,
// which add the CRDs of crds to the specs, until done: each once its spec
// is built (v2 on its first request).
func (o *Server) RunCRDControllers(ctx context.Context, crds apiextensionsinformers.CustomResourceDefinitionInformer) {
	after := func(built <-chan struct{}, err *error, run func()) {
		select {
		case <-built:
		case <-ctx.Done():
			return
		}
		if *err != nil {
			utilruntime.HandleErrorWithContext(ctx, *err, "Serving no OpenAPI")
			return
		}
		run()
	}
	go after(o.v3Built, &o.v3Err, func() { openapiv3controller.NewController(crds).Run(o.v3, ctx.Done()) })
	go after(o.v2Built, &o.v2Err, func() { openapicontroller.NewController(crds).Run(o.static, o.v2, ctx.Done()) })
}

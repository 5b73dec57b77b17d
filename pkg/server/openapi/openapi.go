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
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/mux"
	apiroutes "k8s.io/apiserver/pkg/server/routes"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/common/restfuladapter"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Server is /openapi/v2 and /openapi/v3: the core server's APIs and
// apiextensions.k8s.io, which kube-apiserver's aggregator merges, and every
// CRD (apiextensions-apiserver's OpenAPI controllers add them once built).
// kube-aggregator's server in front merges v3 with its own and the
// extension API servers' (Handler); v2 is the core server's, with
// kube-aggregator's apiregistration.k8s.io (AlsoInV2) but not the
// extension API servers'.
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
	installed *mux.PathRecorderMux     // where buildV2 installs v2
	v3Built   chan struct{}            // closed once buildV3 has run; then:
	coreV3    *handler3.OpenAPIService // the built-in groups, apiextensions.k8s.io's too, shared (see sharedCoreV3)
	coreGVs   map[string]bool          // their names ("apis/apps/v1")
	v3        *handler3.OpenAPIService // this server's own: the CRDs
	v3Err     error                    // of buildV3, when requests get it
	alsoV2    []Extensions             // merged into v2 after ext (AlsoInV2)
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

// New serves /openapi/v2 on core, whose config skips genericapiserver's
// installation, with v2Config and v3Config, core's completed configs; and
// /openapi/v3 in front of core's aggregator (Handler).
func New(core *genericapiserver.GenericAPIServer, ext Extensions, v2Config *common.Config, v3Config *common.OpenAPIV3Config) *Server {
	o := &Server{core: core, ext: ext, v2Config: v2Config, v3Config: v3Config,
		installed: mux.NewPathRecorderMux("openapi"), v3Built: make(chan struct{}), v2Built: make(chan struct{})}
	m := core.Handler.NonGoRestfulMux
	m.HandleFunc("/openapi/v2", func(w http.ResponseWriter, r *http.Request) {
		o.startV2()
		select {
		case <-o.v2Built:
		case <-r.Context().Done():
			return
		}
		if o.v2Err != nil {
			http.Error(w, o.v2Err.Error(), http.StatusInternalServerError)
			return
		}
		o.installed.ServeHTTP(w, r)
	})
	// kube-aggregator's OpenAPI v3 proxier reads the index of each server
	// it delegates to, at start (before BuildV3) and every second after.
	// Handler serves core's groups in front of it: to it, core has none.
	m.HandleFunc("/openapi/v3", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"paths":{}}`))
	})
	return o
}

// BuildV3 builds the v3 spec, once; requests wait for it. The built-in
// groups come from sharedCoreV3; /openapi/v3 lists them with this server's
// CRDs.
func (o *Server) BuildV3() {
	defer close(o.v3Built)
	o.coreV3, o.v3Err = sharedCoreV3(o.core.Handler.GoRestfulContainer, o.v3Config, o.ext.WebServices, o.ext.V3)
	if o.v3Err != nil {
		return
	}
	core, err := discoveryOf(context.Background(), http.HandlerFunc(o.coreV3.HandleDiscovery))
	if err != nil {
		o.v3Err = err
		return
	}
	o.coreGVs = map[string]bool{}
	for gv := range core.Paths {
		o.coreGVs[gv] = true
	}
	o.v3 = handler3.NewOpenAPIService()
}

// Handler serves /openapi/v3 in front of next, kube-aggregator's server,
// as kube-apiserver's aggregator merges it: the index lists the core
// server's groups and the CRDs' with next's (apiregistration.k8s.io and
// the extension API servers'), and each group version is served by
// whichever has it, the core server first. Requests wait for BuildV3.
// Any other request goes to next.
func (o *Server) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gv, isGV := strings.CutPrefix(r.URL.Path, "/openapi/v3/")
		if !isGV && r.URL.Path != "/openapi/v3" {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case <-o.v3Built:
		case <-r.Context().Done():
			return
		}
		switch {
		case o.v3Err != nil:
			http.Error(w, o.v3Err.Error(), http.StatusInternalServerError)
		case !isGV:
			o.serveV3Discovery(w, r, next)
		case o.coreGVs[gv]:
			o.coreV3.HandleGroupVersion(w, r)
		default:
			rw := &writeTracker{ResponseWriter: w}
			o.v3.HandleGroupVersion(rw, r)
			if !rw.wrote { // not a CRD's: handler3 writes nothing
				next.ServeHTTP(w, r)
			}
		}
	})
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

// serveV3Discovery is /openapi/v3: next's groups, the shared core groups
// and this server's own, each with the hash of its spec.
func (o *Server) serveV3Discovery(w http.ResponseWriter, r *http.Request, next http.Handler) {
	all := handler3.OpenAPIV3Discovery{Paths: map[string]handler3.OpenAPIV3DiscoveryGroupVersion{}}
	var err error
	for _, h := range []http.Handler{next, http.HandlerFunc(o.coreV3.HandleDiscovery), http.HandlerFunc(o.v3.HandleDiscovery)} {
		var d *handler3.OpenAPIV3Discovery
		if d, err = discoveryOf(r.Context(), h); err != nil {
			break
		}
		maps.Copy(all.Paths, d.Paths)
	}
	var body []byte
	if err == nil {
		body, err = json.Marshal(all)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Etag", strconv.Quote(fmt.Sprintf("%X", sha512.Sum512(body))))
	http.ServeContent(w, r, "/openapi/v3", time.Time{}, bytes.NewReader(body))
}

// discoveryOf is h's /openapi/v3 document; none if h has none (404).
func discoveryOf(ctx context.Context, h http.Handler) (*handler3.OpenAPIV3Discovery, error) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/openapi/v3", nil))
	switch rec.Code {
	case http.StatusNotFound:
		return &handler3.OpenAPIV3Discovery{Paths: map[string]handler3.OpenAPIV3DiscoveryGroupVersion{}}, nil
	case http.StatusOK:
	default:
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
	if _, err := discoveryOf(context.Background(), http.HandlerFunc(s.HandleDiscovery)); err != nil {
		return nil, err
	}
	coreV3s.byRoutes[key] = s
	return s, nil
}

// GroupServices are c's web services of the API group (its root path and
// each of its versions').
func GroupServices(c *restful.Container, group string) []*restful.WebService {
	var services []*restful.WebService
	for _, ws := range c.RegisteredWebServices() {
		if root := "/apis/" + group; ws.RootPath() == root || strings.HasPrefix(ws.RootPath(), root+"/") {
			services = append(services, ws)
		}
	}
	return services
}

// AlsoInV2 adds ext's web services to the v2 spec (kube-aggregator's
// apiregistration.k8s.io, which kube-apiserver's v2 lists), before the
// server runs.
func (o *Server) AlsoInV2(ext Extensions) { o.alsoV2 = append(o.alsoV2, ext) }

// startV2 builds the v2 spec in the background, the first time only.
func (o *Server) startV2() { o.v2Once.Do(func() { go o.buildV2() }) }

// buildV2 builds and installs the v2 spec; requests wait for it.
func (o *Server) buildV2() {
	defer close(o.v2Built)
	var coreSpec *spec.Swagger
	o.v2, coreSpec = apiroutes.OpenAPI{Config: o.v2Config}.InstallV2(o.core.Handler.GoRestfulContainer, o.installed)
	o.static = coreSpec
	for _, ext := range append([]Extensions{o.ext}, o.alsoV2...) {
		extSpec, err := builder.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices(ext.WebServices), ext.V2)
		if err == nil { // without defaults, as InstallV2 serves core's (and apiextensions-apiserver its own)
			extSpec.Definitions = handler.PruneDefaults(extSpec.Definitions)
			o.static, err = openapibuilder.MergeSpecs(o.static, extSpec)
		}
		if err != nil {
			o.v2Err = fmt.Errorf("building the OpenAPI v2 spec: %w", err)
			return
		}
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

// Configs are kube-apiserver's OpenAPI configs of defs: its title, its
// bearer token security scheme, and namer's definition names, served
// versions only (versionedNames).
func Configs(defs common.GetOpenAPIDefinitions, namer *openapinamer.DefinitionNamer) (*common.Config, *common.OpenAPIV3Config) {
	v2 := genericapiserver.DefaultOpenAPIConfig(defs, namer)
	v3 := genericapiserver.DefaultOpenAPIV3Config(defs, namer)
	v2.GetDefinitionName, v3.GetDefinitionName = versionedNames(namer), versionedNames(namer)
	v2.Info.Title, v3.Info.Title = "Kubernetes", "Kubernetes"
	bearer := spec.SecuritySchemeProps{Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication"}
	v2.SecurityDefinitions = &spec.SecurityDefinitions{"BearerToken": {SecuritySchemeProps: bearer}}
	// What a generic server's Complete adds with the security definitions,
	// here for a config no generic server completes (AlsoInV2's).
	v2.CommonResponses = map[int]spec.Response{http.StatusUnauthorized: {ResponseProps: spec.ResponseProps{Description: "Unauthorized"}}}
	v3.SecuritySchemes = spec3.SecuritySchemes{"BearerToken": {SecuritySchemeProps: spec3.SecuritySchemeProps{
		Type: bearer.Type, Name: bearer.Name, In: bearer.In, Description: bearer.Description}}}
	return v2, v3
}

// versionedNames is namer's GetDefinitionName without the __internal
// group-version-kinds of a scheme whose internal versions are its
// versioned types (api.Scheme's): kube-apiserver's OpenAPI lists only
// served versions.
func versionedNames(namer *openapinamer.DefinitionNamer) func(string) (string, spec.Extensions) {
	return func(name string) (string, spec.Extensions) {
		name, ext := namer.GetDefinitionName(name)
		if gvks, ok := ext[gvkExtension].([]any); ok {
			ext[gvkExtension] = slices.DeleteFunc(slices.Clone(gvks), func(gvk any) bool {
				m, _ := gvk.(map[string]any)
				return m["version"] == runtime.APIVersionInternal
			})
		}
		return name, ext
	}
}

const gvkExtension = "x-kubernetes-group-version-kind"

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

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	listPath       = "/api/v1/namespaces/" + namespace + "/configmaps"
	acceptJSON     = "application/json"
	acceptProtobuf = "application/vnd.kubernetes.protobuf"
)

// listVariant is one way of listing every ConfigMap.
type listVariant struct {
	encoding string // "JSON" or "protobuf"
	accept   string
	limit    int    // 0: one request
	rv       string // the resourceVersion parameter; "": none (a consistent read)
	match    string // the resourceVersionMatch parameter; "": none
	path     string // the URL path listed; "": listPath, the ConfigMaps
	// firstPage: only the first page of a paged LIST, its token never followed.
	firstPage bool
}

func (v listVariant) String() string {
	s := v.encoding + ", one request"
	switch {
	case v.firstPage:
		s = fmt.Sprintf("%s, first page (limit %d)", v.encoding, v.limit)
	case v.limit > 0:
		s = fmt.Sprintf("%s, paged (limit %d)", v.encoding, v.limit)
	}
	if v.rv != "" {
		s += ", RV=" + v.rv
	}
	if v.match != "" {
		s += " (" + v.match + ")"
	}
	return s
}

// items is how many of objects ConfigMaps one listing of v returns.
func (v listVariant) items(objects int) int {
	if v.firstPage {
		return min(v.limit, objects)
	}
	return objects
}

// listStats are the timed full listings of one variant.
type listStats struct {
	variant    listVariant
	times      []time.Duration
	allocPerOp float64 // server bytes allocated per full listing
	shape      listing // pages and bytes of each full listing
}

// benchLists starts a server on the populated data dir and measures every
// LIST variant on it.
func benchLists(ctx context.Context, cfg config, dataDir string) ([]listStats, error) {
	return listOnServer(ctx, cfg, dataDir, "LIST", listVariants(cfg.page))
}

// listOnServer starts a server on the populated data dir and measures the
// variants on it; label prefixes errors and progress lines.
func listOnServer(ctx context.Context, cfg config, dataDir, label string, variants []listVariant) (results []listStats, err error) {
	s, err := startServer(ctx, cfg, dataDir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	client, err := s.listClient(cfg.gzip)
	if err != nil {
		return nil, err
	}
	for _, v := range variants {
		st, err := benchList(ctx, client.CoreV1().RESTClient(), v, cfg.objects, cfg.lists, label)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", label, v, err)
		}
		results = append(results, st)
	}
	return results, nil
}

// listClient is an admin clientset that accepts gzip-compressed responses
// only if gzip is set.
func (s *server) listClient(gzip bool) (*kubernetes.Clientset, error) {
	rc, err := s.restConfig()
	if err != nil {
		return nil, err
	}
	rc.DisableCompression = !gzip
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return client, nil
}

func listVariants(page int) []listVariant {
	return []listVariant{
		{encoding: "JSON", accept: acceptJSON},
		{encoding: "JSON", accept: acceptJSON, limit: page},
		{encoding: "protobuf", accept: acceptProtobuf},
		{encoding: "protobuf", accept: acceptProtobuf, limit: page},
	}
}

// benchList verifies one untimed listing of the objects ConfigMaps, then
// times runs listings between two scrapes of the server's allocation counter.
func benchList(ctx context.Context, rc rest.Interface, v listVariant, objects, runs int, label string) (listStats, error) {
	st := listStats{variant: v}
	var err error
	if st.shape, err = verifiedListing(ctx, rc, v, v.items(objects)); err != nil {
		return listStats{}, err
	}
	before, err := serverAllocBytes(ctx, rc)
	if err != nil {
		return listStats{}, err
	}
	for i := range runs {
		began := time.Now()
		shape, err := listAll(ctx, rc, v, nil)
		if err != nil {
			return listStats{}, err
		}
		st.times = append(st.times, time.Since(began))
		if shape != st.shape {
			return listStats{}, fmt.Errorf("listing %d: got %+v, the verified warm-up got %+v", i+1, shape, st.shape)
		}
	}
	after, err := serverAllocBytes(ctx, rc)
	if err != nil {
		return listStats{}, err
	}
	st.allocPerOp = (after - before) / float64(runs)
	progress("%s %s: median %s, %s allocated per listing", label, v, fmtDuration(median(st.times)), fmtBytes(st.allocPerOp))
	return st, nil
}

// listing is the shape of one full listing.
type listing struct {
	pages int
	bytes int
}

// listAll lists every ConfigMap (or what v.path names), following
// continue tokens when the variant is paged (and not firstPage); v's
// resourceVersion goes with the first page only. If page is
// not nil, it is called with every response body.
func listAll(ctx context.Context, rc rest.Interface, v listVariant, page func(body []byte) error) (listing, error) {
	var l listing
	path := cmp.Or(v.path, listPath)
	token := ""
	for {
		req := rc.Get().AbsPath(path).SetHeader("Accept", v.accept)
		if v.limit > 0 {
			req = req.Param("limit", strconv.Itoa(v.limit))
		}
		switch {
		case token != "":
			// The token holds the resourceVersion; the API rejects both.
			req = req.Param("continue", token)
		case v.match != "":
			req = req.Param("resourceVersion", v.rv).Param("resourceVersionMatch", v.match)
		case v.rv != "":
			req = req.Param("resourceVersion", v.rv)
		}
		body, err := req.DoRaw(ctx)
		if err != nil {
			return listing{}, fmt.Errorf("page %d: %w", l.pages+1, err)
		}
		l.pages++
		l.bytes += len(body)
		if page != nil {
			if err := page(body); err != nil {
				return listing{}, fmt.Errorf("page %d: %w", l.pages, err)
			}
		}
		if v.limit == 0 || v.firstPage {
			return l, nil
		}
		if token, err = continueToken(body, v.accept); err != nil {
			return listing{}, fmt.Errorf("page %d: %w", l.pages, err)
		}
		if token == "" {
			return l, nil
		}
	}
}

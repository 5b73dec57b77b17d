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

package driver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// ListVariant is one way of listing every object of a resource.
type ListVariant struct {
	Accept string // AcceptJSON or AcceptProtobuf
	Limit  int    // 0: one request
	RV     string // the resourceVersion parameter; "": none (a consistent read)
	Match  string // the resourceVersionMatch parameter; "": none
	Path   string // the URL path listed; "": ConfigMapsPath
	// FirstPage: only the first page of a paged LIST, its token never followed.
	FirstPage bool
}

const (
	ConfigMapsPath = "/api/v1/namespaces/" + Namespace + "/configmaps"
	AcceptJSON     = "application/json"
	AcceptProtobuf = "application/vnd.kubernetes.protobuf"
)

// Format is "json" or "protobuf".
func (v ListVariant) Format() string {
	if v.Accept == AcceptProtobuf {
		return "protobuf"
	}
	return "json"
}

// Items is how many of objects one listing of v returns.
func (v ListVariant) Items(objects int) int {
	if v.FirstPage {
		return min(v.Limit, objects)
	}
	return objects
}

// Listing is the shape of one full listing.
type Listing struct {
	Pages int
	Bytes int
}

// ListAll lists every object of v.Path, following continue tokens when the
// variant is paged (and not FirstPage); v's resourceVersion goes with the
// first page only. If page is not nil, it is called with every response
// body.
func ListAll(ctx context.Context, rc rest.Interface, v ListVariant, page func(body []byte) error) (Listing, error) {
	var l Listing
	path := cmp.Or(v.Path, ConfigMapsPath)
	token := ""
	for {
		req := rc.Get().AbsPath(path).SetHeader("Accept", v.Accept)
		if v.Limit > 0 {
			req = req.Param("limit", strconv.Itoa(v.Limit))
		}
		switch {
		case token != "":
			// The token holds the resourceVersion; the API rejects both.
			req = req.Param("continue", token)
		case v.Match != "":
			req = req.Param("resourceVersion", v.RV).Param("resourceVersionMatch", v.Match)
		case v.RV != "":
			req = req.Param("resourceVersion", v.RV)
		}
		body, err := req.DoRaw(ctx)
		if err != nil {
			return Listing{}, fmt.Errorf("page %d: %w", l.Pages+1, err)
		}
		l.Pages++
		l.Bytes += len(body)
		if page != nil {
			if err := page(body); err != nil {
				return Listing{}, fmt.Errorf("page %d: %w", l.Pages, err)
			}
		}
		if v.Limit == 0 || v.FirstPage {
			return l, nil
		}
		if token, err = ContinueToken(body, v.Accept); err != nil {
			return Listing{}, fmt.Errorf("page %d: %w", l.Pages, err)
		}
		if token == "" {
			return l, nil
		}
	}
}

// VerifiedListing lists every ConfigMap once, fully decoding each page, and
// checks that the listing holds exactly want distinct ConfigMaps, that no page
// exceeds the limit, that an exact-RV list is at that RV, and that
// ContinueToken agrees with the decoded lists.
func VerifiedListing(ctx context.Context, rc rest.Interface, v ListVariant, want int) (Listing, error) {
	names := make(map[string]bool, want)
	l, err := ListAll(ctx, rc, v, func(body []byte) error { return checkPage(body, v, names) })
	if err != nil {
		return Listing{}, err
	}
	if len(names) != want {
		return Listing{}, fmt.Errorf("got %d ConfigMaps in %d page(s), want exactly %d", len(names), l.Pages, want)
	}
	return l, nil
}

// checkPage decodes one response body and adds its ConfigMaps to names.
func checkPage(body []byte, v ListVariant, names map[string]bool) error {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return fmt.Errorf("decoding the %s list: %w", v.Format(), err)
	}
	list, ok := obj.(*corev1.ConfigMapList)
	if !ok {
		return fmt.Errorf("got a %T, want a *v1.ConfigMapList", obj)
	}
	if v.Limit > 0 && len(list.Items) > v.Limit {
		return fmt.Errorf("got %d items with limit=%d", len(list.Items), v.Limit)
	}
	if v.Match == string(metav1.ResourceVersionMatchExact) && list.ResourceVersion != v.RV {
		return fmt.Errorf("listed at resourceVersion %s, want exactly %s", list.ResourceVersion, v.RV)
	}
	token, err := ContinueToken(body, v.Accept)
	switch {
	case err != nil:
		return err
	case token != list.Continue:
		return fmt.Errorf("extracted continue token %q, decoded %q", token, list.Continue)
	case v.Limit == 0 && token != "":
		return fmt.Errorf("got continue token %q without a limit", token)
	}
	for _, cm := range list.Items {
		if names[cm.Name] {
			return fmt.Errorf("ConfigMap %s listed twice", cm.Name)
		}
		names[cm.Name] = true
	}
	return nil
}

// ContinueToken extracts metadata.continue from a list without decoding its
// items.
func ContinueToken(body []byte, accept string) (string, error) {
	if accept == AcceptProtobuf {
		return protoContinue(body)
	}
	return jsonContinue(body)
}

// jsonContinue decodes the list's top-level fields up to "metadata" only;
// the API server writes "items" after it.
func jsonContinue(body []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", fmt.Errorf("not a JSON object (%v)", err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("decoding JSON list: %w", err)
		}
		if key == "metadata" {
			var meta metav1.ListMeta
			if err := dec.Decode(&meta); err != nil {
				return "", fmt.Errorf("decoding JSON list metadata: %w", err)
			}
			return meta.Continue, nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", fmt.Errorf("decoding JSON list: %w", err)
		}
	}
	return "", errors.New("JSON list without metadata")
}

// protoContinue walks the protobuf wire format down to the token: the
// "k8s\x00" magic, then runtime.Unknown field 2 (raw), the list's field 1
// (metav1.ListMeta), and its field 3 (continue).
func protoContinue(body []byte) (string, error) {
	const magic = "k8s\x00"
	if !bytes.HasPrefix(body, []byte(magic)) {
		return "", errors.New("not a Kubernetes protobuf message")
	}
	msg := body[len(magic):]
	for _, field := range []protowire.Number{2, 1} { // Unknown.raw, then List.metadata
		var found bool
		var err error
		if msg, found, err = protoField(msg, field); err != nil || !found {
			return "", fmt.Errorf("protobuf list without field %d (%v)", field, err)
		}
	}
	token, _, err := protoField(msg, 3) // ListMeta.continue; absent when empty
	return string(token), err
}

// protoField returns the first length-delimited field num of a protobuf
// message.
func protoField(msg []byte, num protowire.Number) (value []byte, found bool, err error) {
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return nil, false, protowire.ParseError(l)
		}
		msg = msg[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(msg)
			if l < 0 {
				return nil, false, protowire.ParseError(l)
			}
			return v, true, nil
		}
		if l = protowire.ConsumeFieldValue(n, typ, msg); l < 0 {
			return nil, false, protowire.ParseError(l)
		}
		msg = msg[l:]
	}
	return nil, false, nil
}

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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// verifiedListing lists every ConfigMap once, fully decoding each page, and
// checks that the listing holds exactly want distinct ConfigMaps, that no page
// exceeds the limit, that an exact-RV list is at that RV, and that
// continueToken agrees with the decoded lists.
func verifiedListing(ctx context.Context, rc rest.Interface, v listVariant, want int) (listing, error) {
	names := make(map[string]bool, want)
	l, err := listAll(ctx, rc, v, func(body []byte) error { return checkPage(body, v, names) })
	if err != nil {
		return listing{}, err
	}
	if len(names) != want {
		return listing{}, fmt.Errorf("got %d ConfigMaps in %d page(s), want exactly %d", len(names), l.pages, want)
	}
	return l, nil
}

// checkPage decodes one response body and adds its ConfigMaps to names.
func checkPage(body []byte, v listVariant, names map[string]bool) error {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return fmt.Errorf("decoding the %s list: %w", v.encoding, err)
	}
	list, ok := obj.(*corev1.ConfigMapList)
	if !ok {
		return fmt.Errorf("got a %T, want a *v1.ConfigMapList", obj)
	}
	if v.limit > 0 && len(list.Items) > v.limit {
		return fmt.Errorf("got %d items with limit=%d", len(list.Items), v.limit)
	}
	if v.match == string(metav1.ResourceVersionMatchExact) && list.ResourceVersion != v.rv {
		return fmt.Errorf("listed at resourceVersion %s, want exactly %s", list.ResourceVersion, v.rv)
	}
	token, err := continueToken(body, v.accept)
	switch {
	case err != nil:
		return err
	case token != list.Continue:
		return fmt.Errorf("extracted continue token %q, decoded %q", token, list.Continue)
	case v.limit == 0 && token != "":
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

// continueToken extracts metadata.continue from a list without decoding its
// items.
func continueToken(body []byte, accept string) (string, error) {
	if accept == acceptProtobuf {
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

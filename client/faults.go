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

package testcontrol

import (
	"context"
	"net/http"
	"net/url"
)

// FaultRule is a fault rule's spec, as the server's FaultRule
// (docs/testcontrols.md): which requests it hits (Match), how many
// (Count, 0: until removed) and how likely (Probability, nil: 1), and
// exactly one action. Durations are Go durations as text ("500ms").
type FaultRule struct {
	Match          FaultMatch     `json:"match"`
	Count          int64          `json:"count,omitempty"`
	Probability    *float64       `json:"probability,omitempty"`
	Error          *FaultError    `json:"error,omitempty"`
	Delay          *FaultDelay    `json:"delay,omitempty"`
	EndWatch       *FaultEndWatch `json:"endWatch,omitempty"`
	DropConnection bool           `json:"dropConnection,omitempty"`
	WatchCacheLag  string         `json:"watchCacheLag,omitempty"`
}

// FaultMatch selects requests: each list that is set must match. Resources
// are as kubectl names them ("pods", "deployments.apps/scale", "*").
type FaultMatch struct {
	Verbs      []string `json:"verbs,omitempty"`
	Resources  []string `json:"resources"`
	Namespaces []string `json:"namespaces,omitempty"`
	Names      []string `json:"names,omitempty"`
	Users      []string `json:"users,omitempty"`
	Groups     []string `json:"groups,omitempty"`
}

// FaultError is the status a request is answered with (400 to 599).
type FaultError struct {
	Code              int32  `json:"code"`
	Message           string `json:"message,omitempty"`
	RetryAfterSeconds int32  `json:"retryAfterSeconds,omitempty"`
}

// FaultDelay holds a request before and after its storage call.
type FaultDelay struct {
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// FaultEndWatch ends the matching open watches, after a last bookmark if
// Bookmark.
type FaultEndWatch struct {
	Bookmark bool `json:"bookmark,omitempty"`
}

// InjectFault makes the fault rule name, and returns a func that deletes
// it. A rule the server refuses is an *Error (422, naming the field).
func (c *Client) InjectFault(ctx context.Context, name string, rule FaultRule) (remove func(context.Context) error, err error) {
	body := map[string]any{"apiVersion": APIVersion, "kind": "FaultRule", "metadata": map[string]string{"name": name}, "spec": rule}
	if err := c.do(ctx, http.MethodPost, c.rules, body, nil); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		return c.do(ctx, http.MethodDelete, c.rules+"/"+url.PathEscape(name), nil, nil)
	}, nil
}

// FaultHits returns how many requests the fault rule name has hit.
func (c *Client) FaultHits(ctx context.Context, name string) (int64, error) {
	var out struct {
		Status struct {
			Hits int64 `json:"hits"`
		} `json:"status"`
	}
	err := c.do(ctx, http.MethodGet, c.rules+"/"+url.PathEscape(name), nil, &out)
	return out.Status.Hits, err
}

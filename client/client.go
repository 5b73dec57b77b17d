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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// APIVersion is the group and version of the test controls.
const APIVersion = "testcontrol.miniapiserver.io/v1alpha1"

// Client calls the test controls of one server.
type Client struct {
	base, rules string
	http        *http.Client
}

// New returns a client of the server at host (https://127.0.0.1:6443),
// whose requests hc sends (with the credentials of an admin, or of a user
// RBAC lets use testcontrol.miniapiserver.io).
func New(host string, hc *http.Client) *Client {
	base := strings.TrimSuffix(host, "/") + "/apis/" + APIVersion
	return &Client{base: base + "/checkpoints", rules: base + "/faultrules", http: hc}
}

// Checkpoint is a checkpoint held by the server.
type Checkpoint struct {
	Name string
	// ResourceVersion is the resourceVersion of the stored state it holds.
	ResourceVersion string
}

// RestoreStatus counts what a restore wrote.
type RestoreStatus struct {
	Deleted, Recreated, Reverted int64
	// ResourceVersion is the resourceVersion once the restore is written.
	ResourceVersion string
}

// Error is the server's answer to a request it refused: its metav1.Status.
type Error struct {
	Code    int
	Reason  string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d %s)", e.Message, e.Code, e.Reason) }

// IsNotFound says whether err is a 404: an unknown checkpoint or fault
// rule, or a server
// that does not serve the test controls.
func IsNotFound(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Code == http.StatusNotFound
}

// checkpointObject is what the client reads of a Checkpoint.
type checkpointObject struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"status"`
}

// Checkpoint takes the checkpoint name (a DNS subdomain) of the stored
// state.
func (c *Client) Checkpoint(ctx context.Context, name string) (Checkpoint, error) {
	body := map[string]any{"apiVersion": APIVersion, "kind": "Checkpoint", "metadata": map[string]string{"name": name}}
	var out checkpointObject
	if err := c.do(ctx, http.MethodPost, c.base, body, &out); err != nil {
		return Checkpoint{}, err
	}
	return Checkpoint{Name: out.Metadata.Name, ResourceVersion: out.Status.ResourceVersion}, nil
}

// Restore puts back the stored state of the checkpoint name: what was made
// since is deleted, what was changed or deleted since is put back, as
// ordinary writes that watches see. The checkpoint stays.
func (c *Client) Restore(ctx context.Context, name string) (RestoreStatus, error) {
	body := map[string]string{"apiVersion": APIVersion, "kind": "Restore"}
	var out struct {
		Status RestoreStatus `json:"status"`
	}
	if err := c.do(ctx, http.MethodPost, c.base+"/"+url.PathEscape(name)+"/restore", body, &out); err != nil {
		return RestoreStatus{}, err
	}
	return out.Status, nil
}

// DeleteCheckpoint releases the checkpoint name.
func (c *Client) DeleteCheckpoint(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, c.base+"/"+url.PathEscape(name), nil, nil)
}

// do sends body as JSON and decodes a 2xx answer into out, or returns the
// server's Status as an *Error.
func (c *Client) do(ctx context.Context, method, url string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Code: resp.StatusCode, Message: strings.TrimSpace(string(b))}
		var status struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		}
		if json.Unmarshal(b, &status) == nil && status.Message != "" {
			e.Reason, e.Message = status.Reason, status.Message
		}
		return e
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

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

package admissionchain

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/admission"
)

// recordingChain admits by recording the operation, and refuses deletes.
type recordingChain struct{ admitted, validated chan admission.Operation }

func (recordingChain) Handles(op admission.Operation) bool { return op != admission.Connect }
func (c recordingChain) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	c.admitted <- a.GetOperation()
	return nil
}
func (c recordingChain) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	c.validated <- a.GetOperation()
	if a.GetOperation() == admission.Delete {
		return errors.New("no deletes")
	}
	return nil
}

// TestDeferred: before the chain is built a request waits for it,
// and is refused as a plugin that is not ready refuses it if it gives up
// first; once built, the chain admits and validates what it handles.
func TestDeferred(t *testing.T) {
	chain := recordingChain{admitted: make(chan admission.Operation, 4), validated: make(chan admission.Operation, 4)}
	d := &Deferred{built: make(chan struct{})}
	d.build = func() error {
		d.chain = chain
		close(d.built)
		return nil
	}
	attrs := func(op admission.Operation) admission.Attributes {
		return admission.NewAttributesRecord(nil, nil, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "default", "cm", schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "", op, nil, false, nil)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if err := d.Admit(ctx, attrs(admission.Create), nil); !apierrors.IsForbidden(err) {
		t.Errorf("before the chain is built, a request that gives up: got %v, want 403", err)
	}

	waited := make(chan error, 1)
	go func() { waited <- d.Validate(t.Context(), attrs(admission.Create), nil) }()
	select {
	case err := <-waited:
		t.Fatalf("Validate returned %v before the chain was built", err)
	case <-time.After(20 * time.Millisecond):
	}
	if err := d.Build(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("the waiting request: %v", err)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the waiting request still waits after the chain was built")
	}
	if op := <-chain.validated; op != admission.Create {
		t.Errorf("validated %s, want CREATE", op)
	}

	if err := d.Admit(t.Context(), attrs(admission.Update), nil); err != nil {
		t.Errorf("Admit: %v", err)
	}
	if op := <-chain.admitted; op != admission.Update {
		t.Errorf("admitted %s, want UPDATE", op)
	}
	if err := d.Validate(t.Context(), attrs(admission.Delete), nil); err == nil || err.Error() != "no deletes" {
		t.Errorf("a refused delete: got %v, want the chain's error", err)
	}
	if err := d.Admit(t.Context(), attrs(admission.Connect), nil); err != nil || len(chain.admitted) != 0 {
		t.Errorf("an operation the chain does not handle: got %v and %d admissions, want neither", err, len(chain.admitted))
	}
}

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

package controls

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	serverstorage "github.com/miniapiserver/miniapiserver/pkg/server/storage"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

func TestStartRequires(t *testing.T) {
	storages, err := serverstorage.New(serverstorage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	backend, faults := &storagebackend.Config{}, testcontrols.NewFaults(nil)
	for _, tc := range []struct {
		name   string
		config Config
		want   string
	}{
		{name: "no backend", config: Config{Storages: storages, Faults: faults}, want: "Config.Backend"},
		{name: "no storages", config: Config{Backend: backend, Faults: faults}, want: "Config.Storages"},
		{name: "no faults", config: Config{Backend: backend, Storages: storages}, want: "Config.Faults"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Start(t.Context(), tc.config)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				c.Stop()
				t.Errorf("got error %v, want one naming %s", err, tc.want)
			}
		})
	}
}

// TestOff: test controls that are off (a nil *Controls) say so.
func TestOff(t *testing.T) {
	var c *Controls
	errs := map[string]error{}
	_, errs["Checkpoint"] = c.Checkpoint(t.Context(), "a")
	_, errs["Restore"] = c.Restore(t.Context(), "a")
	errs["DeleteCheckpoint"] = c.DeleteCheckpoint("a")
	_, errs["InjectFault"] = c.InjectFault(v1alpha1.FaultRule{})
	_, errs["FaultRule"] = c.FaultRule("a")
	for name, err := range errs {
		if !errors.Is(err, ErrOff) {
			t.Errorf("%s: got %v, want ErrOff", name, err)
		}
	}
	c.Stop()
}

// TestKindsRegistered: the test controls' kinds are in api.Scheme, served
// or not.
func TestKindsRegistered(t *testing.T) {
	for _, kind := range []string{"Checkpoint", "CheckpointList", "Restore", "FaultRule", "FaultRuleList"} {
		if !api.Scheme.Recognizes(v1alpha1.SchemeGroupVersion.WithKind(kind)) {
			t.Errorf("got %s not recognized by api.Scheme, want it recognized", kind)
		}
	}
}

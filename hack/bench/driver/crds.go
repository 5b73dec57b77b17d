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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

const (
	CRDVersion      = "v1"
	DefaultSchedule = "* * * * *" // the default of spec.schedule, which listings check
)

// CRD are the names of one generated CustomResourceDefinition.
type CRD struct {
	Group, Kind, Plural string
}

// BenchCRD is the i-th generated CRD: a group and a kind of its own.
func BenchCRD(i int) CRD {
	kind := fmt.Sprintf("Widget%02d", i)
	return CRD{Group: fmt.Sprintf("bench-%02d.example.com", i), Kind: kind, Plural: strings.ToLower(kind) + "s"}
}

func (n CRD) Resource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: n.Group, Version: CRDVersion, Resource: n.Plural}
}

// ListPath is the URL path of the custom resources in namespace.
func (n CRD) ListPath() string {
	return "/apis/" + n.Group + "/" + CRDVersion + "/namespaces/" + Namespace + "/" + n.Plural
}

// WriteCRDManifests writes n CRD manifests, one JSON file each (the
// server's --crds reads .json as well as .yaml), into a new dir.
func WriteCRDManifests(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the CRD manifest dir: %w", err)
	}
	for i := range n {
		names := BenchCRD(i)
		crd := CRDManifest(names)
		// Without the CRD's status, which a manifest does not have.
		data, err := json.MarshalIndent(struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        metav1.ObjectMeta                            `json:"metadata"`
			Spec            apiextensionsv1.CustomResourceDefinitionSpec `json:"spec"`
		}{crd.TypeMeta, crd.ObjectMeta, crd.Spec}, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding CRD %s: %w", names.Kind, err)
		}
		file := filepath.Join(dir, names.Group+"_"+names.Plural+".json")
		if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("writing CRD manifest: %w", err)
		}
	}
	return nil
}

// crdManifest is a namespaced CRD as kubebuilder generates them (compare
// test/integration/testdata/kubebuilder/config/crd/bases): a structural
// schema with typed fields and defaults, a CEL rule, and the status
// subresource.
func CRDManifest(n CRD) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: n.Plural + "." + n.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: n.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: n.Kind, ListKind: n.Kind + "List", Plural: n.Plural, Singular: strings.ToLower(n.Kind),
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: CRDVersion, Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: widgetSchema(n.Kind)},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Schedule", Type: "string", JSONPath: ".spec.schedule"},
					{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
				},
			}},
		},
	}
}

func widgetSchema(kind string) *apiextensionsv1.JSONSchemaProps {
	str := func(description string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "string", Description: description}
	}
	int32Prop := func(description, def string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "integer", Format: "int32", Description: description,
			Default: &apiextensionsv1.JSON{Raw: []byte(def)}}
	}
	schedule := str("Schedule is when to run, in cron format.")
	schedule.Default = &apiextensionsv1.JSON{Raw: []byte(`"` + DefaultSchedule + `"`)}
	payload := str("Payload is opaque data.")
	payload.MaxLength = ptr.To[int64](4096)
	return &apiextensionsv1.JSONSchemaProps{
		Type:        "object",
		Description: kind + " runs an image on a schedule.",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"apiVersion": {Type: "string"},
			"kind":       {Type: "string"},
			"metadata":   {Type: "object"},
			"spec": {
				Type: "object", Required: []string{"image"},
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"image":       str("Image is the container image to run."),
					"schedule":    schedule,
					"replicas":    int32Prop("Replicas is how many copies to run.", "1"),
					"minReplicas": int32Prop("MinReplicas is the fewest replicas allowed.", "0"),
					"suspend":     {Type: "boolean", Default: &apiextensionsv1.JSON{Raw: []byte("false")}},
					"payload":     payload,
				},
				XValidations: apiextensionsv1.ValidationRules{
					{Rule: "self.minReplicas <= self.replicas", Message: "replicas must be at least minReplicas"},
				},
			},
			"status": {
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"replicas": {Type: "integer", Format: "int32", Description: "Replicas is how many copies run."},
				},
			},
		},
	}
}

// customResource is custom resource i of the CRD n, with PayloadSize bytes
// of spec.payload; the server fills in the defaulted fields.
func CustomResource(n CRD, i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": n.Group + "/" + CRDVersion,
		"kind":       n.Kind,
		"metadata":   map[string]any{"name": CustomResourceName(i)},
		"spec": map[string]any{
			"image":    "registry.example.com/bench/widget:1.0",
			"replicas": int64(1 + i%3),
			"payload":  CustomResourcePayload(i),
		},
	}}
}

func CustomResourceName(i int) string { return fmt.Sprintf("bench-%05d", i) }

// CustomResourcePayload is PayloadSize bytes of printable text that
// differs per object.
func CustomResourcePayload(i int) string {
	seed := fmt.Sprintf("custom resource %05d of the LIST benchmark; ", i)
	return strings.Repeat(seed, PayloadSize/len(seed)+1)[:PayloadSize]
}

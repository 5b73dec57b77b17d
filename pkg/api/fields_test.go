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

package api

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	podKind       = corev1.SchemeGroupVersion.WithKind("Pod")
	eventKind     = corev1.SchemeGroupVersion.WithKind("Event")
	namespaceKind = corev1.SchemeGroupVersion.WithKind("Namespace")
	secretKind    = corev1.SchemeGroupVersion.WithKind("Secret")
	csrKind       = certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest")
	bundleKind    = certificatesv1.SchemeGroupVersion.WithKind("ClusterTrustBundle")
	pcrKind       = certificatesv1.SchemeGroupVersion.WithKind("PodCertificateRequest")
)

func TestConvertFieldLabel(t *testing.T) {
	tests := []struct {
		name    string
		kind    schema.GroupVersionKind
		label   string
		wantErr bool
	}{
		{name: "pod metadata.name", kind: podKind, label: "metadata.name"},
		{name: "pod metadata.namespace", kind: podKind, label: "metadata.namespace"},
		{name: "pod spec.nodeName", kind: podKind, label: "spec.nodeName"},
		{name: "pod spec.restartPolicy", kind: podKind, label: "spec.restartPolicy"},
		{name: "pod spec.schedulerName", kind: podKind, label: "spec.schedulerName"},
		{name: "pod spec.serviceAccountName", kind: podKind, label: "spec.serviceAccountName"},
		{name: "pod spec.hostNetwork", kind: podKind, label: "spec.hostNetwork"},
		{name: "pod status.phase", kind: podKind, label: "status.phase"},
		{name: "pod status.podIP", kind: podKind, label: "status.podIP"},
		{name: "pod status.nominatedNodeName", kind: podKind, label: "status.nominatedNodeName"},
		{name: "pod spec.containers", kind: podKind, label: "spec.containers", wantErr: true},
		{name: "pod certificate request spec.podName", kind: pcrKind, label: "spec.podName"},
		{name: "pod certificate request metadata.namespace (as upstream)", kind: pcrKind, label: "metadata.namespace", wantErr: true},
		{name: "pod metadata.labels", kind: podKind, label: "metadata.labels", wantErr: true},
		{name: "pod empty label", kind: podKind, label: "", wantErr: true},
		{name: "pod label is case sensitive", kind: podKind, label: "spec.NodeName", wantErr: true},

		{name: "event involvedObject.kind", kind: eventKind, label: "involvedObject.kind"},
		{name: "event involvedObject.fieldPath", kind: eventKind, label: "involvedObject.fieldPath"},
		{name: "event reason", kind: eventKind, label: "reason"},
		{name: "event reportingComponent", kind: eventKind, label: "reportingComponent"},
		{name: "event source", kind: eventKind, label: "source"},
		{name: "event type", kind: eventKind, label: "type"},
		{name: "event metadata.namespace", kind: eventKind, label: "metadata.namespace"},
		{name: "event message", kind: eventKind, label: "message", wantErr: true},
		{name: "event reportingController (the events.k8s.io name)", kind: eventKind, label: "reportingController", wantErr: true},

		{name: "namespace status.phase", kind: namespaceKind, label: "status.phase"},
		{name: "namespace metadata.name", kind: namespaceKind, label: "metadata.name"},
		{name: "namespace metadata.namespace (cluster-scoped)", kind: namespaceKind, label: "metadata.namespace", wantErr: true},
		{name: "namespace spec.finalizers", kind: namespaceKind, label: "spec.finalizers", wantErr: true},

		{name: "secret type", kind: secretKind, label: "type"},
		{name: "secret metadata.name", kind: secretKind, label: "metadata.name"},
		{name: "secret metadata.namespace", kind: secretKind, label: "metadata.namespace"},
		{name: "secret data", kind: secretKind, label: "data", wantErr: true},

		// As upstream's conversions of certificates.k8s.io/v1.
		{name: "csr spec.signerName", kind: csrKind, label: "spec.signerName"},
		{name: "csr metadata.name", kind: csrKind, label: "metadata.name"},
		{name: "csr metadata.namespace (cluster-scoped)", kind: csrKind, label: "metadata.namespace", wantErr: true},
		{name: "csr spec.username", kind: csrKind, label: "spec.username", wantErr: true},
		{name: "bundle spec.signerName", kind: bundleKind, label: "spec.signerName"},
		{name: "bundle metadata.name", kind: bundleKind, label: "metadata.name"},
		{name: "bundle spec.trustBundle", kind: bundleKind, label: "spec.trustBundle", wantErr: true},

		// Kinds without a conversion of their own get the scheme's default.
		{name: "configmap metadata.name", kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), label: "metadata.name"},
		{name: "configmap metadata.namespace", kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), label: "metadata.namespace"},
		{name: "configmap data", kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), label: "data", wantErr: true},
		{name: "configmap type (a secret field)", kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), label: "type", wantErr: true},
		{name: "serviceaccount metadata.name", kind: corev1.SchemeGroupVersion.WithKind("ServiceAccount"), label: "metadata.name"},
		{name: "lease metadata.namespace", kind: coordinationv1.SchemeGroupVersion.WithKind("Lease"), label: "metadata.namespace"},
		{name: "lease spec.holderIdentity", kind: coordinationv1.SchemeGroupVersion.WithKind("Lease"), label: "spec.holderIdentity", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const value = "some-value"
			label, gotValue, err := Scheme.ConvertFieldLabel(tt.kind, tt.label, value)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ConvertFieldLabel(%s, %q): got (%q, %q, nil), want an error", tt.kind.Kind, tt.label, label, gotValue)
				}
				return
			}
			if err != nil {
				t.Fatalf("ConvertFieldLabel(%s, %q): got error %v, want none", tt.kind.Kind, tt.label, err)
			}
			if label != tt.label || gotValue != value {
				t.Errorf("ConvertFieldLabel(%s, %q): got (%q, %q), want (%q, %q)", tt.kind.Kind, tt.label, label, gotValue, tt.label, value)
			}
		})
	}
}

// TestFieldSetsAgreeWithLabelConversions checks the one-source rule: the
// labels a kind's conversion accepts are exactly the keys of the field set
// GetAttrs returns for it, so every accepted selector can match and every
// field an object is matched by can be selected.
func TestFieldSetsAgreeWithLabelConversions(t *testing.T) {
	tests := []struct {
		name     string
		kind     schema.GroupVersionKind
		set      fields.Set
		wantKeys []string
	}{
		{
			name: "pod",
			kind: podKind,
			set:  PodFields(&corev1.Pod{}),
			wantKeys: []string{
				"metadata.name", "metadata.namespace",
				"spec.hostNetwork", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
				"status.nominatedNodeName", "status.phase", "status.podIP",
			},
		},
		{
			name: "event",
			kind: eventKind,
			set:  EventFields(&corev1.Event{}),
			wantKeys: []string{
				"involvedObject.apiVersion", "involvedObject.fieldPath", "involvedObject.kind", "involvedObject.name",
				"involvedObject.namespace", "involvedObject.resourceVersion", "involvedObject.uid",
				"metadata.name", "metadata.namespace",
				"reason", "reportingComponent", "source", "type",
			},
		},
		{
			name:     "namespace",
			kind:     namespaceKind,
			set:      NamespaceFields(&corev1.Namespace{}),
			wantKeys: []string{"metadata.name", "status.phase"},
		},
		{
			name:     "secret",
			kind:     secretKind,
			set:      SecretFields(&corev1.Secret{}),
			wantKeys: []string{"metadata.name", "metadata.namespace", "type"},
		},
		{
			name:     "certificate signing request",
			kind:     csrKind,
			set:      CertificateSigningRequestFields(&certificatesv1.CertificateSigningRequest{}),
			wantKeys: []string{"metadata.name", "spec.signerName"},
		},
		{
			name:     "cluster trust bundle",
			kind:     bundleKind,
			set:      ClusterTrustBundleFields(&certificatesv1.ClusterTrustBundle{}),
			wantKeys: []string{"metadata.name", "spec.signerName"},
		},
		{
			name:     "pod certificate request (upstream's labels: no metadata.namespace)",
			kind:     pcrKind,
			set:      podCertificateRequestLabels(),
			wantKeys: []string{"metadata.name", "spec.nodeName", "spec.podName", "spec.signerName"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := make([]string, 0, len(tt.set))
			for k := range tt.set {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if diff := cmp.Diff(tt.wantKeys, keys); diff != "" {
				t.Errorf("field set keys (-want +got):\n%s", diff)
			}
			for _, k := range keys {
				if _, _, err := Scheme.ConvertFieldLabel(tt.kind, k, "v"); err != nil {
					t.Errorf("ConvertFieldLabel(%s, %q): got error %v, want none (the field set has it)", tt.kind.Kind, k, err)
				}
			}
			// The metadata labels the scheme's default accepts are accepted
			// only where the field set has them.
			for _, k := range []string{"metadata.name", "metadata.namespace"} {
				_, inSet := tt.set[k]
				_, _, err := Scheme.ConvertFieldLabel(tt.kind, k, "v")
				if got := err == nil; got != inSet {
					t.Errorf("ConvertFieldLabel(%s, %q) accepted: got %v, want %v (in field set)", tt.kind.Kind, k, got, inSet)
				}
			}
		})
	}
}

func TestLabelsOf(t *testing.T) {
	convert := labelsOf(fields.Set{"a": "", "b.c": ""})
	tests := []struct {
		name    string
		label   string
		wantErr bool
	}{
		{name: "first label", label: "a"},
		{name: "dotted label", label: "b.c"},
		{name: "prefix of a label", label: "b", wantErr: true},
		{name: "unknown label", label: "d", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			label, value, err := convert(tt.label, "x")
			if gotErr := err != nil; gotErr != tt.wantErr {
				t.Fatalf("convert(%q): got error %v, want error: %v", tt.label, err, tt.wantErr)
			}
			if tt.wantErr {
				if label != "" || value != "" {
					t.Errorf("convert(%q) on error: got (%q, %q), want (\"\", \"\")", tt.label, label, value)
				}
				return
			}
			if label != tt.label || value != "x" {
				t.Errorf("convert(%q): got (%q, %q), want (%q, %q)", tt.label, label, value, tt.label, "x")
			}
		})
	}
}

func TestPodFields(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "web", Namespace: "prod", Labels: map[string]string{"app": "web"}}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want fields.Set
	}{
		{
			name: "empty pod",
			pod:  &corev1.Pod{ObjectMeta: meta},
			want: fields.Set{
				"metadata.name": "web", "metadata.namespace": "prod",
				"spec.nodeName": "", "spec.restartPolicy": "", "spec.schedulerName": "", "spec.serviceAccountName": "",
				"spec.hostNetwork": "false", "status.phase": "", "status.podIP": "", "status.nominatedNodeName": "",
			},
		},
		{
			name: "populated pod: podIP is the first of status.podIPs",
			pod: &corev1.Pod{
				ObjectMeta: meta,
				Spec: corev1.PodSpec{
					NodeName: "node-1", RestartPolicy: corev1.RestartPolicyNever, SchedulerName: "custom",
					ServiceAccountName: "builder", HostNetwork: true,
				},
				Status: corev1.PodStatus{
					Phase:             corev1.PodRunning,
					PodIP:             "10.0.0.9", // ignored: upstream reads podIPs
					PodIPs:            []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}},
					NominatedNodeName: "node-2",
				},
			},
			want: fields.Set{
				"metadata.name": "web", "metadata.namespace": "prod",
				"spec.nodeName": "node-1", "spec.restartPolicy": "Never", "spec.schedulerName": "custom",
				"spec.serviceAccountName": "builder", "spec.hostNetwork": "true",
				"status.phase": "Running", "status.podIP": "10.0.0.1", "status.nominatedNodeName": "node-2",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, PodFields(tt.pod)); diff != "" {
				t.Errorf("PodFields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventFields(t *testing.T) {
	involved := corev1.ObjectReference{
		Kind: "Pod", Namespace: "prod", Name: "web", UID: "uid-1", APIVersion: "v1",
		ResourceVersion: "12", FieldPath: "spec.containers{app}",
	}
	base := fields.Set{
		"metadata.name":                  "web.1",
		"metadata.namespace":             "prod",
		"involvedObject.kind":            "Pod",
		"involvedObject.namespace":       "prod",
		"involvedObject.name":            "web",
		"involvedObject.uid":             "uid-1",
		"involvedObject.apiVersion":      "v1",
		"involvedObject.resourceVersion": "12",
		"involvedObject.fieldPath":       "spec.containers{app}",
		"reason":                         "Started",
		"type":                           "Normal",
	}
	with := func(extra fields.Set) fields.Set {
		out := fields.Set{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name       string
		source     corev1.EventSource
		controller string
		want       fields.Set
	}{
		{
			name:   "source from source.component",
			source: corev1.EventSource{Component: "kubelet", Host: "node-1"},
			want:   with(fields.Set{"source": "kubelet", "reportingComponent": ""}),
		},
		{
			name:       "source falls back to reportingController",
			controller: "example.com/controller",
			want:       with(fields.Set{"source": "example.com/controller", "reportingComponent": "example.com/controller"}),
		},
		{
			name:       "source.component wins over reportingController",
			source:     corev1.EventSource{Component: "kubelet"},
			controller: "example.com/controller",
			want:       with(fields.Set{"source": "kubelet", "reportingComponent": "example.com/controller"}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &corev1.Event{
				ObjectMeta:          metav1.ObjectMeta{Name: "web.1", Namespace: "prod"},
				InvolvedObject:      involved,
				Reason:              "Started",
				Type:                corev1.EventTypeNormal,
				Source:              tt.source,
				ReportingController: tt.controller,
			}
			if diff := cmp.Diff(tt.want, EventFields(e)); diff != "" {
				t.Errorf("EventFields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNamespaceAndSecretFields(t *testing.T) {
	tests := []struct {
		name string
		got  fields.Set
		want fields.Set
	}{
		{
			name: "namespace: no metadata.namespace",
			got: NamespaceFields(&corev1.Namespace{
				ObjectMeta: metav1.ObjectMeta{Name: "prod"},
				Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating},
			}),
			want: fields.Set{"metadata.name": "prod", "status.phase": "Terminating"},
		},
		{
			name: "secret",
			got: SecretFields(&corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "prod"},
				Type:       corev1.SecretTypeTLS,
			}),
			want: fields.Set{"metadata.name": "tls", "metadata.namespace": "prod", "type": "kubernetes.io/tls"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("field set (-want +got):\n%s", diff)
			}
		})
	}
}

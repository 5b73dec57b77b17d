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

package manifests

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func conversionCRD(name, group, kind string, conversion *apiextensionsv1.CustomResourceConversion, preserve bool) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind},
			Conversion: conversion, PreserveUnknownFields: preserve,
		},
	}
}

func TestSetConversionWebhooks(t *testing.T) {
	byWebhook := &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{
			Service: &apiextensionsv1.ServiceReference{Namespace: "system", Name: "webhook-service"}}}}
	none := &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	u := "https://127.0.0.1:9443/convert"
	cc := apiextensionsv1.WebhookClientConfig{URL: &u, CABundle: []byte("ca")}
	for _, tc := range []struct {
		name string
		cw   *ConversionWebhook
		want []string // the CRDs pointed at cc
	}{
		{"nothing without a webhook", nil, nil},
		{"those whose manifest asks for webhook conversion", &ConversionWebhook{ClientConfig: cc}, []string{"a"}},
		{"and those of the listed kinds", &ConversionWebhook{ClientConfig: cc, Kinds: []schema.GroupKind{{Group: "b.example.com", Kind: "B"}}}, []string{"a", "b"}},
		{"or all but those that preserve unknown fields", &ConversionWebhook{ClientConfig: cc, AllKinds: true}, []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crds := []*apiextensionsv1.CustomResourceDefinition{
				conversionCRD("a", "a.example.com", "A", byWebhook.DeepCopy(), false),
				conversionCRD("b", "b.example.com", "B", none.DeepCopy(), false),
				conversionCRD("c", "c.example.com", "C", nil, false),
				conversionCRD("d", "d.example.com", "D", byWebhook.DeepCopy(), true),
			}
			SetConversionWebhooks(crds, tc.cw)
			var got []string
			for _, c := range crds {
				if c.Spec.Conversion == nil || c.Spec.Conversion.Webhook == nil || c.Spec.Conversion.Webhook.ClientConfig.URL == nil {
					continue
				}
				if diff := cmp.Diff(cc, *c.Spec.Conversion.Webhook.ClientConfig); diff != "" {
					t.Errorf("%s's client config (-want +got):\n%s", c.Name, diff)
				}
				if s := c.Spec.Conversion.Strategy; s != apiextensionsv1.WebhookConverter {
					t.Errorf("%s's strategy %s", c.Name, s)
				}
				got = append(got, c.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CRDs pointed at the webhook (-want +got):\n%s", diff)
			}
		})
	}
}

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
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func jobTemplateJSON(restartPolicy string) string {
	return `{"metadata":{"labels":{"app":"x"}},"spec":{"restartPolicy":"` + restartPolicy + `","containers":[{"name":"c","image":"nginx:1.25"}]}}`
}

func TestDecodeJobDefaults(t *testing.T) {
	tests := []struct {
		name       string
		spec       string
		want       batchv1.JobSpec
		wantLabels map[string]string
	}{
		{
			name: "empty",
			spec: `{"template":` + jobTemplateJSON("Never") + `}`,
			want: batchv1.JobSpec{
				Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), BackoffLimit: ptr.To[int32](6),
				CompletionMode: ptr.To(batchv1.NonIndexedCompletion), Suspend: ptr.To(false),
				PodReplacementPolicy: ptr.To(batchv1.TerminatingOrFailed), ManualSelector: ptr.To(false),
			},
			wantLabels: map[string]string{"app": "x"},
		},
		{
			name: "parallelism only: completions stay unset (a work queue)",
			spec: `{"parallelism":3,"template":` + jobTemplateJSON("Never") + `}`,
			want: batchv1.JobSpec{
				Parallelism: ptr.To[int32](3), BackoffLimit: ptr.To[int32](6),
				CompletionMode: ptr.To(batchv1.NonIndexedCompletion), Suspend: ptr.To(false),
				PodReplacementPolicy: ptr.To(batchv1.TerminatingOrFailed), ManualSelector: ptr.To(false),
			},
			wantLabels: map[string]string{"app": "x"},
		},
		{
			name: "podFailurePolicy: pods are replaced once Failed",
			spec: `{"podFailurePolicy":{"rules":[{"action":"FailJob","onExitCodes":{"operator":"In","values":[42]}}]},"template":` + jobTemplateJSON("Never") + `}`,
			want: batchv1.JobSpec{
				Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), BackoffLimit: ptr.To[int32](6),
				CompletionMode: ptr.To(batchv1.NonIndexedCompletion), Suspend: ptr.To(false),
				PodReplacementPolicy: ptr.To(batchv1.Failed), ManualSelector: ptr.To(false),
				PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
					Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
				}}},
			},
			wantLabels: map[string]string{"app": "x"},
		},
		{
			name: "explicit values and labels kept",
			spec: `{"completions":5,"parallelism":2,"backoffLimit":0,"suspend":true,"manualSelector":true,"completionMode":"Indexed","podReplacementPolicy":"Failed",` +
				`"selector":{"matchLabels":{"app":"x"}},"template":` + jobTemplateJSON("OnFailure") + `}`,
			want: batchv1.JobSpec{
				Completions: ptr.To[int32](5), Parallelism: ptr.To[int32](2), BackoffLimit: ptr.To[int32](0),
				CompletionMode: ptr.To(batchv1.IndexedCompletion), Suspend: ptr.To(true),
				PodReplacementPolicy: ptr.To(batchv1.Failed), ManualSelector: ptr.To(true), Selector: selectorAppX,
			},
			wantLabels: map[string]string{"app": "x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, batchv1.SchemeGroupVersion, `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default"},"spec":`+tt.spec+`}`)
			j, ok := obj.(*batchv1.Job)
			if !ok {
				t.Fatalf("Decode: got %T, want *batchv1.Job", obj)
			}
			template := j.Spec.Template
			j.Spec.Template = corev1.PodTemplateSpec{}
			if diff := cmp.Diff(tt.want, j.Spec); diff != "" {
				t.Errorf("spec but the template (-want +got):\n%s", diff)
			}
			if template.Spec.DNSPolicy != corev1.DNSClusterFirst || template.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
				t.Errorf("template: got dnsPolicy %q, imagePullPolicy %q, want the pod spec defaults", template.Spec.DNSPolicy, template.Spec.Containers[0].ImagePullPolicy)
			}
			if rp := template.Spec.RestartPolicy; rp == corev1.RestartPolicyAlways {
				t.Errorf("template restartPolicy: got %q, want the one given", rp)
			}
			// The job's labels default to the template's.
			if diff := cmp.Diff(tt.wantLabels, j.Labels); diff != "" {
				t.Errorf("job labels (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("own labels kept", func(t *testing.T) {
		obj := decodeDefaulted(t, batchv1.SchemeGroupVersion, `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","labels":{"team":"a"}},"spec":{"template":`+jobTemplateJSON("Never")+`}}`)
		if diff := cmp.Diff(map[string]string{"team": "a"}, obj.(*batchv1.Job).Labels); diff != "" {
			t.Errorf("job labels (-want +got):\n%s", diff)
		}
	})
	t.Run("template without labels", func(t *testing.T) {
		obj := decodeDefaulted(t, batchv1.SchemeGroupVersion, `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x:1"}]}}}}`)
		if got := obj.(*batchv1.Job).Labels; got != nil {
			t.Errorf("job labels: got %v, want none", got)
		}
	})
}

// TestDecodeJobDefaultsAsUpstream covers two details of upstream's
// SetDefaults_Job and its generated defaulter (k8s.io/kubernetes
// pkg/apis/batch/v1): backoffLimit defaults to MaxInt32 when
// backoffLimitPerIndex is set, and each podFailurePolicy
// onPodConditions pattern's status defaults to True
// (SetDefaults_PodFailurePolicyOnPodConditionsPattern).
func TestDecodeJobDefaultsAsUpstream(t *testing.T) {
	t.Run("backoffLimitPerIndex", func(t *testing.T) {
		obj := decodeDefaulted(t, batchv1.SchemeGroupVersion, `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},
			"spec":{"completions":3,"completionMode":"Indexed","backoffLimitPerIndex":1,"template":`+jobTemplateJSON("Never")+`}}`)
		if got := obj.(*batchv1.Job).Spec.BackoffLimit; got == nil || *got != math.MaxInt32 {
			t.Errorf("backoffLimit with backoffLimitPerIndex: got %v, want %d", ptr.Deref(got, -1), math.MaxInt32)
		}
	})
	t.Run("onPodConditions status", func(t *testing.T) {
		obj := decodeDefaulted(t, batchv1.SchemeGroupVersion, `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},
			"spec":{"podFailurePolicy":{"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]}]},"template":`+jobTemplateJSON("Never")+`}}`)
		got := obj.(*batchv1.Job).Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Status
		if got != corev1.ConditionTrue {
			t.Errorf("onPodConditions[0].status: got %q, want True", got)
		}
	})
}

func TestDecodeCronJobDefaults(t *testing.T) {
	obj := decodeDefaulted(t, batchv1.SchemeGroupVersion, `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cj","namespace":"default"},
		"spec":{"schedule":"@hourly","jobTemplate":{"spec":{"template":`+jobTemplateJSON("OnFailure")+`}}}}`)
	cj, ok := obj.(*batchv1.CronJob)
	if !ok {
		t.Fatalf("Decode: got %T, want *batchv1.CronJob", obj)
	}
	template := defaultedTemplate()
	template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	want := batchv1.CronJobSpec{
		Schedule:                   "@hourly",
		ConcurrencyPolicy:          batchv1.AllowConcurrent,
		Suspend:                    ptr.To(false),
		SuccessfulJobsHistoryLimit: ptr.To[int32](3),
		FailedJobsHistoryLimit:     ptr.To[int32](1),
		// Upstream defaults the job template's pod spec, not the job spec
		// (SetDefaults_Job is a Job's, not a JobSpec's).
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template}},
	}
	if diff := cmp.Diff(want, cj.Spec, ignoreServiceLinks); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	explicit := decodeDefaulted(t, batchv1.SchemeGroupVersion, `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cj"},
		"spec":{"schedule":"@hourly","concurrencyPolicy":"Forbid","suspend":true,"successfulJobsHistoryLimit":0,"failedJobsHistoryLimit":0,
		"jobTemplate":{"spec":{"template":`+jobTemplateJSON("Never")+`}}}}`).(*batchv1.CronJob)
	got := []any{explicit.Spec.ConcurrencyPolicy, *explicit.Spec.Suspend, *explicit.Spec.SuccessfulJobsHistoryLimit, *explicit.Spec.FailedJobsHistoryLimit}
	if diff := cmp.Diff([]any{batchv1.ForbidConcurrent, true, int32(0), int32(0)}, got); diff != "" {
		t.Errorf("explicit values (-want +got):\n%s", diff)
	}
}

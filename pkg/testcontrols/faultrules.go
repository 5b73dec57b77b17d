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

package testcontrols

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

// Storage is the REST storage of the fault rules, kept in memory (a
// restore must not bring back a rule deleted since its checkpoint).
func (f *Faults) Storage() map[string]rest.Storage {
	return map[string]rest.Storage{"faultrules": &faultRulesREST{f: f}}
}

type faultRulesREST struct {
	f *Faults
}

var (
	_ rest.Creater              = (*faultRulesREST)(nil)
	_ rest.Getter               = (*faultRulesREST)(nil)
	_ rest.Updater              = (*faultRulesREST)(nil)
	_ rest.Lister               = (*faultRulesREST)(nil)
	_ rest.GracefulDeleter      = (*faultRulesREST)(nil)
	_ rest.Scoper               = (*faultRulesREST)(nil)
	_ rest.SingularNameProvider = (*faultRulesREST)(nil)
	_ rest.TableConvertor       = (*faultRulesREST)(nil)
)

func (r *faultRulesREST) New() runtime.Object     { return &v1alpha1.FaultRule{} }
func (r *faultRulesREST) NewList() runtime.Object { return &v1alpha1.FaultRuleList{} }
func (r *faultRulesREST) Destroy()                {}
func (r *faultRulesREST) NamespaceScoped() bool   { return false }
func (r *faultRulesREST) GetSingularName() string { return "faultrule" }

func (r *faultRulesREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	fr := obj.(*v1alpha1.FaultRule)
	if fr.Name == "" && fr.GenerateName != "" {
		fr.Name = names.SimpleNameGenerator.GenerateName(fr.GenerateName)
	}
	if err := validateRule(fr); err != nil {
		return nil, err
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if len(opts.DryRun) > 0 {
		return nil, apierrors.NewBadRequest("fault rules take no dry run")
	}
	return r.f.add(fr)
}

func (r *faultRulesREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc,
	_ bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	old, err := r.f.get(name)
	if err != nil {
		return nil, false, err
	}
	obj, err := objInfo.UpdatedObject(ctx, old)
	if err != nil {
		return nil, false, err
	}
	fr := obj.(*v1alpha1.FaultRule)
	if err := validateRule(fr); err != nil {
		return nil, false, err
	}
	if fr.Spec.EndWatch != nil != (old.Spec.EndWatch != nil) {
		return nil, false, invalid(name, field.Forbidden(field.NewPath("spec", "endWatch"), "a rule's watches ended when it was made: make a new rule"))
	}
	if updateValidation != nil {
		if err := updateValidation(ctx, obj, old); err != nil {
			return nil, false, err
		}
	}
	if len(opts.DryRun) > 0 {
		return nil, false, apierrors.NewBadRequest("fault rules take no dry run")
	}
	updated, err := r.f.update(fr)
	return updated, false, err
}

func (r *faultRulesREST) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	return r.f.get(name)
}

func (r *faultRulesREST) List(_ context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	list := &v1alpha1.FaultRuleList{Items: []v1alpha1.FaultRule{}}
	for _, fr := range r.f.list() {
		if selected(opts, &fr.ObjectMeta) {
			list.Items = append(list.Items, *fr)
		}
	}
	return list, nil
}

func (r *faultRulesREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	obj, err := r.f.get(name)
	if err != nil {
		return nil, false, err
	}
	return deleteAfter(ctx, obj, deleteValidation, opts, func() (runtime.Object, error) { return r.f.remove(name) })
}

// ConvertToTable is what kubectl get shows of fault rules: what each
// matches, does, and has hit.
func (r *faultRulesREST) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name"},
		{Name: "Verbs", Type: "string"},
		{Name: "Resources", Type: "string"},
		{Name: "Action", Type: "string"},
		{Name: "Hits", Type: "integer"},
		{Name: "Count", Type: "integer"},
		{Name: "Age", Type: "date"},
	}}
	var rules []v1alpha1.FaultRule
	switch o := obj.(type) {
	case *v1alpha1.FaultRule:
		rules = []v1alpha1.FaultRule{*o}
	case *v1alpha1.FaultRuleList:
		rules = o.Items
		table.ResourceVersion, table.Continue = o.ResourceVersion, o.Continue
	default:
		return nil, fmt.Errorf("no table for %T", obj)
	}
	for i := range rules {
		fr := &rules[i]
		verbs := "*"
		if len(fr.Spec.Match.Verbs) > 0 {
			verbs = strings.Join(fr.Spec.Match.Verbs, ",")
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells: []any{fr.Name, verbs, strings.Join(fr.Spec.Match.Resources, ","), action(fr.Spec), fr.Status.Hits, fr.Spec.Count,
				duration.HumanDuration(time.Since(fr.CreationTimestamp.Time))},
			Object: runtime.RawExtension{Object: fr},
		})
	}
	return table, nil
}

// action names what a rule does.
func action(spec v1alpha1.FaultRuleSpec) string {
	switch {
	case spec.Error != nil:
		return fmt.Sprintf("error %d", spec.Error.Code)
	case spec.Delay != nil:
		return fmt.Sprintf("delay %s/%s", spec.Delay.Before.Duration, spec.Delay.After.Duration)
	case spec.EndWatch != nil:
		return "end watches"
	case spec.DropConnection:
		return "drop"
	case spec.WatchCacheLag != nil:
		return "lag " + spec.WatchCacheLag.Duration.String()
	}
	return ""
}

// verbs are the verbs a rule can match.
var verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "*"}

var errBadResource = errors.New(`want resource[.group][/subresource], such as "pods", "deployments.apps/scale", "pods/*" or "*"`)

// validateRule refuses a rule that is malformed or can match nothing, with
// 422 naming each field.
func validateRule(fr *v1alpha1.FaultRule) error {
	var errs field.ErrorList
	if fr.Name == "" {
		return apierrors.NewBadRequest("a fault rule needs metadata.name (or generateName)")
	}
	if msgs := validation.IsDNS1123Subdomain(fr.Name); len(msgs) > 0 {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), fr.Name, strings.Join(msgs, ", ")))
	}
	spec, path := fr.Spec, field.NewPath("spec")
	match := path.Child("match")
	if len(spec.Match.Resources) == 0 {
		errs = append(errs, field.Required(match.Child("resources"), `a rule matches no request without resources ("*" for every one)`))
	}
	for i, s := range spec.Match.Resources {
		p, err := parseResource(s)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(match.Child("resources").Index(i), s, err.Error()))
		case !p.anyResource && p.group == v1alpha1.GroupName:
			errs = append(errs, field.Invalid(match.Child("resources").Index(i), s, "the test controls are never hit"))
		case spec.WatchCacheLag != nil && p.subresource != "":
			errs = append(errs, field.Invalid(match.Child("resources").Index(i), s, "a watch cache serves a resource, not a subresource"))
		}
	}
	for i, v := range spec.Match.Verbs {
		if !slices.Contains(verbs, v) {
			errs = append(errs, field.NotSupported(match.Child("verbs").Index(i), v, verbs))
		}
	}
	if spec.Count < 0 {
		errs = append(errs, field.Invalid(path.Child("count"), spec.Count, "must be 0 (no limit) or more"))
	}
	if p := spec.Probability; p != nil && (*p < 0 || *p > 1) {
		errs = append(errs, field.Invalid(path.Child("probability"), *p, "must be from 0 to 1"))
	}
	return errorsOf(fr.Name, append(errs, validateAction(spec, path)...))
}

func validateAction(spec v1alpha1.FaultRuleSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	actions := 0
	if e := spec.Error; e != nil {
		actions++
		if e.Code < 400 || e.Code > 599 {
			errs = append(errs, field.Invalid(path.Child("error", "code"), e.Code, "must be from 400 to 599"))
		}
		if e.RetryAfterSeconds < 0 {
			errs = append(errs, field.Invalid(path.Child("error", "retryAfterSeconds"), e.RetryAfterSeconds, "must not be negative"))
		}
	}
	if d := spec.Delay; d != nil {
		actions++
		if d.Before.Duration < 0 || d.After.Duration < 0 || d.Before.Duration+d.After.Duration <= 0 {
			errs = append(errs, field.Invalid(path.Child("delay"), fmt.Sprintf("before %s, after %s", d.Before.Duration, d.After.Duration),
				"want a positive before or after, neither negative"))
		}
	}
	if spec.EndWatch != nil {
		actions++
		if v := spec.Match.Verbs; len(v) > 0 && !slices.Contains(v, "watch") && !slices.Contains(v, "*") {
			errs = append(errs, field.Invalid(path.Child("match", "verbs"), v, "a rule that ends watches matches nothing without the verb watch"))
		}
	}
	if spec.DropConnection {
		actions++
	}
	if lag := spec.WatchCacheLag; lag != nil {
		actions++
		if lag.Duration <= 0 {
			errs = append(errs, field.Invalid(path.Child("watchCacheLag"), lag.Duration.String(), "must be positive"))
		}
		m := spec.Match
		if len(m.Verbs)+len(m.Namespaces)+len(m.Names)+len(m.Users)+len(m.Groups) > 0 {
			errs = append(errs, field.Forbidden(path.Child("match"), "a watch cache lag applies to a resource's cache: only resources may be set"))
		}
	}
	if actions != 1 {
		errs = append(errs, field.Invalid(path, fmt.Sprintf("%d actions", actions),
			"want exactly one of error, delay, endWatch, dropConnection and watchCacheLag"))
	}
	return errs
}

func errorsOf(name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: v1alpha1.GroupName, Kind: "FaultRule"}, name, errs)
}

func invalid(name string, err *field.Error) error { return errorsOf(name, field.ErrorList{err}) }

func notFound(name string) error { return apierrors.NewNotFound(FaultRules, name) }

func alreadyExists(name string) error { return apierrors.NewAlreadyExists(FaultRules, name) }

func conflict(name string) error {
	return apierrors.NewConflict(FaultRules, name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

func formatVersion(v int64) string { return strconv.FormatInt(v, 10) }

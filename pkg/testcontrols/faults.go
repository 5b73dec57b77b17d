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
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/utils/clock"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

// FaultRules is how errors name fault rules.
var FaultRules = schema.GroupResource{Group: v1alpha1.GroupName, Resource: "faultrules"}

// Faults holds a server's fault rules and applies them: Handler to its
// requests, WrapStorage to its storages' calls and watches, Followed to what
// its watch caches follow.
type Faults struct {
	clock  clock.Clock
	chance func() float64

	// mu guards every field below.
	mu sync.RWMutex
	// rules are the rules in the order they were made.
	rules []*rule
	// changed is closed, and replaced, whenever the rules change.
	changed chan struct{}
	// watches are the watches open on the server's storages.
	watches map[*openWatch]struct{}
	// version is the last resourceVersion given to a rule.
	version int64
}

// NewFaults returns a server's fault rules, none yet. Delays and lags are
// timed by c (nil: the real clock).
func NewFaults(c clock.Clock) *Faults {
	if c == nil {
		c = clock.RealClock{}
	}
	registerMetrics.Do(func() { legacyregistry.MustRegister(faultHits) })
	return &Faults{clock: c, chance: rand.Float64, changed: make(chan struct{}), watches: map[*openWatch]struct{}{}}
}

// faultHits is each rule's status.hits, in /metrics (shared by the servers
// of one process).
var (
	faultHits = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "miniapiserver",
		Subsystem:      "testcontrol",
		Name:           "fault_hits_total",
		Help:           "Requests (for a watch cache lag, events) hit by each fault rule.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"rule"})
	registerMetrics sync.Once
)

// rule is one version of a FaultRule; an update makes a new one, with the
// same state.
type rule struct {
	obj   *v1alpha1.FaultRule
	match matcher
	state *ruleState
}

// ruleState is what a rule's versions share.
type ruleState struct {
	hits    atomic.Int64
	deleted atomic.Bool
}

// take says whether r hits one more matching request: it draws its
// probability, then counts the hit unless r has hit its count.
func (f *Faults) take(r *rule) bool {
	if p := r.obj.Spec.Probability; p != nil && f.chance() >= *p {
		return false
	}
	for {
		n := r.state.hits.Load()
		if r.state.deleted.Load() || r.obj.Spec.Count > 0 && n >= r.obj.Spec.Count {
			return false
		}
		if r.state.hits.CompareAndSwap(n, n+1) {
			faultHits.WithLabelValues(r.obj.Name).Inc()
			return true
		}
	}
}

// hit returns the rules that hit a request with attributes a, in the
// order they were made, up to the first that ends it (an error or a
// drop): each is counted.
func (f *Faults) hit(a attributes) []*rule {
	f.mu.RLock()
	rules := f.rules
	f.mu.RUnlock()
	var hit []*rule
	for _, r := range rules {
		// EndWatch rules act when made; WatchCacheLag rules on caches.
		if r.obj.Spec.WatchCacheLag == nil && r.obj.Spec.EndWatch == nil && r.match.matches(a) && f.take(r) {
			hit = append(hit, r)
			if r.ends(a.verb) {
				break
			}
		}
	}
	return hit
}

// ends says whether r answers a request of verb in place of the server: a
// drop, or an error but a watch's 410 (an ERROR event in the stream).
func (r *rule) ends(verb string) bool {
	e := r.obj.Spec.Error
	return r.obj.Spec.DropConnection || e != nil && !(e.Code == http.StatusGone && verb == "watch")
}

// add makes rule obj, valid (see validateRule). An EndWatch rule ends the
// matching watches open now.
func (f *Faults) add(obj *v1alpha1.FaultRule) (*v1alpha1.FaultRule, error) {
	m, _ := newMatcher(obj.Spec.Match) // validated
	f.mu.Lock()
	if f.indexLocked(obj.Name) >= 0 {
		f.mu.Unlock()
		return nil, alreadyExists(obj.Name)
	}
	obj = obj.DeepCopy()
	obj.UID = types.UID(uuid.NewUUID())
	obj.CreationTimestamp.Time = f.clock.Now().Truncate(time.Second)
	obj.Generation = 1
	f.version++
	obj.ResourceVersion = formatVersion(f.version)
	r := &rule{obj: obj, match: m, state: &ruleState{}}
	f.rules = append(f.rules, r)
	f.changedLocked()
	var ending []*openWatch
	if obj.Spec.EndWatch != nil {
		for w := range f.watches {
			if m.matches(w.attrs) {
				ending = append(ending, w)
			}
		}
	}
	f.mu.Unlock()
	for _, w := range ending {
		if f.take(r) {
			w.end(obj.Spec.EndWatch.Bookmark)
		}
	}
	return r.object(), nil
}

// update replaces the spec, labels and annotations of rule name (valid);
// its hits stay.
func (f *Faults) update(obj *v1alpha1.FaultRule) (*v1alpha1.FaultRule, error) {
	m, _ := newMatcher(obj.Spec.Match)
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.indexLocked(obj.Name)
	if i < 0 {
		return nil, notFound(obj.Name)
	}
	old := f.rules[i].obj
	if obj.ResourceVersion != "" && obj.ResourceVersion != old.ResourceVersion {
		return nil, conflict(obj.Name)
	}
	updated := old.DeepCopy()
	updated.Labels, updated.Annotations = obj.Labels, obj.Annotations
	obj.Spec.DeepCopyInto(&updated.Spec)
	f.version++
	updated.ResourceVersion = formatVersion(f.version)
	if !reflect.DeepEqual(old.Spec, updated.Spec) {
		updated.Generation++
	}
	rules := slices.Clone(f.rules) // hit reads the old slice without the lock
	rules[i] = &rule{obj: updated, match: m, state: f.rules[i].state}
	f.rules = rules
	f.changedLocked()
	return rules[i].object(), nil
}

// remove deletes rule name, and returns it as it was last.
func (f *Faults) remove(name string) (*v1alpha1.FaultRule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.indexLocked(name)
	if i < 0 {
		return nil, notFound(name)
	}
	r := f.rules[i]
	r.state.deleted.Store(true)
	f.rules = slices.Delete(slices.Clone(f.rules), i, i+1)
	f.changedLocked()
	faultHits.DeleteLabelValues(name)
	return r.object(), nil
}

// get returns rule name; list returns every rule.
func (f *Faults) get(name string) (*v1alpha1.FaultRule, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if i := f.indexLocked(name); i >= 0 {
		return f.rules[i].object(), nil
	}
	return nil, notFound(name)
}

func (f *Faults) list() []*v1alpha1.FaultRule {
	f.mu.RLock()
	defer f.mu.RUnlock()
	objs := make([]*v1alpha1.FaultRule, 0, len(f.rules))
	for _, r := range f.rules {
		objs = append(objs, r.object())
	}
	return objs
}

// indexLocked is where rule name is in f.rules, or -1.
func (f *Faults) indexLocked(name string) int {
	return slices.IndexFunc(f.rules, func(r *rule) bool { return r.obj.Name == name })
}

// object is r with its hits (r.obj never changes: no lock is needed).
func (r *rule) object() *v1alpha1.FaultRule {
	obj := r.obj.DeepCopy()
	obj.Status.Hits = r.state.hits.Load()
	return obj
}

func (f *Faults) changedLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// lag returns how far the watch cache of gr lags behind etcd (the first
// WatchCacheLag rule that matches it), and a channel closed when that may
// have changed.
func (f *Faults) lag(gr schema.GroupResource) (*rule, <-chan struct{}) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	a := attributes{group: gr.Group, resource: gr.Resource}
	for _, r := range f.rules {
		if r.obj.Spec.WatchCacheLag != nil && r.match.matchesResource(a) {
			return r, f.changed
		}
	}
	return nil, f.changed
}

// attributes are what a rule matches of a request.
type attributes struct {
	verb, group, version, resource, subresource, namespace, name string
	user                                                         user.Info
}

// attributesOf returns the attributes of ctx's request; false for a
// request that is not for a resource, and for the test controls' own,
// which no rule hits (a rule could keep itself from being deleted).
func attributesOf(ctx context.Context) (attributes, bool) {
	info, ok := request.RequestInfoFrom(ctx)
	if !ok || !info.IsResourceRequest || info.APIGroup == v1alpha1.GroupName {
		return attributes{}, false
	}
	u, _ := request.UserFrom(ctx)
	return attributes{verb: info.Verb, group: info.APIGroup, version: info.APIVersion, resource: info.Resource, subresource: info.Subresource,
		namespace: info.Namespace, name: info.Name, user: u}, true
}

// matcher is a parsed FaultMatch: nil sets match anything.
type matcher struct {
	verbs, namespaces, names, users, groups map[string]bool
	resources                               []resourcePattern
}

// resourcePattern is one of FaultMatch's resources: anyResource for "*"
// and "*/sub"; subresource "*" for any subresource, and allSubresources
// for a bare "*".
type resourcePattern struct {
	group, resource, subresource string
	anyResource, allSubresources bool
}

func newMatcher(m v1alpha1.FaultMatch) (matcher, error) {
	mt := matcher{verbs: setOf(m.Verbs), namespaces: setOf(m.Namespaces), names: setOf(m.Names), users: setOf(m.Users), groups: setOf(m.Groups)}
	if mt.verbs["*"] {
		mt.verbs = nil
	}
	for _, s := range m.Resources {
		p, err := parseResource(s)
		if err != nil {
			return matcher{}, err
		}
		mt.resources = append(mt.resources, p)
	}
	return mt, nil
}

func setOf(s []string) map[string]bool {
	if len(s) == 0 {
		return nil
	}
	set := make(map[string]bool, len(s))
	for _, v := range s {
		set[v] = true
	}
	return set
}

// parseResource parses "resource[.group][/subresource]".
func parseResource(s string) (resourcePattern, error) {
	res, sub, _ := strings.Cut(s, "/")
	if s == "*" {
		return resourcePattern{anyResource: true, allSubresources: true}, nil
	}
	if res == "" || strings.Contains(sub, "/") || strings.HasPrefix(sub, "*") && sub != "*" || res != "*" && strings.Contains(res, "*") {
		return resourcePattern{}, errBadResource
	}
	if res == "*" {
		return resourcePattern{anyResource: true, subresource: sub}, nil
	}
	resource, group, _ := strings.Cut(res, ".")
	return resourcePattern{resource: resource, group: group, subresource: sub}, nil
}

func (m matcher) matches(a attributes) bool {
	in := func(set map[string]bool, v string) bool { return set == nil || set[v] }
	if !in(m.verbs, a.verb) || !in(m.namespaces, a.namespace) || !in(m.names, a.name) || !m.matchesResource(a) {
		return false
	}
	if m.users == nil && m.groups == nil {
		return true
	}
	if a.user == nil {
		return false
	}
	return m.users[a.user.GetName()] || slices.ContainsFunc(a.user.GetGroups(), func(g string) bool { return m.groups[g] })
}

func (m matcher) matchesResource(a attributes) bool {
	return slices.ContainsFunc(m.resources, func(p resourcePattern) bool {
		if !p.anyResource && (p.resource != a.resource || p.group != a.group) {
			return false
		}
		return p.allSubresources || p.subresource == a.subresource || p.subresource == "*" && a.subresource != ""
	})
}

// Inject makes rule, as a POST of it would: it is refused (422) if
// malformed or if it can match nothing. It returns the rule as made.
func (f *Faults) Inject(rule *v1alpha1.FaultRule) (*v1alpha1.FaultRule, error) {
	if err := validateRule(rule); err != nil {
		return nil, err
	}
	return f.add(rule)
}

// Rule returns rule name as it is now, with its hits.
func (f *Faults) Rule(name string) (*v1alpha1.FaultRule, error) { return f.get(name) }

// Remove deletes rule name.
func (f *Faults) Remove(name string) error {
	_, err := f.remove(name)
	return err
}

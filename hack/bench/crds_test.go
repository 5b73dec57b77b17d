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

package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

var (
	crds = flag.Int("crds", 20, "generated CustomResourceDefinitions installed in StartToReady/data=crds and ListCustomResources")
	crs  = flag.Int("crs", 10000, "custom resources (~1 KiB each) of one of them that ListCustomResources lists")
)

// benchCRDStarts is StartToReady/data=crds: miniapiserver on a fresh data
// dir installing -crds generated CRDs with --crds, until its ready line
// (which waits until they are served); kube-apiserver on an etcd already
// holding them, from just before its start until every one is in
// discovery (ready-ns/op: until its /readyz answered 200).
func benchCRDStarts(b *testing.B) {
	onEach(b, func(b *testing.B, kind driver.Kind) {
		if kind == driver.Mini {
			benchStarts(b, kind, func(i int) string { return env.Dir(fmt.Sprintf("crds-%d", i)) }, true, crdArgs(b, kind)...)
			return
		}
		benchAfterStart(b, kind, crdFixture(b, kind, 0), nil, false, func(ctx context.Context, s *driver.Server) error {
			return awaitCRDs(ctx, s, *crds)
		})
	})
}

// BenchmarkListCustomResources lists the -crs custom resources of the
// first of -crds generated CRDs (a structural schema with defaults, a CEL
// rule, the status subresource), in JSON (custom resources have no
// protobuf), RV unset, in one request and paged by 500, with the watch
// cache (cache=on) and without it (cache=off). The figures are
// BenchmarkList's; the verified listing checks every object: each once,
// its spec.schedule defaulted. after=start, miniapiserver only, is the
// first LIST of a server just started on the data dir, which creates the
// resource's storage and, with the watch cache, fills it.
func BenchmarkListCustomResources(b *testing.B) {
	crd := driver.BenchCRD(0)
	for _, cache := range []string{"on", "off"} {
		args := []string{"--watch-cache=" + strconv.FormatBool(cache == "on")}
		b.Run("cache="+cache, func(b *testing.B) {
			first := driver.ListVariant{Accept: driver.AcceptJSON, Path: crd.ListPath()}
			b.Run(listName(first)+"/after=start", func(b *testing.B) {
				b.Run("server=mini", func(b *testing.B) {
					benchAfterStart(b, driver.Mini, crdFixture(b, driver.Mini, *crs), append(crdArgs(b, driver.Mini), args...), true, func(ctx context.Context, s *driver.Server) error {
						_, err := driver.ListAll(ctx, s.Client().CoreV1().RESTClient(), first, nil)
						return err
					})
				})
			})
			servers := map[driver.Kind]*driver.Server{}
			for _, kind := range kinds() {
				servers[kind] = start(b, kind, crdFixture(b, kind, *crs), append(crdArgs(b, kind), args...)...)
				if err := awaitCRDs(b.Context(), servers[kind], 1); err != nil {
					b.Fatal(err)
				}
			}
			for _, limit := range []int{0, 500} {
				v := driver.ListVariant{Accept: driver.AcceptJSON, Limit: limit, Path: crd.ListPath()}
				b.Run(listName(v), func(b *testing.B) {
					onEach(b, func(b *testing.B, kind driver.Kind) {
						benchListing(b, servers[kind], v, *crs, crd.Plural, verifiedCustomResources(crd))
					})
				})
			}
		})
	}
}

// benchAfterStart starts a server of kind on dir with args and runs do on
// it, b.N times, stopping it after each. ns/op is until do returned: from
// just before the start or, fromReady, from when the server was ready;
// ready-ns/op is the start's Ready, stop-ns/op its Stopped.
func benchAfterStart(b *testing.B, kind driver.Kind, dir string, args []string, fromReady bool, do func(context.Context, *driver.Server) error) {
	totals := map[string]float64{}
	for b.Loop() {
		began := time.Now()
		s, err := env.Start(b.Context(), kind, dir, args...)
		if err != nil {
			b.Fatal(err)
		}
		if fromReady {
			began = time.Now()
		}
		err = do(b.Context(), s)
		totals["ns/op"] += float64(time.Since(began))
		if err := errors.Join(err, s.Stop()); err != nil {
			b.Fatal(err)
		}
		totals["ready-ns/op"] += float64(s.Ready)
		totals["stop-ns/op"] += float64(s.Stopped)
	}
	reportMeans(b, totals)
}

// crdArgs are the flags that install the -crds CRDs on start: miniapiserver's
// --crds with their manifests (written under the env's root), none for
// kube-apiserver, which keeps them in its etcd.
func crdArgs(b *testing.B, kind driver.Kind) []string {
	if kind != driver.Mini {
		return nil
	}
	dir := env.Dir(fmt.Sprintf("crd-manifests-%d", *crds))
	if err := driver.WriteCRDManifests(dir, *crds); err != nil {
		b.Fatal(err)
	}
	return []string{"--crds", dir}
}

// crdFixture is the data dir of kind holding the -crds CRDs (created
// through the API on kube-apiserver) and n custom resources of the first.
func crdFixture(b *testing.B, kind driver.Kind, n int) string {
	return fixture(b, kind, fmt.Sprintf("crds-%d-crs-%d", *crds, n), crdArgs(b, kind), func(ctx context.Context, s *driver.Server) error {
		if kind == driver.Upstream {
			client, err := apiextensionsclient.NewForConfig(s.RESTConfig())
			if err != nil {
				return err
			}
			for i := range *crds {
				if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, driver.CRDManifest(driver.BenchCRD(i)), metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("creating CRD %s: %w", driver.BenchCRD(i).Kind, err)
				}
			}
		}
		if err := awaitCRDs(ctx, s, *crds); err != nil {
			return err
		}
		client, err := dynamic.NewForConfig(s.RESTConfig())
		if err != nil {
			return err
		}
		crd := driver.BenchCRD(0)
		resource := client.Resource(crd.Resource()).Namespace(driver.Namespace)
		return driver.ForEach(ctx, n, workers, func(ctx context.Context, i int) error {
			if _, err := resource.Create(ctx, driver.CustomResource(crd, i), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating %s %s: %w", crd.Kind, driver.CustomResourceName(i), err)
			}
			return nil
		})
	})
}

// awaitCRDs polls discovery every 10 ms until the resources of the first n
// generated CRDs are in it, for at most 2 minutes.
func awaitCRDs(ctx context.Context, s *driver.Server, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for i := 0; i < n; {
		crd := driver.BenchCRD(i)
		list, err := s.Client().Discovery().ServerResourcesForGroupVersion(crd.Group + "/" + driver.CRDVersion)
		if err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == crd.Plural }) {
			i++
			continue
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("%s not in discovery: %w (last error: %v)", crd.Resource(), ctx.Err(), err)
		}
	}
	return nil
}

// verifiedCustomResources is a verifier of crd's custom resources: every
// page a list of its kind within the limit, with the continue token
// driver.ContinueToken extracts; every object once, with spec.schedule
// defaulted.
func verifiedCustomResources(crd driver.CRD) verifier {
	return func(ctx context.Context, rc rest.Interface, v driver.ListVariant, want int) (driver.Listing, error) {
		names := make(map[string]bool, want)
		l, err := driver.ListAll(ctx, rc, v, func(body []byte) error {
			var list struct {
				Kind     string          `json:"kind"`
				Metadata metav1.ListMeta `json:"metadata"`
				Items    []struct {
					Metadata struct{ Name string }
					Spec     struct{ Schedule string }
				}
			}
			if err := json.Unmarshal(body, &list); err != nil {
				return fmt.Errorf("decoding the JSON list: %w", err)
			}
			token, err := driver.ContinueToken(body, v.Accept)
			switch {
			case list.Kind != crd.Kind+"List":
				return fmt.Errorf("got a list of kind %q, want %sList", list.Kind, crd.Kind)
			case v.Limit > 0 && len(list.Items) > v.Limit:
				return fmt.Errorf("got %d items with limit=%d", len(list.Items), v.Limit)
			case err != nil:
				return err
			case token != list.Metadata.Continue:
				return fmt.Errorf("extracted continue token %q, decoded %q", token, list.Metadata.Continue)
			case v.Limit == 0 && token != "":
				return fmt.Errorf("got continue token %q without a limit", token)
			}
			for _, item := range list.Items {
				switch name := item.Metadata.Name; {
				case names[name]:
					return fmt.Errorf("%s %s listed twice", crd.Kind, name)
				case item.Spec.Schedule != driver.DefaultSchedule:
					return fmt.Errorf("%s %s has spec.schedule %q, want the default %q", crd.Kind, name, item.Spec.Schedule, driver.DefaultSchedule)
				}
				names[item.Metadata.Name] = true
			}
			return nil
		})
		if err == nil && len(names) != want {
			err = fmt.Errorf("got %d %s in %d page(s), want exactly %d", len(names), crd.Plural, l.Pages, want)
		}
		return l, err
	}
}

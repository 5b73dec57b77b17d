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
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
	"github.com/miniapiserver/miniapiserver/pkg/envtest"
)

var envtests = flag.Int("envtests", 8, "controller tests BenchmarkEnvtestSuite runs at once, each with an environment of its own")

// environment is what both envtests have.
type environment interface {
	Start() (*rest.Config, error)
	Stop() error
}

// BenchmarkEnvtestSuite runs an operator's suite of -envtests controller
// tests at once (controllerTest), each with an environment of its own: on
// pkg/envtest (server=mini); on controller-runtime's envtest running the
// -server binary's envtest assets, its kube-apiserver and etcd personas
// (server=assets, in mini's process); and on controller-runtime's envtest
// running the -upstream kube-apiserver and etcd (server=upstream). ns/op is
// the suite's wall time; start-ns, first-create-ns and stop-ns are the
// medians over its tests, max-...-ns the slowest.
func BenchmarkEnvtestSuite(b *testing.B) {
	crds := b.TempDir()
	if err := driver.WriteCRDManifests(crds, 1); err != nil {
		b.Fatal(err)
	}
	log.SetLogger(logr.Discard())
	onEach(b, func(b *testing.B, kind driver.Kind) {
		if kind == driver.Upstream {
			envtestSuite(b, func() environment {
				return &crenvtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true, BinaryAssetsDirectory: *upstreamDir,
					ControlPlaneStartTimeout: stockStartTimeout}
			})
			return
		}
		envtestSuite(b, func() environment {
			return &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true}
		})
	})
	if *onlyKind == "" || *onlyKind == string(driver.Mini) {
		assets, err := driver.EnvtestAssets(*serverBin, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.Run("server=assets", func(b *testing.B) {
			settle(b)
			envtestSuite(b, func() environment {
				return &crenvtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true, BinaryAssetsDirectory: assets,
					ControlPlaneStartTimeout: stockStartTimeout}
			})
		})
	}
}

// stockStartTimeout is how long controller-runtime's envtest may wait for
// each of its processes: -envtests kube-apiservers starting at once on two
// cores take about its default (20s), and it gives up after five tries.
const stockStartTimeout = 2 * time.Minute

// envtestSuite runs the suite b.N times, each test on an environment of
// newEnv's, and reports the medians and maxima of its steps.
func envtestSuite(b *testing.B, newEnv func() environment) {
	var (
		mu    sync.Mutex
		times = map[string][]time.Duration{}
	)
	for b.Loop() {
		var wg sync.WaitGroup
		errs := make([]error, *envtests)
		for i := range *envtests {
			wg.Go(func() {
				start, create, stop, err := controllerTest(b.Context(), newEnv())
				errs[i] = err
				mu.Lock()
				defer mu.Unlock()
				times["start"] = append(times["start"], start)
				times["first-create"] = append(times["first-create"], create)
				times["stop"] = append(times["stop"], stop)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
	}
	for name, xs := range times {
		slices.Sort(xs)
		b.ReportMetric(float64(xs[len(xs)/2]+xs[(len(xs)-1)/2])/2, name+"-ns")
		b.ReportMetric(float64(xs[len(xs)-1]), "max-"+name+"-ns")
	}
}

// controllerTest is one controller test, as an operator writes it: start
// the environment (the CRD installed), start a manager whose reconciler
// gives each custom resource a Deployment it owns, create one, wait for
// its Deployment, stop. It returns how long the start, the create and the
// stop took.
func controllerTest(ctx context.Context, env environment) (start, create, stop time.Duration, err error) {
	began := time.Now()
	rc, err := env.Start()
	if err != nil {
		return 0, 0, 0, err
	}
	start = time.Since(began)
	defer func() {
		began := time.Now()
		err = errors.Join(err, env.Stop())
		stop = time.Since(began)
	}()
	crd := driver.BenchCRD(0)
	widget := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(crd.Resource().GroupVersion().WithKind(crd.Kind))
		return u
	}
	mgr, err := ctrl.NewManager(rc, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return start, 0, 0, err
	}
	reconciler := func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		w := widget()
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, w); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		labels := map[string]string{"widget": w.GetName()}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.GetNamespace(), Name: w.GetName()},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
				},
			},
		}
		if err := controllerutil.SetControllerReference(w, d, mgr.GetScheme()); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, client.IgnoreAlreadyExists(mgr.GetClient().Create(ctx, d))
	}
	if err := ctrl.NewControllerManagedBy(mgr).For(widget()).Named("widget").
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true)}). // one per test in this process
		Complete(reconcile(reconciler)); err != nil {
		return start, 0, 0, err
	}
	mgrCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	defer func() {
		cancel()
		err = errors.Join(err, <-mgrDone)
	}()
	c, err := client.New(rc, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return start, 0, 0, err
	}
	w := driver.CustomResource(crd, 0)
	w.SetNamespace(driver.Namespace)
	began = time.Now()
	if err := c.Create(ctx, w); err != nil {
		return start, 0, 0, fmt.Errorf("creating a %s: %w", crd.Kind, err)
	}
	create = time.Since(began)
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, types.NamespacedName{Namespace: w.GetNamespace(), Name: w.GetName()}, &appsv1.Deployment{})
		return err == nil, client.IgnoreNotFound(err)
	})
	if err != nil {
		return start, create, 0, fmt.Errorf("waiting for the Deployment: %w", err)
	}
	return start, create, 0, nil
}

// reconcile is a reconcile function as a reconciler.
type reconcile func(context.Context, ctrl.Request) (ctrl.Result, error)

func (f reconcile) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return f(ctx, req)
}

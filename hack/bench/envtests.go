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

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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

	"github.com/miniapiserver/miniapiserver/pkg/envtest"
)

// envtestsResult is the envtests section: an operator's suite of
// cfg.envtests controller tests run in parallel, each with an environment
// of its own, on pkg/envtest and, with -upstream, on controller-runtime's
// envtest running kube-apiserver and etcd from the -upstream dir.
type envtestsResult struct {
	ours     envtestsRun
	upstream *envtestsRun
}

// envtestsRun is one suite: its wall time, and per test the environment's
// start, the first custom resource create after its CRD is installed, and
// the environment's stop.
type envtestsRun struct {
	wall                        time.Duration
	starts, firstCreates, stops []time.Duration
}

// environment is what both envtests have.
type environment interface {
	Start() (*rest.Config, error)
	Stop() error
}

func benchEnvtests(ctx context.Context, cfg config, root string, ub *upstreamBench) (res envtestsResult, err error) {
	crds := filepath.Join(root, "envtests-crds")
	defer func() { err = errors.Join(err, os.RemoveAll(crds)) }()
	if err := writeCRDManifests(crds, 1); err != nil {
		return envtestsResult{}, err
	}
	log.SetLogger(logr.Discard())
	res.ours, err = envtestSuite(ctx, cfg, func() environment {
		return &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true}
	})
	if err != nil {
		return envtestsResult{}, fmt.Errorf("envtests: %w", err)
	}
	progressEnvtests("pkg/envtest", res.ours)
	if ub == nil {
		return res, nil
	}
	up, err := envtestSuite(ctx, cfg, func() environment {
		return &crenvtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true, BinaryAssetsDirectory: filepath.Dir(ub.bins.apiserver)}
	})
	if err != nil {
		return envtestsResult{}, fmt.Errorf("envtests (controller-runtime's envtest): %w", err)
	}
	progressEnvtests("controller-runtime's envtest", up)
	res.upstream = &up
	return res, nil
}

func progressEnvtests(name string, r envtestsRun) {
	progress("envtests (%s): %d tests in %s; medians: start %s, first custom resource create %s, stop %s", name, len(r.starts),
		fmtDuration(r.wall), fmtDuration(median(r.starts)), fmtDuration(median(r.firstCreates)), fmtDuration(median(r.stops)))
}

// envtestSuite runs cfg.envtests tests at once, each on an environment of
// its own.
func envtestSuite(ctx context.Context, cfg config, newEnv func() environment) (envtestsRun, error) {
	var (
		mu   sync.Mutex
		run  envtestsRun
		errs []error
		wg   sync.WaitGroup
	)
	began := time.Now()
	for i := range cfg.envtests {
		wg.Go(func() {
			start, create, stop, err := controllerTest(ctx, newEnv())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("test %d: %w", i, err))
				return
			}
			run.starts, run.firstCreates, run.stops = append(run.starts, start), append(run.firstCreates, create), append(run.stops, stop)
		})
	}
	wg.Wait()
	run.wall = time.Since(began)
	return run, errors.Join(errs...)
}

// controllerTest is one controller test, as an operator writes it: start
// the environment (the CRD installed), start a manager whose reconciler
// gives each Widget a Deployment it owns, create a Widget, wait for its
// Deployment, stop. It returns how long the start, the Widget's create and
// the stop took.
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
	crd := benchCRD(0)
	widget := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(crd.resource().GroupVersion().WithKind(crd.kind))
		return u
	}
	mgr, err := ctrl.NewManager(rc, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return 0, 0, 0, err
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
		Complete(ctrlFunc(reconciler)); err != nil {
		return 0, 0, 0, err
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
		return 0, 0, 0, err
	}
	w := customResource(crd, 0)
	w.SetNamespace(namespace)
	began = time.Now()
	if err := c.Create(ctx, w); err != nil {
		return 0, 0, 0, fmt.Errorf("creating a %s: %w", crd.kind, err)
	}
	create = time.Since(began)
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, types.NamespacedName{Namespace: w.GetNamespace(), Name: w.GetName()}, &appsv1.Deployment{})
		return err == nil, client.IgnoreNotFound(err)
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("waiting for the Deployment: %w", err)
	}
	return start, create, 0, nil
}

// ctrlFunc is a reconcile function as a reconciler.
type ctrlFunc func(context.Context, ctrl.Request) (ctrl.Result, error)

func (f ctrlFunc) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return f(ctx, req)
}

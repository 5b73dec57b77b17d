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

package envtest_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	batchv1 "github.com/miniapiserver/miniapiserver/test/envtest/api/v1"
	batchv2 "github.com/miniapiserver/miniapiserver/test/envtest/api/v2"
	"github.com/miniapiserver/miniapiserver/test/envtest/internal/controller"
	cronjobwebhook "github.com/miniapiserver/miniapiserver/test/envtest/internal/webhook"
)

// assetsEnv names the directory holding kube-apiserver, etcd and kubectl.
const assetsEnv = "KUBEBUILDER_ASSETS"

var (
	ctx       context.Context
	cancel    context.CancelFunc
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	scheme    = runtime.NewScheme()
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(batchv1.AddToScheme(scheme))
	utilruntime.Must(batchv2.AddToScheme(scheme))
}

// TestEnvtest runs the suite; without KUBEBUILDER_ASSETS it fails rather
// than let envtest look in /usr/local/kubebuilder/bin.
func TestEnvtest(t *testing.T) {
	if os.Getenv(assetsEnv) == "" {
		t.Fatalf("%s is unset: point it at a directory with kube-apiserver, etcd and kubectl (run.sh does)", assetsEnv)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Envtest Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.TODO())

	By("bootstrapping test environment from " + os.Getenv(assetsEnv))
	testEnv = &envtest.Environment{
		Scheme:                scheme,
		CRDDirectoryPaths:     []string{filepath.Join("config", "crd")},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join("config", "webhook")},
		},
	}
	attachControlPlaneOutput(testEnv)
	if os.Getenv(testControlsEnv) != "" {
		// miniapiserver's test controls, asked for as kube-apiserver asks
		// for an API group (see checkpoint_test.go).
		testEnv.ControlPlane.GetAPIServer().Configure().Append("runtime-config", "testcontrol.miniapiserver.io/v1alpha1=true")
	}

	var err error
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	Expect(cfg).NotTo(BeNil())

	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())

	By("starting the manager: webhook server and CronJob reconciler")
	wio := &testEnv.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    wio.LocalServingHost,
			Port:    wio.LocalServingPort,
			CertDir: wio.LocalServingCertDir,
		}),
		LeaderElection: false,
		Metrics:        metricsserver.Options{BindAddress: "0"},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(cronjobwebhook.SetupCronJobWebhookWithManager(mgr)).To(Succeed())
	Expect((&controller.CronJobReconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("cronjob-controller"),
	}).SetupWithManager(mgr)).To(Succeed())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()

	By("waiting for the webhook server")
	dialer := &net.Dialer{Timeout: time.Second}
	addr := net.JoinHostPort(wio.LocalServingHost, fmt.Sprint(wio.LocalServingPort))
	Eventually(func() error {
		conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return err
		}
		return conn.Close()
	}).Should(Succeed())
})

var _ = AfterSuite(func() {
	By("tearing down the test environment")
	if cancel != nil {
		cancel()
	}
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})

// attachControlPlaneOutput sends the API server's and etcd's output to
// files in $ENVTEST_LOG_DIR, when set, and closes them after the suite.
func attachControlPlaneOutput(env *envtest.Environment) {
	dir := os.Getenv("ENVTEST_LOG_DIR")
	if dir == "" {
		return
	}
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	open := func(name string) io.Writer {
		f, err := os.Create(filepath.Join(dir, name))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(f.Close)
		return f
	}
	apiServer := env.ControlPlane.GetAPIServer()
	apiServer.Out = open("kube-apiserver.out.log")
	apiServer.Err = open("kube-apiserver.err.log")
	env.ControlPlane.Etcd = &envtest.Etcd{Out: open("etcd.out.log"), Err: open("etcd.err.log")}
	GinkgoWriter.Printf("control plane output in %s\n", dir)
}

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
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	testcontrol "github.com/miniapiserver/miniapiserver/client"
	batchv1 "github.com/miniapiserver/miniapiserver/test/envtest/api/v1"
)

// testControlsEnv, set by run.sh when the assets are miniapiserver's,
// makes the suite ask for the test controls (kube-apiserver has none).
const testControlsEnv = "MINIAPISERVER_TEST_CONTROLS"

var _ = Describe("Checkpoints between specs", Ordered, func() {
	var tc *testcontrol.Client
	BeforeAll(func() {
		if os.Getenv(testControlsEnv) == "" {
			Skip(testControlsEnv + " is unset: the assets are kube-apiserver's, which has no test controls")
		}
		hc, err := rest.HTTPClientFor(cfg)
		Expect(err).NotTo(HaveOccurred())
		tc = testcontrol.New(cfg.Host, hc)
	})
	BeforeEach(func() {
		_, err := tc.Checkpoint(ctx, "spec")
		Expect(err).NotTo(HaveOccurred())
	})
	AfterEach(func() {
		status, err := tc.Restore(ctx, "spec")
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("restore: %+v\n", status)
		Expect(tc.DeleteCheckpoint(ctx, "spec")).To(Succeed())
	})

	It("makes a namespace, a CronJob and, by the reconciler, its Deployment", func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "reset"}})).To(Succeed())
		cj := &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: "reset", Name: "nightly"},
			Spec:       batchv1.CronJobSpec{Schedule: "0 3 * * *", Image: "busybox:1.36", Replicas: int32Ptr(1)},
		}
		Expect(k8sClient.Create(ctx, cj)).To(Succeed())
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: "reset", Name: "nightly"}, &appsv1.Deployment{})
		}).Should(Succeed())
	})

	It("finds none of what the spec before made", func() {
		key := types.NamespacedName{Namespace: "reset", Name: "nightly"}
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Name: "reset"}, &corev1.Namespace{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &batchv1.CronJob{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &appsv1.Deployment{}))).To(BeTrue())
	})

	It("converges past server errors injected on the reconciler's creates", func() {
		remove, err := tc.InjectFault(ctx, "creates-fail", testcontrol.FaultRule{
			Match: testcontrol.FaultMatch{Verbs: []string{"create"}, Resources: []string{"deployments.apps"}, Namespaces: []string{"faulty"}},
			Count: 2, Error: &testcontrol.FaultError{Code: 500},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(remove)
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "faulty"}})).To(Succeed())
		cj := &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: "faulty", Name: "nightly"},
			Spec:       batchv1.CronJobSpec{Schedule: "0 3 * * *", Image: "busybox:1.36", Replicas: int32Ptr(1)},
		}
		Expect(k8sClient.Create(ctx, cj)).To(Succeed())
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: "faulty", Name: "nightly"}, &appsv1.Deployment{})
		}).Should(Succeed())
		Expect(tc.FaultHits(ctx, "creates-fail")).To(Equal(int64(2)))
	})
})

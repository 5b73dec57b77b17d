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
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	batchv1 "github.com/miniapiserver/miniapiserver/test/envtest/api/v1"
)

// kubectl runs the assets directory's kubectl with the admin kubeconfig
// envtest made, and returns its standard output.
func kubectl(args ...string) string {
	GinkgoHelper()
	return kubectlWithInput("", args...)
}

// kubectlWithInput is kubectl with stdin as the standard input.
func kubectlWithInput(stdin string, args ...string) string {
	GinkgoHelper()
	kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(os.WriteFile(kubeconfig, testEnv.KubeConfig, 0o600)).To(Succeed())
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(os.Getenv(assetsEnv), "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	Expect(cmd.Run()).To(Succeed(), "kubectl %s: %s", strings.Join(args, " "), stderr.String())
	return stdout.String()
}

var _ = Describe("kubectl from the assets directory", func() {
	It("is there and executable", func() {
		fi, err := os.Stat(filepath.Join(os.Getenv(assetsEnv), "kubectl"))
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().IsRegular()).To(BeTrue())
		Expect(fi.Mode() & 0o111).NotTo(BeZero())
	})

	It("gets the default namespace", func() {
		Expect(kubectl("get", "namespace", "default", "-o", "name")).To(Equal("namespace/default\n"))
	})

	It("gets a CronJob at either version, and answers can-i", func() {
		ns := newNamespace("kubectl")
		Expect(k8sClient.Create(ctx, &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shell"},
			Spec:       batchv1.CronJobSpec{Schedule: "15 * * * *", Image: "alpine"},
		})).To(Succeed())
		Expect(kubectl("get", "cronjobs.v1.batch.example.com", "shell", "-n", ns, "-o", "jsonpath={.spec.schedule} {.spec.image}")).To(Equal("15 * * * * alpine:latest"))
		Expect(kubectl("get", "cronjobs.v2.batch.example.com", "shell", "-n", ns, "-o", "jsonpath={.spec.cronSpec} {.spec.image}")).To(Equal("15 * * * * alpine:latest"))
		Expect(kubectl("auth", "can-i", "create", "cronjobs.batch.example.com", "-n", ns)).To(Equal("yes\n"))
	})

	It("server-side applies a CronJob as v2, through both webhooks", func() {
		ns := newNamespace("kubectl-apply")
		manifest := `apiVersion: batch.example.com/v2
kind: CronJob
metadata:
  name: applied
  namespace: ` + ns + `
spec:
  cronSpec: "45 23 * * *"
  image: redis
`
		Expect(kubectlWithInput(manifest, "apply", "--server-side", "--field-manager=envtest", "-f", "-")).To(Equal("cronjob.batch.example.com/applied serverside-applied\n"))
		cj := &batchv1.CronJob{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "applied"}, cj)).To(Succeed())
		Expect(cj.Spec.Schedule).To(Equal("45 23 * * *"))
		Expect(cj.Spec.Image).To(Equal("redis:latest"))

		By("applying it again, changed")
		Expect(kubectlWithInput(strings.Replace(manifest, "45 23", "50 23", 1), "apply", "--server-side", "--field-manager=envtest", "-f", "-")).To(Equal("cronjob.batch.example.com/applied serverside-applied\n"))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "applied"}, cj)).To(Succeed())
		Expect(cj.Spec.Schedule).To(Equal("50 23 * * *"))
		Expect(cj.ManagedFields).To(ContainElement(HaveField("Manager", "envtest")))
	})

	It("runs as a user added with AddUser", func() {
		user, err := testEnv.AddUser(envtest.User{Name: "bob", Groups: []string{"example:ops"}}, cfg)
		Expect(err).NotTo(HaveOccurred())
		k, err := user.Kubectl()
		Expect(err).NotTo(HaveOccurred())
		stdout, stderr, err := k.Run("auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
		errOut, _ := io.ReadAll(stderr)
		Expect(err).NotTo(HaveOccurred(), "kubectl auth whoami: %s", errOut)
		out, err := io.ReadAll(stdout)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(out)).To(Equal(`bob ["example:ops","system:authenticated"]`))
	})
})

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

package kubectl

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

const configMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  labels:
    app: demo
data:
  greeting: hello
`

// guaranteedPodYAML is a pod of the Guaranteed QoS class.
const guaranteedPodYAML = `apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers:
  - name: app
    image: nginx:1.27
    resources:
      limits: {cpu: 100m, memory: 64Mi}
`

func TestKubectl(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)

	t.Run("api-resources", func(t *testing.T) {
		out := framework.Kubectl(t, s, "", "api-resources", "--no-headers")
		for _, want := range []string{"configmaps", "events", "namespaces", "pods", "podtemplates", "secrets", "serviceaccounts", "leases"} {
			if !framework.ContainsField(out, want) {
				t.Errorf("api-resources: %q missing from\n%s", want, out)
			}
		}
	})

	t.Run("create, apply, get", func(t *testing.T) {
		framework.Kubectl(t, s, configMapYAML, "create", "-f", "-")
		applied := strings.Replace(configMapYAML, "hello", "bonjour", 1)
		if out := framework.Kubectl(t, s, applied, "apply", "-f", "-"); !strings.Contains(out, "configmap/demo configured") {
			t.Errorf("apply: got %q", out)
		}
		out := framework.Kubectl(t, s, "", "get", "configmaps")
		if !strings.Contains(out, "NAME") || !strings.Contains(out, "DATA") || !strings.Contains(out, "AGE") || !framework.ContainsField(out, "demo") {
			t.Errorf("get table: got\n%s", out)
		}
		out = framework.Kubectl(t, s, "", "get", "configmap", "demo", "-o", "yaml")
		if !strings.Contains(out, "greeting: bonjour") || !strings.Contains(out, "resourceVersion:") {
			t.Errorf("get -o yaml: got\n%s", out)
		}
	})

	t.Run("apply --server-side", func(t *testing.T) {
		ssa := `apiVersion: v1
kind: ConfigMap
metadata:
  name: ssa
data:
  a: "1"
`
		framework.Kubectl(t, s, ssa, "apply", "--server-side", "-f", "-")
		cm, err := client.CoreV1().ConfigMaps("default").Get(t.Context(), "ssa", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply || cm.ManagedFields[0].Manager != "kubectl" {
			t.Errorf("got managedFields %+v, want one Apply entry by kubectl", cm.ManagedFields)
		}
		// A conflicting apply by another manager is refused without --force-conflicts.
		other := strings.Replace(ssa, `"1"`, `"2"`, 1)
		if _, errOut, err := framework.RunKubectl(t, s, other, "apply", "--server-side", "--field-manager=other", "-f", "-"); err == nil || !strings.Contains(errOut, "conflict") {
			t.Errorf("conflicting apply: got err %v, stderr %q; want a conflict", err, errOut)
		}
		framework.Kubectl(t, s, other, "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-")
		if out := framework.Kubectl(t, s, "", "get", "cm", "ssa", "-o", "jsonpath={.data.a}"); out != "2" {
			t.Errorf("after forced apply: got data.a=%q, want 2", out)
		}
	})

	t.Run("patch", func(t *testing.T) {
		framework.Kubectl(t, s, "", "patch", "configmap", "demo", "--type=merge", "-p", `{"data":{"m":"merge"}}`)
		framework.Kubectl(t, s, "", "patch", "configmap", "demo", "--type=json", "-p", `[{"op":"add","path":"/data/j","value":"json"}]`)
		framework.Kubectl(t, s, "", "patch", "configmap", "demo", "-p", `{"data":{"s":"strategic"}}`)
		out := framework.Kubectl(t, s, "", "get", "cm", "demo", "-o", "jsonpath={.data.m},{.data.j},{.data.s}")
		if out != "merge,json,strategic" {
			t.Errorf("after patches: got %q", out)
		}
		framework.Kubectl(t, s, "", "run", "web", "--image=nginx:1.27")
		// Strategic merge on a list keyed by name: change one container's image.
		framework.Kubectl(t, s, "", "patch", "pod", "web", "-p", `{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}`)
		if out := framework.Kubectl(t, s, "", "get", "pod", "web", "-o", "jsonpath={.spec.containers[*].image}"); out != "nginx:1.28" {
			t.Errorf("strategic patch of containers: got images %q", out)
		}
		if out := framework.Kubectl(t, s, "", "get", "pods"); !strings.Contains(out, "STATUS") || !strings.Contains(out, "Pending") {
			t.Errorf("get pods: got\n%s", out)
		}
	})

	t.Run("debug and resize", func(t *testing.T) {
		framework.Kubectl(t, s, guaranteedPodYAML, "create", "-f", "-")
		// kubectl debug adds an ephemeral container through pods/ephemeralcontainers.
		framework.Kubectl(t, s, "", "debug", "app", "--image=busybox:1.36", "-c", "debugger", "--target=app")
		out := framework.Kubectl(t, s, "", "get", "pod", "app", "-o", "jsonpath={.spec.ephemeralContainers[*].name}/{.spec.ephemeralContainers[*].targetContainerName}/{.metadata.generation}")
		if out != "debugger/app/2" {
			t.Errorf("after kubectl debug: got ephemeral container/target/generation %q, want debugger/app/2", out)
		}
		if _, errOut, err := framework.RunKubectl(t, s, "", "debug", "app", "--image=busybox:1.36", "-c", "app"); err == nil || !strings.Contains(errOut, `spec.ephemeralContainers[1].name: Duplicate value: "app"`) {
			t.Errorf("kubectl debug with a container's name: got err %v, stderr %q; want the Duplicate value", err, errOut)
		}

		// pods/resize changes cpu and memory; the QoS class may not change.
		framework.Kubectl(t, s, "", "patch", "pod", "app", "--subresource=resize",
			"-p", `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"},"limits":{"cpu":"200m"}}}]}}`)
		if out := framework.Kubectl(t, s, "", "get", "pod", "app", "-o", "jsonpath={.spec.containers[0].resources.limits.cpu}/{.metadata.generation}"); out != "200m/3" {
			t.Errorf("after the resize: got cpu limit/generation %q, want 200m/3", out)
		}
		_, errOut, err := framework.RunKubectl(t, s, "", "patch", "pod", "app", "--subresource=resize",
			"-p", `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"1"}}}]}}`)
		want := `The Pod "app" is invalid: spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing`
		if err == nil || !strings.Contains(errOut, want) {
			t.Errorf("a resize to Burstable: got err %v, stderr %q; want %q", err, errOut, want)
		}
	})

	t.Run("explain", func(t *testing.T) {
		out := framework.Kubectl(t, s, "", "explain", "pods.spec.containers")
		if !strings.Contains(out, "KIND:") || !strings.Contains(out, "Pod") || !strings.Contains(out, "image") {
			t.Errorf("explain: got\n%s", out)
		}
		out = framework.Kubectl(t, s, "", "explain", "leases.spec", "--api-version=coordination.k8s.io/v1")
		if !strings.Contains(out, "holderIdentity") {
			t.Errorf("explain leases: got\n%s", out)
		}
	})

	t.Run("get --chunk-size", func(t *testing.T) {
		framework.CreateConfigMaps(t, client, "default", 7)
		_, errOut, err := framework.RunKubectl(t, s, "", "get", "configmaps", "--chunk-size=2", "-v=6", "-o", "name")
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(errOut, "limit=2"); n < 4 {
			t.Errorf("got %d requests with limit=2, want at least 4 pages", n)
		}
		if n := strings.Count(errOut, "continue="); n < 3 {
			t.Errorf("got %d continued requests, want at least 3", n)
		}
		out := framework.Kubectl(t, s, "", "get", "configmaps", "--chunk-size=2", "-o", "name")
		for _, name := range []string{"configmap/cm-000", "configmap/cm-006", "configmap/demo", "configmap/ssa"} {
			if !framework.ContainsField(out, name) {
				t.Errorf("paged get: %s missing from\n%s", name, out)
			}
		}
	})

	t.Run("delete", func(t *testing.T) {
		if out := framework.Kubectl(t, s, "", "delete", "configmap", "demo"); !strings.Contains(out, `configmap "demo" deleted`) {
			t.Errorf("delete: got %q", out)
		}
		_, errOut, err := framework.RunKubectl(t, s, "", "get", "configmap", "demo")
		if err == nil || !strings.Contains(errOut, "NotFound") {
			t.Errorf("get after delete: got err %v, stderr %q; want NotFound", err, errOut)
		}
	})

	t.Run("warnings", func(t *testing.T) {
		// kube-apiserver's warnings reach kubectl as Warning headers; a clean
		// deployment gets none (the control).
		for name, want := range map[string]string{
			"web.v1": "Warning: metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]\n",
			"web-v1": "",
		} {
			_, errOut, err := framework.RunKubectl(t, s, "", "create", "deployment", name, "--image=nginx", "--dry-run=server")
			if err != nil || errOut != want {
				t.Errorf("create deployment %s: got err %v, stderr %q; want stderr %q", name, err, errOut, want)
			}
		}
	})
}

// TestKubectlGetWatch runs kubectl get -w on both storage paths: the
// initial list, then objects created later.
func TestKubectlGetWatch(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		s, client := framework.Start(t, path)
		framework.CreateCMNamed(t, client, "demo")
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, framework.KubectlPath(t), "get", "configmaps", "-w", "-o", "name")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+s.KubeconfigPath, "HOME="+t.TempDir())
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		lines := bufio.NewScanner(stdout)
		waitFor(t, lines, "configmap/demo") // the initial list
		framework.Kubectl(t, s, "", "create", "configmap", "watched")
		waitFor(t, lines, "configmap/watched")
	})
}

// TestKubectlVersion runs what a new user runs first. kubectl built without
// version ldflags reports v0.0.0-master and exits 1; stamped, it reports the
// version of its k8s.io/kubectl module, the same minor as the server's.
func TestKubectlVersion(t *testing.T) {
	t.Parallel()
	s, _ := framework.Start(t)
	out, errOut, err := framework.RunKubectl(t, s, "", "version")
	if err != nil {
		t.Fatalf("kubectl version: got %v, want exit 0\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	client := regexp.MustCompile(`(?m)^Client Version: v1\.(\d+)\.\d+$`).FindStringSubmatch(out)
	server := regexp.MustCompile(`(?m)^Server Version: v1\.(\d+)\.\d+$`).FindStringSubmatch(out)
	if client == nil || server == nil {
		t.Fatalf("kubectl version: got\n%s\nwant Client Version and Server Version lines, each v1.x.y", out)
	}
	if client[1] != server[1] {
		t.Errorf("kubectl version: got client %q and server %q, want the same minor", client[0], server[0])
	}
	if errOut != "" {
		t.Errorf("kubectl version: got stderr %q, want none (a version skew warning?)", errOut)
	}
}

func waitFor(t *testing.T, lines *bufio.Scanner, want string) {
	t.Helper()
	for lines.Scan() {
		if strings.TrimSpace(lines.Text()) == want {
			return
		}
	}
	if err := lines.Err(); err != nil && err != io.EOF {
		t.Fatalf("waiting for %q: %v", want, err)
	}
	t.Fatalf("stream ended before %q", want)
}

// TestKubectlAdmissionPolicies: kubectl applies admission policies, shows
// them with upstream's columns, explains them, and reports a policy's
// denial and an expression that does not compile as kube-apiserver does.
func TestKubectlAdmissionPolicies(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	policy := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: no-latest
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.template.spec.containers.all(c, !c.image.endsWith(':latest'))"
    message: "no :latest images"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: no-latest
spec:
  policyName: no-latest
  validationActions: [Deny]
`
	if out := framework.Kubectl(t, s, policy, "apply", "-f", "-"); !strings.Contains(out, "validatingadmissionpolicy.admissionregistration.k8s.io/no-latest created") {
		t.Errorf("apply: got %q", out)
	}
	out := framework.Kubectl(t, s, "", "get", "validatingadmissionpolicies")
	if header := strings.Fields(strings.SplitN(out, "\n", 2)[0]); strings.Join(header, " ") != "NAME VALIDATIONS PARAMKIND AGE" {
		t.Errorf("get validatingadmissionpolicies: header %q, want upstream's NAME VALIDATIONS PARAMKIND AGE\n%s", header, out)
	}
	if !strings.Contains(out, "<unset>") {
		t.Errorf("get validatingadmissionpolicies: no <unset> paramKind in\n%s", out)
	}
	out = framework.Kubectl(t, s, "", "get", "validatingadmissionpolicybindings")
	if header := strings.Fields(strings.SplitN(out, "\n", 2)[0]); strings.Join(header, " ") != "NAME POLICYNAME PARAMREF AGE" {
		t.Errorf("get validatingadmissionpolicybindings: header %q\n%s", header, out)
	}
	if out := framework.Kubectl(t, s, "", "explain", "validatingadmissionpolicy.spec.validations"); !strings.Contains(out, "messageExpression") {
		t.Errorf("explain: got\n%s", out)
	}

	// The policy applies once the admission plugin has compiled it.
	var errOut string
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, errOut, _ = framework.RunKubectl(t, s, "", "create", "deployment", "web", "--image=nginx:latest", "--dry-run=server")
		return strings.Contains(errOut, "denied"), nil
	})
	if err != nil || !strings.Contains(errOut, `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'no-latest' with binding 'no-latest' denied request: no :latest images`) {
		t.Errorf("create a denied deployment: %v, stderr %q", err, errOut)
	}
	framework.Kubectl(t, s, "", "create", "deployment", "web", "--image=nginx:1.29")

	broken := strings.Replace(policy, "!c.image.endsWith(':latest')", "c.image.", 1)
	_, errOut, err = framework.RunKubectl(t, s, broken, "apply", "-f", "-")
	if err == nil || !strings.Contains(errOut, `spec.validations[0].expression: Invalid value: "object.spec.template.spec.containers.all(c, c.image.)": compilation failed: ERROR: <input>:1:`) {
		t.Errorf("apply a policy that does not compile: %v, stderr %q", err, errOut)
	}
	if _, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(t.Context(), "no-latest", metav1.GetOptions{}); err != nil {
		t.Errorf("the valid policy: %v", err)
	}
}

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

package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// kwokNodes are the names of the nodes kwok runs.
func (c *cluster) kwokNodes(t *testing.T) []string {
	t.Helper()
	list, err := c.client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range list.Items {
		if n.Annotations["kwok.x-k8s.io/node"] == "fake" {
			names = append(names, n.Name)
		}
	}
	if len(names) != nodes {
		t.Fatalf("%d kwok nodes, want %d", len(names), nodes)
	}
	return names
}

// readyPods are the pods of ns matching selector that run on a kwok
// node, Running and Ready.
func (c *cluster) readyPods(ctx context.Context, t *testing.T, ns, selector string) ([]corev1.Pod, error) {
	list, err := c.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	kwok := c.kwokNodes(t)
	var ready []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && isReady(&p) && slices.Contains(kwok, p.Spec.NodeName) {
			ready = append(ready, p)
		}
	}
	return ready, nil
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestDeployment: a Deployment rolls out as on kube-apiserver, through
// kubectl: its ReplicaSet's pods are scheduled onto kwok's nodes and come
// up Running and Ready; rollout status, wait for Available, scale, a new
// image and rollout undo.
func TestDeployment(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t)
	c.kubectl(t, "-n", ns, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=3")
	c.kubectl(t, "-n", ns, "rollout", "status", "deployment/web", "--timeout=2m")
	c.kubectl(t, "-n", ns, "wait", "--for=condition=Available", "deployment/web", "--timeout=2m")
	pods, err := c.readyPods(t.Context(), t, ns, "app=web")
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 3 {
		t.Fatalf("%d pods Running and Ready on kwok nodes, want 3", len(pods))
	}
	// pods/log reaches kwok's kubelet endpoint, which has no logs to give
	// (none configured): its answer, as through kube-apiserver.
	out, err := c.tryKubectl(t, "-n", ns, "logs", pods[0].Name)
	if want := fmt.Sprintf(`Error from server (BadRequest): no logs found for container "nginx" in pod "%s/%s"`, ns, pods[0].Name); err == nil || strings.TrimSpace(out) != want {
		t.Errorf("kubectl logs: %v, %q; want kwok's answer %q", err, out, want)
	}
	// pods/exec and pods/portforward reach it too, kubectl's WebSockets
	// translated to SPDY (kwok's node declares no ExtendWebSocketsToKubelet):
	// it has no exec and no port forwarding configured, and says so, as
	// through kube-apiserver (hack/cluster.sh up --upstream).
	out, err = c.tryKubectl(t, "-n", ns, "exec", pods[0].Name, "--", "ls")
	if want := fmt.Sprintf(`error: Internal error occurred: Internal error occurred: error executing command in container: no exec found for container "nginx" in pod "%s/%s"`,
		ns, pods[0].Name); err == nil || strings.TrimSpace(out) != want {
		t.Errorf("kubectl exec: %v, %q; want kwok's answer %q", err, out, want)
	}
	stderr, err := c.portForward(t, ns, pods[0].Name, 80)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if want := fmt.Sprintf(`no forward found for port 80 in pod \"%s/%s\"`, ns, pods[0].Name); err == nil || !strings.Contains(stderr, want) ||
		lines[len(lines)-1] != "error: lost connection to pod" {
		t.Errorf("kubectl port-forward: %v, %q; want kwok's %q, then \"error: lost connection to pod\"", err, stderr, want)
	}

	c.kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=5")
	c.kubectl(t, "-n", ns, "rollout", "status", "deployment/web", "--timeout=2m")
	poll(t, "5 ready pods", time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := c.readyPods(ctx, t, ns, "app=web")
		return len(pods) == 5, err
	})

	c.kubectl(t, "-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.28")
	c.kubectl(t, "-n", ns, "rollout", "status", "deployment/web", "--timeout=2m")
	if got := c.kubectl(t, "-n", ns, "get", "replicasets", "-o", "name"); strings.Count(got, "\n") != 2 {
		t.Errorf("replicasets after a new image:\n%s\nwant 2", got)
	}
	c.kubectl(t, "-n", ns, "rollout", "undo", "deployment/web")
	c.kubectl(t, "-n", ns, "rollout", "status", "deployment/web", "--timeout=2m")
	d, err := c.client.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if image := d.Spec.Template.Spec.Containers[0].Image; image != "nginx:1.27" {
		t.Errorf("image after rollout undo: %s, want nginx:1.27", image)
	}
	if rev := d.Annotations["deployment.kubernetes.io/revision"]; rev != "3" {
		t.Errorf("revision after rollout undo: %q, want 3", rev)
	}
	if d.Status.ReadyReplicas != 5 || d.Status.UpdatedReplicas != 5 {
		t.Errorf("status after rollout undo: %+v, want 5 ready and updated", d.Status)
	}
}

// TestJobs: a Job's pods complete (kwok's pod-complete stage) and the Job
// is Complete; a CronJob starts a Job on its schedule.
func TestJobs(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t)
	c.kubectl(t, "-n", ns, "create", "job", "once", "--image=busybox", "--", "true")
	c.kubectl(t, "-n", ns, "wait", "--for=condition=Complete", "job/once", "--timeout=2m")
	job, err := c.client.BatchV1().Jobs(ns).Get(t.Context(), "once", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status.Succeeded != 1 {
		t.Errorf("job status: %+v, want 1 succeeded", job.Status)
	}

	c.kubectl(t, "-n", ns, "create", "cronjob", "every-minute", "--image=busybox", "--schedule=* * * * *", "--", "true")
	poll(t, "a Job of the CronJob", 90*time.Second, func(ctx context.Context) (bool, error) {
		jobs, err := c.client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, j := range jobs.Items {
			if owner := metav1.GetControllerOf(&j); owner != nil && owner.Kind == "CronJob" && owner.Name == "every-minute" {
				return true, nil
			}
		}
		return false, nil
	})
}

// TestStatefulSet: a StatefulSet's pods are made one at a time, each once
// the one before it is Ready (OrderedReady), as one watch of them shows.
func TestStatefulSet(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t)
	w, err := c.client.CoreV1().Pods(ns).Watch(t.Context(), metav1.ListOptions{LabelSelector: "app=db"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	labels := map[string]string{"app": "db"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](3), ServiceName: "db",
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "postgres"}}}},
		},
	}
	if _, err := c.client.AppsV1().StatefulSets(ns).Create(t.Context(), sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var order []string
	ready := map[string]bool{}
	timeout := time.After(2 * time.Minute)
	for len(ready) < 3 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch ended")
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				t.Fatalf("watch event %s: %v", ev.Type, ev.Object)
			}
			if ev.Type == watch.Added {
				if len(order) > 0 && !ready[order[len(order)-1]] {
					t.Fatalf("%s made before %s was Ready", p.Name, order[len(order)-1])
				}
				order = append(order, p.Name)
			}
			if isReady(p) {
				ready[p.Name] = true
			}
		case <-timeout:
			t.Fatalf("pods made: %v, ready: %v; want db-0, db-1, db-2 ready", order, ready)
		}
	}
	if want := []string{"db-0", "db-1", "db-2"}; !slices.Equal(order, want) {
		t.Errorf("pods made in the order %v, want %v", order, want)
	}
}

// TestDaemonSet: a DaemonSet runs one pod on each kwok node.
func TestDaemonSet(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t)
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "busybox"}}}},
		},
	}
	if _, err := c.client.AppsV1().DaemonSets(ns).Create(t.Context(), ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kwok := c.kwokNodes(t)
	poll(t, "one ready agent pod on each kwok node", 2*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := c.readyPods(ctx, t, ns, "app=agent")
		if err != nil {
			return false, err
		}
		var on []string
		for _, p := range pods {
			on = append(on, p.Spec.NodeName)
		}
		slices.Sort(on)
		return slices.Equal(on, kwok), nil
	})
	poll(t, "the DaemonSet's status", time.Minute, func(ctx context.Context) (bool, error) {
		ds, err := c.client.AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s := ds.Status
		return s.DesiredNumberScheduled == nodes && s.NumberReady == nodes && s.ObservedGeneration == ds.Generation, nil
	})
}

// TestServiceEndpoints: a Service gets an EndpointSlice with the
// addresses of its ready pods, from kube-controller-manager's
// EndpointSlice controller.
func TestServiceEndpoints(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t)
	c.kubectl(t, "-n", ns, "create", "deployment", "api", "--image=nginx", "--replicas=2", "--port=80")
	c.kubectl(t, "-n", ns, "expose", "deployment", "api", "--port=80")
	c.kubectl(t, "-n", ns, "rollout", "status", "deployment/api", "--timeout=2m")
	poll(t, "the Service's endpoints", time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := c.readyPods(ctx, t, ns, "app=api")
		if err != nil {
			return false, err
		}
		var want []string
		for _, p := range pods {
			want = append(want, p.Status.PodIP)
		}
		slices.Sort(want)
		slicesList, err := c.client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=api"})
		if err != nil {
			return false, err
		}
		var got []string
		for _, s := range slicesList.Items {
			for _, e := range s.Endpoints {
				if ptr.Deref(e.Conditions.Ready, false) {
					got = append(got, e.Addresses...)
				}
			}
		}
		slices.Sort(got)
		return len(want) == 2 && slices.Equal(got, want), nil
	})
}

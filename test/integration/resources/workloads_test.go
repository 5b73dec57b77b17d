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

package resources

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestEveryResourceWatchesAndWatchLists watches every served resource from
// a resourceVersion and as a watch-list (KEP-3157), on both storage paths.
func TestEveryResourceWatchesAndWatchLists(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		// The quota controller would write the quota fixture's status, and
		// priority and fairness the FlowSchema's: MODIFIED events this
		// test does not expect.
		s, _ := framework.Start(t, path, framework.WithoutControllers("resourcequota"), func(o *server.Options) { o.PriorityAndFairness = false })
		dyn := dynamic.NewForConfigOrDie(s.Config)
		for i, r := range framework.ServedResources {
			t.Run(r.GVR.GroupResource().String(), func(t *testing.T) {
				ctx := t.Context()
				c := r.Client(dyn)
				label := fmt.Sprintf("resource-%d", i) // core and events.k8s.io Events are one collection
				create := func(name string) *unstructured.Unstructured {
					t.Helper()
					obj := framework.NewObject(r.GVR.GroupVersion().String(), r.Kind, name, r.Body)
					obj.SetLabels(map[string]string{"test": label})
					created, err := c.Create(ctx, obj, metav1.CreateOptions{})
					if err != nil {
						t.Fatalf("create %s: %v", name, err)
					}
					return created
				}
				first := create(label + "-a")
				opts := framework.WatchListOptions("")
				opts.LabelSelector = "test=" + label
				w, err := c.Watch(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				framework.ExpectEvents(t, w, "ADDED "+label+"-a")
				if ev := framework.NextEvent(t, w); ev.Type != watch.Bookmark || ev.Object.(*unstructured.Unstructured).GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
					t.Fatalf("after the initial events: got %s, want the initial-events-end BOOKMARK", framework.Describe(ev))
				}
				create(label + "-b")
				framework.ExpectEvents(t, w, "ADDED "+label+"-b")

				fromRV, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: first.GetResourceVersion(), LabelSelector: "test=" + label})
				if err != nil {
					t.Fatal(err)
				}
				defer fromRV.Stop()
				framework.ExpectEvents(t, fromRV, "ADDED "+label+"-b")
			})
		}
	})
}

// TestDeploymentStrategies checks what the API server (not a controller)
// does to a Deployment: defaults, generation, status and scale subresources,
// validation.
func TestDeploymentStrategies(t *testing.T) {
	t.Parallel()
	_, client := framework.Start(t)
	ctx := t.Context()
	deployments := client.AppsV1().Deployments("default")
	d, err := deployments.Create(ctx, framework.Deployment("web", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Generation != 1 || d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit != 10 ||
		d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("created deployment: generation %d, spec %+v; want generation 1 and upstream's defaults", d.Generation, d.Spec)
	}

	// A status update changes status only; a spec update bumps the generation.
	d.Status.ReadyReplicas, d.Status.Replicas = 2, 2
	d.Spec.Replicas = ptr.To[int32](9)
	d, err = deployments.UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ReadyReplicas != 2 || *d.Spec.Replicas != 2 || d.Generation != 1 {
		t.Errorf("after a status update: ready %d, replicas %d, generation %d; want 2, 2 (spec unchanged), 1", d.Status.ReadyReplicas, *d.Spec.Replicas, d.Generation)
	}

	scale, err := deployments.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if scale.Spec.Replicas != 2 || scale.Status.Replicas != 2 || scale.Status.Selector != "app=web" {
		t.Errorf("scale: got %+v, want spec 2, status 2, selector app=web", scale)
	}
	scale.Spec.Replicas = 5
	if scale, err = deployments.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil || scale.Spec.Replicas != 5 {
		t.Fatalf("update scale to 5: got %+v, %v", scale, err)
	}
	d, err = deployments.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 5 || d.Generation != 2 || d.Status.ReadyReplicas != 2 {
		t.Errorf("after scaling: replicas %d, generation %d, ready %d; want 5, 2, 2", *d.Spec.Replicas, d.Generation, d.Status.ReadyReplicas)
	}
	_, err = deployments.UpdateScale(ctx, "web", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: autoscalingv1.ScaleSpec{Replicas: -1}}, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !framework.HasCause(err, metav1.CauseTypeFieldValueInvalid, "spec.replicas") {
		t.Errorf("scale to -1: got %v, want 422 on spec.replicas", err)
	}
	stale := scale.DeepCopy()
	stale.ResourceVersion = "1"
	if _, err := deployments.UpdateScale(ctx, "web", stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("scale with a stale resourceVersion: got %v, want 409", err)
	}

	bad := framework.Deployment("bad", 1)
	bad.Spec.Template.Labels = map[string]string{"app": "other"}
	_, err = deployments.Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !framework.HasCause(err, metav1.CauseTypeFieldValueInvalid, "spec.template.metadata.labels") {
		t.Errorf("selector not matching the template: got %v, want 422 on spec.template.metadata.labels", err)
	}
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "x"}}
	d.Spec.Template.Labels["tier"] = "x"
	if _, err := deployments.Update(ctx, d, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !framework.HasCause(err, metav1.CauseTypeFieldValueInvalid, "spec.selector") {
		t.Errorf("changing the selector: got %v, want 422 (immutable)", err)
	}
}

// TestScalingOwnsTheReplicas: whoever scales through the scale subresource
// owns spec.replicas, recorded with subresource "scale", as upstream
// records it, so a later server-side apply of another replica count by
// its first owner conflicts with the scaler.
func TestScalingOwnsTheReplicas(t *testing.T) {
	t.Parallel()
	_, client := framework.Start(t)
	ctx := t.Context()
	deployments := client.AppsV1().Deployments("default")
	apply := func(replicas int32) error {
		manifest := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":%d,`+
			`"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`, replicas)
		_, err := deployments.Patch(ctx, "web", types.ApplyPatchType, []byte(manifest), metav1.PatchOptions{FieldManager: "deployer"})
		return err
	}
	if err := apply(2); err != nil {
		t.Fatal(err)
	}
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: autoscalingv1.ScaleSpec{Replicas: 5}}
	if _, err := deployments.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{FieldManager: "scaler"}); err != nil {
		t.Fatal(err)
	}
	d, err := deployments.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var scaler *metav1.ManagedFieldsEntry
	for i, e := range d.ManagedFields {
		if e.Manager == "scaler" {
			scaler = &d.ManagedFields[i]
		}
	}
	if scaler == nil || scaler.Subresource != "scale" || scaler.Operation != metav1.ManagedFieldsOperationUpdate || string(scaler.FieldsV1.Raw) != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("the scaler's managed fields: got %+v, want an Update of spec.replicas with subresource scale", scaler)
	}
	want := `Apply failed with 1 conflict: conflict with "scaler" with subresource "scale" using apps/v1: .spec.replicas`
	if err := apply(3); !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("applying other replicas: got %v, want %s", err, want)
	}
}

// TestServiceClusterIPs allocates cluster IPs and node ports as upstream
// does by default: unique, from 10.0.0.0/24 and 30000-32767, kept across
// updates, checked when asked for.
func TestServiceClusterIPs(t *testing.T) {
	t.Parallel()
	_, client := framework.Start(t)
	ctx := t.Context()
	services := client.CoreV1().Services("default")
	svc := func(name string, mutate func(*corev1.Service)) *corev1.Service {
		s := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Port: 80}}},
		}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	cidr := netip.MustParsePrefix("10.0.0.0/24")
	seen := map[string]bool{}
	for i := range 20 {
		created, err := services.Create(ctx, svc(fmt.Sprintf("s%d", i), nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ip, err := netip.ParseAddr(created.Spec.ClusterIP)
		if err != nil || !cidr.Contains(ip) || seen[created.Spec.ClusterIP] {
			t.Fatalf("service %d: cluster IP %q, want a new one in %s (have %v)", i, created.Spec.ClusterIP, cidr, seen)
		}
		seen[created.Spec.ClusterIP] = true
		if created.Spec.Ports[0].TargetPort.IntValue() != 80 || created.Spec.Ports[0].Protocol != corev1.ProtocolTCP || created.Spec.Type != corev1.ServiceTypeClusterIP ||
			len(created.Spec.ClusterIPs) != 1 || created.Spec.ClusterIPs[0] != created.Spec.ClusterIP {
			t.Errorf("service %d: spec %+v, want upstream's defaults", i, created.Spec)
		}
	}

	s0, err := services.Get(ctx, "s0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = services.Create(ctx, svc("taken", func(s *corev1.Service) { s.Spec.ClusterIP = s0.Spec.ClusterIP }), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "already allocated") {
		t.Errorf("asking for a used IP: got %v, want 422 already allocated", err)
	}
	_, err = services.Create(ctx, svc("outside", func(s *corev1.Service) { s.Spec.ClusterIP = "192.168.0.1" }), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "the provided network does not match the current range") {
		t.Errorf("asking for an IP outside the range: got %v, want upstream's 422 the provided network does not match the current range", err)
	}

	// An update that leaves the IP out keeps it; one that changes it is invalid.
	update := svc("s0", nil)
	update.ResourceVersion = s0.ResourceVersion
	updated, err := services.Update(ctx, update, metav1.UpdateOptions{})
	if err != nil || updated.Spec.ClusterIP != s0.Spec.ClusterIP {
		t.Fatalf("update without a cluster IP: got %v, %v; want %s kept", updated, err, s0.Spec.ClusterIP)
	}
	other := "10.0.0.200" // any address but s0's, which is picked at random
	if s0.Spec.ClusterIP == other {
		other = "10.0.0.201"
	}
	updated.Spec.ClusterIP, updated.Spec.ClusterIPs = other, []string{other}
	if _, err := services.Update(ctx, updated, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("changing the cluster IP: got %v, want 422", err)
	}

	headless, err := services.Create(ctx, svc("headless", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }), metav1.CreateOptions{})
	if err != nil || headless.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("headless: got %v, %v; want clusterIP None", headless, err)
	}
	external, err := services.Create(ctx, svc("ext", func(s *corev1.Service) {
		s.Spec.Type, s.Spec.ExternalName, s.Spec.Ports, s.Spec.Selector = corev1.ServiceTypeExternalName, "example.com", nil, nil
	}), metav1.CreateOptions{})
	if err != nil || external.Spec.ClusterIP != "" {
		t.Errorf("ExternalName: got %v, %v; want no cluster IP", external, err)
	}
	nodePort, err := services.Create(ctx, svc("np", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }), metav1.CreateOptions{})
	if err != nil || nodePort.Spec.Ports[0].NodePort < 30000 || nodePort.Spec.Ports[0].NodePort > 32767 {
		t.Errorf("NodePort: got %v, %v; want a node port in 30000-32767", nodePort, err)
	}
	// Dry runs, as upstream's: a create shows the range's first address
	// and records none; one asking for a held address is not refused;
	// a delete keeps the Service's IPAddress.
	dryRun := []string{metav1.DryRunAll}
	shown, err := services.Create(ctx, svc("dry", nil), metav1.CreateOptions{DryRun: dryRun})
	if err != nil || shown.Spec.ClusterIP != "10.0.0.0" {
		t.Fatalf("dry-run create: got %v, %v; want upstream's cluster IP 10.0.0.0", shown, err)
	}
	s1, err := services.Get(ctx, "s1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asks := svc("dry", func(s *corev1.Service) { s.Spec.ClusterIP = s1.Spec.ClusterIP })
	if shown, err := services.Create(ctx, asks, metav1.CreateOptions{DryRun: dryRun}); err != nil || shown.Spec.ClusterIP != s1.Spec.ClusterIP {
		t.Errorf("dry-run create asking for s1's %s: got %v, %v; want it shown", s1.Spec.ClusterIP, shown, err)
	}
	ips := client.NetworkingV1().IPAddresses()
	list, err := ips.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range list.Items {
		if ref := ip.Spec.ParentRef; ref != nil && ref.Name == "dry" {
			t.Errorf("a dry-run create recorded IPAddress %s, want none", ip.Name)
		}
	}
	if err := services.Delete(ctx, "s1", metav1.DeleteOptions{DryRun: dryRun}); err != nil {
		t.Fatal(err)
	}
	if _, err := ips.Get(ctx, s1.Spec.ClusterIP, metav1.GetOptions{}); err != nil {
		t.Errorf("the IPAddress of s1's %s after a dry-run delete: got %v, want it kept", s1.Spec.ClusterIP, err)
	}
	// Deleting a service frees its IP for an explicit request.
	if err := services.Delete(ctx, "s0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := services.Create(ctx, svc("reuse", func(s *corev1.Service) { s.Spec.ClusterIP = s0.Spec.ClusterIP }), metav1.CreateOptions{}); err != nil {
		t.Errorf("asking for a freed IP: %v", err)
	}
}

// TestKubectlCreateDeploymentAndService runs the kubectl commands a newcomer
// tries first.
func TestKubectlCreateDeploymentAndService(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	framework.Kubectl(t, s, "", "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
	framework.Kubectl(t, s, "", "create", "service", "clusterip", "web", "--tcp=80:8080")
	framework.Kubectl(t, s, "", "create", "service", "nodeport", "web-np", "--tcp=80:8080")
	framework.Kubectl(t, s, "", "scale", "deployment/web", "--replicas=3")
	d, err := client.AppsV1().Deployments("default").Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 3 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
		t.Fatalf("deployment after kubectl create and scale: got %+v, %v", d, err)
	}
	out := framework.Kubectl(t, s, "", "get", "deployments,services")
	for _, want := range []string{"deployment.apps/web", "0/3", "service/web ", "ClusterIP", "80/TCP", "service/web-np", "NodePort", "80:3"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get deployments,services: want %q in\n%s", want, out)
		}
	}
	if out := framework.Kubectl(t, s, "", "get", "all"); !strings.Contains(out, "deployment.apps/web") || !strings.Contains(out, "service/web") {
		t.Errorf("kubectl get all: want the deployment and the services in\n%s", out)
	}
	out = framework.Kubectl(t, s, "", "create", "job", "once", "--image=busybox", "--", "true")
	if !strings.Contains(out, "job.batch/once created") {
		t.Errorf("kubectl create job: got %q", out)
	}
	if out := framework.Kubectl(t, s, "", "create", "role", "reader", "--verb=get", "--resource=pods"); !strings.Contains(out, "created") {
		t.Errorf("kubectl create role: got %q", out)
	}
}

// TestEventsInBothGroups writes Events through events.k8s.io/v1 and core/v1
// and reads each through the other: one collection, converted as upstream's.
func TestEventsInBothGroups(t *testing.T) {
	t.Parallel()
	_, client := framework.Start(t)
	ctx := t.Context()
	now := metav1.NewMicroTime(time.Now().Truncate(time.Microsecond))
	_, err := client.EventsV1().Events("default").Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "new-api"}, EventTime: now,
		ReportingController: "example.com/ctrl", ReportingInstance: "ctrl-1", Action: "Sync", Reason: "Synced", Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "cm"}, Note: "synced cm",
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	core, err := client.CoreV1().Events("default").Get(ctx, "new-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if core.Message != "synced cm" || core.InvolvedObject.Name != "cm" || core.ReportingController != "example.com/ctrl" || !core.EventTime.Equal(&now) {
		t.Errorf("events.k8s.io Event read as core: got %+v", core)
	}
	if _, err := client.CoreV1().Events("default").Create(ctx, &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "old-api"}, Reason: "Old", Message: "from core", Type: corev1.EventTypeWarning, Count: 3,
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := client.EventsV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=p"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Note != "from core" || list.Items[0].DeprecatedCount != 3 || list.Items[0].Regarding.Kind != "Pod" {
		t.Errorf("core Event listed through events.k8s.io by regarding.name: got %+v", list.Items)
	}
	if _, err := client.EventsV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=p"}); !apierrors.IsBadRequest(err) {
		t.Errorf("events.k8s.io field selector on a core field name: got %v, want 400", err)
	}
}

// TestDeletingANamespaceDeletesTheNewTypes checks the namespace controller
// empties every namespaced resource, the new ones included.
func TestDeletingANamespaceDeletesTheNewTypes(t *testing.T) {
	t.Parallel()
	_, client := framework.Start(t)
	ctx := t.Context()
	ns := framework.CreateNamespace(t, client)
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, framework.Deployment("web", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.DeleteNamespace(t, client, ns)
	if list, err := client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("deployments left in the deleted namespace: %v, %v", list, err)
	}
}

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

// Command sidebyside sends the validation cases of the registry packages
// (their testdata/validation/*.yaml, see registrytest.CompareUpstream) through a running server's API, and prints
// what it answers, in the .txt files' format (and its warnings): run it against miniapiserver
// and kube-apiserver (hack/cluster.sh up --upstream) and diff the two to
// compare the whole request path (allocation and admission included), not
// only validation.
//
//	go run ./hack/sidebyside -kubeconfig FILE [-context NAME] DIR...
//
// A case's objects go to the namespace sidebyside (made if missing; cluster-scoped ones to none). A
// create sends base patched with new; an update and a status update create
// base patched with old, then send new as a strategic merge patch of it
// (its status for status). What a case made is deleted after it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

const namespace = "sidebyside"

// kinds are the kinds cases may hold, by the group version they are sent
// in; the server's discovery maps them to resources.
var kinds = map[string]schema.GroupVersion{}

func init() {
	for gv, list := range map[schema.GroupVersion][]string{
		corev1.SchemeGroupVersion: {"Pod", "Service", "ReplicationController", "PodTemplate", "PersistentVolume", "PersistentVolumeClaim",
			"Node", "ConfigMap", "Secret", "Namespace", "ServiceAccount", "Event", "ResourceQuota", "LimitRange", "Endpoints"},
		batchv1.SchemeGroupVersion:      {"Job", "CronJob"},
		appsv1.SchemeGroupVersion:       {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision"},
		networkingv1.SchemeGroupVersion: {"Ingress", "IngressClass", "NetworkPolicy", "IPAddress", "ServiceCIDR"},
		discoveryv1.SchemeGroupVersion:  {"EndpointSlice"},
		rbacv1.SchemeGroupVersion:       {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"},
		admissionv1.SchemeGroupVersion: {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"},
		autoscalingv2.SchemeGroupVersion:      {"HorizontalPodAutoscaler"},
		policyv1.SchemeGroupVersion:           {"PodDisruptionBudget"},
		certificatesv1.SchemeGroupVersion:     {"CertificateSigningRequest", "ClusterTrustBundle", "PodCertificateRequest"},
		coordinationv1.SchemeGroupVersion:     {"Lease"},
		nodev1.SchemeGroupVersion:             {"RuntimeClass"},
		schedulingv1.SchemeGroupVersion:       {"PriorityClass"},
		storagev1.SchemeGroupVersion:          {"StorageClass", "CSIDriver", "VolumeAttachment", "CSINode", "CSIStorageCapacity", "VolumeAttributesClass"},
		flowcontrolv1.SchemeGroupVersion:      {"FlowSchema", "PriorityLevelConfiguration"},
		resourcev1.SchemeGroupVersion:         {"DeviceClass", "DeviceTaintRule", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"},
		storagemigrationv1.SchemeGroupVersion: {"StorageVersionMigration"},
	} {
		for _, kind := range list {
			kinds[kind] = gv
		}
	}
}

type cases struct {
	Kind  string
	Base  json.RawMessage
	Cases []struct {
		Verb, Name string
		Old, New   json.RawMessage
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the server's kubeconfig")
	kubecontext := flag.String("context", "", "its context, if not the current one")
	flag.BoolVar(&printObjects, "objects", false, "also print what each write that succeeded stored (see masked)")
	flag.Parse()
	if err := run(*kubeconfig, *kubecontext, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, kubecontext string, dirs []string) error {
	if len(dirs) == 0 {
		return fmt.Errorf("no DIR given")
	}
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: kubecontext}).ClientConfig()
	if err != nil {
		return err
	}
	config.WarningHandler = warnings
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(config)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	dyn := dynamic.NewForConfigOrDie(config)
	groups, err := restmapper.GetAPIGroupResources(client.Discovery())
	if err != nil {
		return err
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return err
		}
		for _, file := range files {
			if err := runFile(ctx, dyn, mapper, file); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
		}
	}
	return nil
}

func runFile(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	f := cases{Kind: "Pod"}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return err
	}
	gv, ok := kinds[f.Kind]
	if !ok {
		return fmt.Errorf("kind %q is not one of %v", f.Kind, slices.Sorted(maps.Keys(kinds)))
	}
	mapping, err := mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: f.Kind}, gv.Version)
	if err != nil {
		return err
	}
	var c dynamic.ResourceInterface = dyn.Resource(mapping.Resource).Namespace(namespace)
	clusterScoped := mapping.Scope.Name() == meta.RESTScopeNameRoot
	if clusterScoped {
		c = dyn.Resource(mapping.Resource)
	}
	typed, err := scheme.Scheme.New(gv.WithKind(f.Kind))
	if err != nil {
		return err
	}
	fmt.Printf("### %s\n", filepath.Base(file))
	for _, tc := range f.Cases {
		patch := func(obj, p json.RawMessage) (json.RawMessage, error) {
			if len(p) == 0 {
				return obj, nil
			}
			return strategicpatch.StrategicMergePatch(obj, p, typed)
		}
		first, err := patch(f.Base, tc.Old)
		if err == nil && tc.Verb == "create" {
			first, err = patch(first, tc.New)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", tc.Name, err)
		}
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal(first, &obj.Object); err != nil {
			return fmt.Errorf("%s: %w", tc.Name, err)
		}
		obj.SetAPIVersion(gv.String())
		obj.SetKind(f.Kind)
		if !clusterScoped {
			obj.SetNamespace(namespace)
		}
		obj.SetUID("")
		obj.SetResourceVersion("")
		stored, err := c.Create(ctx, obj, metav1.CreateOptions{})
		made := err == nil
		switch {
		case tc.Verb == "create":
		case err != nil:
			err = fmt.Errorf("the old object: %w", err)
		case tc.Verb == "status":
			stored, err = c.Patch(ctx, obj.GetName(), types.StrategicMergePatchType, tc.New, metav1.PatchOptions{}, "status")
		default:
			stored, err = c.Patch(ctx, obj.GetName(), types.StrategicMergePatchType, tc.New, metav1.PatchOptions{})
		}
		fmt.Printf("=== %s %s\n%v\n", tc.Verb, tc.Name, err)
		if printObjects && err == nil {
			fmt.Printf("stored: %s\n", masked(stored))
		}
		for _, w := range warnings.take() {
			fmt.Printf("warning: %s\n", w)
		}
		if !made {
			continue
		}
		if err := deleted(ctx, c, obj.GetName()); err != nil {
			return fmt.Errorf("%s: %w", tc.Name, err)
		}
	}
	return nil
}

var printObjects bool

// masked is obj as JSON (keys sorted) without what differs from one
// server or run to the next: its uid (and labels holding it),
// resourceVersion, managed fields, times, allocated addresses and ports,
// and generated volume names.
func masked(obj *unstructured.Unstructured) string {
	uid := string(obj.GetUID())
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				switch {
				case k == "clusterIP" || k == "clusterIPs" || k == "nodePort" || k == "healthCheckNodePort",
					strings.HasSuffix(k, "Time") || strings.HasSuffix(k, "Timestamp"):
					v[k] = "*"
				default:
					v[k] = walk(e)
				}
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		case string:
			if uid != "" && v == uid {
				return "<uid>"
			}
			if strings.HasPrefix(v, "kube-api-access-") {
				return "kube-api-access-*"
			}
		}
		return v
	}
	out, err := json.Marshal(walk(obj.Object))
	if err != nil {
		return err.Error()
	}
	return string(out)
}

// warnings keeps the warnings of the requests until taken.
var warnings = &warningList{}

type warningList struct {
	mu   sync.Mutex
	list []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (l *warningList) HandleWarningHeader(_ int, _ string, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, text)
}

func (l *warningList) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.list
	l.list = nil
	return list
}

// deleted deletes name at once, if there, and waits until it is gone.
func deleted(ctx context.Context, c dynamic.ResourceInterface, name string) error {
	err := c.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		obj, err := c.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		// Finalizers no controller removes here (kube-apiserver's
		// StorageObjectInUseProtection adds pv-protection) would hold it.
		if err == nil && len(obj.GetFinalizers()) > 0 {
			_, _ = c.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s still there after 30s", name)
}

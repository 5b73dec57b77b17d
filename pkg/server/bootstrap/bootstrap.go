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

package bootstrap

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1apply "k8s.io/client-go/applyconfigurations/networking/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/registry/priorityclass"
	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
	"github.com/miniapiserver/miniapiserver/pkg/registry/servicecidr"
)

// systemNamespaces exist from the first start and can never be deleted.
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic}

// bootstrapped are the namespaces kube-apiserver creates on start: the
// system ones and kube-node-lease (which can be deleted, as upstream's).
var bootstrapped = append(slices.Clone(systemNamespaces), corev1.NamespaceNodeLease)

// Namespaces creates the system namespaces unless they exist.
func Namespaces(ctx context.Context, client kubernetes.Interface) error {
	var namespaces []*corev1.Namespace
	for _, name := range bootstrapped {
		namespaces = append(namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	return createMissing(ctx, namespaces, client.CoreV1().Namespaces().Create)
}

// PriorityClasses creates upstream's system PriorityClasses
// unless they exist, as kube-apiserver does on start.
func PriorityClasses(ctx context.Context, client kubernetes.Interface) error {
	return createMissing(ctx, priorityclass.SystemClasses(), client.SchedulingV1().PriorityClasses().Create)
}

// KubernetesService creates the default/kubernetes Service unless
// it exists, as kube-apiserver's kubernetes service controller does: the
// first address of the service range, port 443 to the server's port. As
// that controller, it leaves an existing one as it is (ports included),
// and writes no Endpoints or EndpointSlice: the server's address is a
// loopback one, which neither may hold (kube-apiserver advertising
// 127.0.0.1 writes none either). Unlike it, it makes the Service before the
// server is ready, not after, and not again if it is deleted until the
// next start.
func KubernetesService(ctx context.Context, client kubernetes.Interface, port int, ranges service.Ranges) error {
	services := client.CoreV1().Services(metav1.NamespaceDefault)
	singleStack := corev1.IPFamilyPolicySingleStack
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: metav1.NamespaceDefault, Labels: map[string]string{"provider": "kubernetes", "component": "apiserver"}},
		Spec: corev1.ServiceSpec{
			Ports:           []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(int32(port))}},
			ClusterIP:       ranges.KubernetesServiceIP().String(),
			IPFamilyPolicy:  &singleStack,
			SessionAffinity: corev1.ServiceAffinityNone,
			Type:            corev1.ServiceTypeClusterIP,
		},
	}
	// A get first: a create of the existing Service would be refused its
	// address before it could be refused as existing.
	create := func(ctx context.Context, svc *corev1.Service, opts metav1.CreateOptions) (*corev1.Service, error) {
		if existing, err := services.Get(ctx, svc.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return existing, err
		}
		created, err := services.Create(ctx, svc, opts)
		if apierrors.IsInvalid(err) { // its address is another Service's: nothing to retry
			utilruntime.HandleErrorWithContext(ctx, err, "Making the kubernetes Service")
			return nil, nil
		}
		return created, err
	}
	return createMissing(ctx, []*corev1.Service{svc}, create)
}

// serviceCIDRController is the field manager of the default ServiceCIDR's
// Ready condition, upstream's controller name.
const serviceCIDRController = "kubernetes-service-cidr-controller"

// ServiceCIDR makes the default ServiceCIDR, "kubernetes", of the
// service range (ranges.ClusterIPs, which cluster IPs are allocated
// from) unless it exists, then marks it Ready through /status, as
// kube-apiserver's kubernetes-service-cidr-controller does: an existing
// one is left as it is, and gets the condition only if it has the
// service range, is not being deleted and has no Ready condition or an
// Unknown one. Unlike that controller, it runs once per start, so a
// deleted default ServiceCIDR is made again only on the next start, and it
// logs a mismatched range instead of recording an event.
func ServiceCIDR(ctx context.Context, client kubernetes.Interface, ranges service.Ranges) error {
	cidrs := client.NetworkingV1().ServiceCIDRs()
	want := &networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: servicecidr.DefaultName},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{ranges.ClusterIPs.String()}},
	}
	if err := createMissing(ctx, []*networkingv1.ServiceCIDR{want}, cidrs.Create); err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		current, err := cidrs.Get(ctx, servicecidr.DefaultName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) { // deleted since: made again on the next start
			return true, nil
		}
		if err != nil {
			logger.V(2).Info("Reading the default ServiceCIDR", "err", err)
			return false, nil
		}
		if !needsReady(current, want.Spec.CIDRs) {
			if !slices.Equal(current.Spec.CIDRs, want.Spec.CIDRs) {
				logger.Info("Inconsistent ServiceCIDR status", "serviceCIDR", klog.KObj(current), "controllerCIDRs", want.Spec.CIDRs, "serviceCIDRs", current.Spec.CIDRs)
			}
			return true, nil
		}
		// Upstream's condition, with no reason.
		apply := networkingv1apply.ServiceCIDR(servicecidr.DefaultName).WithStatus(networkingv1apply.ServiceCIDRStatus().WithConditions(
			metav1apply.Condition().
				WithType(networkingv1.ServiceCIDRConditionReady).
				WithStatus(metav1.ConditionTrue).
				WithMessage("Kubernetes default Service CIDR is ready").
				WithLastTransitionTime(metav1.Now())))
		if _, err := cidrs.ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: serviceCIDRController, Force: true}); err != nil {
			logger.V(2).Info("Setting the default ServiceCIDR's Ready condition", "err", err)
			return false, nil
		}
		return true, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// needsReady reports whether the default ServiceCIDR cidr gets the Ready
// condition, as upstream's syncStatus decides: not while it is being
// deleted, nor if its CIDRs are not the server's (want), nor over a Ready
// condition that is True or False (False is an administrator's to clear).
func needsReady(cidr *networkingv1.ServiceCIDR, want []string) bool {
	if cidr.DeletionTimestamp != nil || !slices.Equal(cidr.Spec.CIDRs, want) {
		return false
	}
	ready := apimeta.FindStatusCondition(cidr.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	return ready == nil || ready.Status == metav1.ConditionUnknown
}

// retryBootstrap runs attempt until it succeeds, every 50ms for at most
// 30s; a failure then names what and attempt's last error. A server
// stopped before it is done is no failure (a post-start hook's error is
// fatal).
func retryBootstrap(ctx context.Context, what string, attempt func(context.Context) error) error {
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		lastErr = attempt(ctx)
		if lastErr != nil {
			klog.FromContext(ctx).V(2).Info("Bootstrapping", "what", what, "err", lastErr)
		}
		return lastErr == nil, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w (%v)", what, err, lastErr)
	}
	return nil
}

// createMissing creates each of objs that does not exist, retrying briefly
// (the first requests may race the storage becoming ready). It fails only
// if they cannot be created in 30s; a server stopped before it is done is
// no failure (a post-start hook's error is fatal).
func createMissing[T metav1.Object](ctx context.Context, objs []T, create func(context.Context, T, metav1.CreateOptions) (T, error)) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, obj := range objs {
			if _, err := create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				klog.FromContext(ctx).V(2).Info("Creating a bootstrap object", "name", obj.GetName(), "err", err)
				return false, nil
			}
		}
		return true, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// legacyTokenTracking is kube-apiserver's record of the day it began
// labelling legacy service account tokens with their last use:
// kube-controller-manager's cleaner of unused ones counts from it.
const legacyTokenTracking = "kube-apiserver-legacy-service-account-token-tracking"

// LegacyTokenTracking makes that record unless it exists, as
// upstream's legacy-token-tracking controller does; unlike it, it does not
// mend a record whose date does not parse.
func LegacyTokenTracking(ctx context.Context, client kubernetes.Interface) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: legacyTokenTracking},
		Data: map[string]string{"since": time.Now().UTC().Format(time.DateOnly)}}
	return createMissing(ctx, []*corev1.ConfigMap{cm}, client.CoreV1().ConfigMaps(metav1.NamespaceSystem).Create)
}

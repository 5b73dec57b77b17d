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

package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func defaultedServicePort(port int32, protocol corev1.Protocol, target intstr.IntOrString) corev1.ServicePort {
	return corev1.ServicePort{Port: port, Protocol: protocol, TargetPort: target}
}

func TestDecodeServiceDefaults(t *testing.T) {
	cluster := ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	tests := []struct {
		name string
		spec string
		want corev1.ServiceSpec
	}{
		{
			name: "ClusterIP",
			spec: `{"ports":[{"port":80},{"port":53,"protocol":"UDP","targetPort":5353},{"port":443,"targetPort":"https"}]}`,
			want: corev1.ServiceSpec{
				Type:            corev1.ServiceTypeClusterIP,
				SessionAffinity: corev1.ServiceAffinityNone,
				Ports: []corev1.ServicePort{
					defaultedServicePort(80, corev1.ProtocolTCP, intstr.FromInt32(80)),
					defaultedServicePort(53, corev1.ProtocolUDP, intstr.FromInt32(5353)),
					defaultedServicePort(443, corev1.ProtocolTCP, intstr.FromString("https")),
				},
				InternalTrafficPolicy: cluster,
			},
		},
		{
			name: "NodePort",
			spec: `{"type":"NodePort","ports":[{"port":80}]}`,
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, SessionAffinity: corev1.ServiceAffinityNone,
				Ports:                 []corev1.ServicePort{defaultedServicePort(80, corev1.ProtocolTCP, intstr.FromInt32(80))},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster, InternalTrafficPolicy: cluster,
			},
		},
		{
			name: "LoadBalancer",
			spec: `{"type":"LoadBalancer","ports":[{"port":80}],"externalTrafficPolicy":"Local"}`,
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, SessionAffinity: corev1.ServiceAffinityNone,
				Ports:                 []corev1.ServicePort{defaultedServicePort(80, corev1.ProtocolTCP, intstr.FromInt32(80))},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, InternalTrafficPolicy: cluster,
				AllocateLoadBalancerNodePorts: ptr.To(true),
			},
		},
		{
			name: "LoadBalancer without node ports",
			spec: `{"type":"LoadBalancer","ports":[{"port":80}],"allocateLoadBalancerNodePorts":false}`,
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, SessionAffinity: corev1.ServiceAffinityNone,
				Ports:                 []corev1.ServicePort{defaultedServicePort(80, corev1.ProtocolTCP, intstr.FromInt32(80))},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster, InternalTrafficPolicy: cluster,
				AllocateLoadBalancerNodePorts: ptr.To(false),
			},
		},
		{
			name: "ExternalName",
			spec: `{"type":"ExternalName","externalName":"db.example.com"}`,
			want: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com", SessionAffinity: corev1.ServiceAffinityNone},
		},
		{
			name: "ClientIP affinity",
			spec: `{"sessionAffinity":"ClientIP","ports":[{"port":80,"targetPort":8080}]}`,
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, SessionAffinity: corev1.ServiceAffinityClientIP,
				SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](10800)}},
				Ports:                 []corev1.ServicePort{defaultedServicePort(80, corev1.ProtocolTCP, intstr.FromInt32(8080))},
				InternalTrafficPolicy: cluster,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"default"},"spec":`+tt.spec+`}`)
			svc, ok := obj.(*corev1.Service)
			if !ok {
				t.Fatalf("Decode: got %T, want *corev1.Service", obj)
			}
			if diff := cmp.Diff(tt.want, svc.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeServiceDefaultsAsUpstream covers the parts of upstream's
// SetDefaults_Service (pkg/apis/core/v1/defaults.go) beyond the common case:
//   - externalTrafficPolicy defaults for every externally accessible
//     service, a ClusterIP one with externalIPs included
//     (service.ExternallyAccessible);
//   - sessionAffinity None drops sessionAffinityConfig;
//   - ClientIP affinity fills in a config without a timeout;
//   - a load balancer's ingress IPs get ipMode VIP.
func TestDecodeServiceDefaultsAsUpstream(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		check func(svc *corev1.Service) (got, want any)
	}{
		{
			name: "ClusterIP with externalIPs: externalTrafficPolicy",
			body: `"spec":{"externalIPs":["198.51.100.1"],"ports":[{"port":80}]}`,
			check: func(svc *corev1.Service) (any, any) {
				return svc.Spec.ExternalTrafficPolicy, corev1.ServiceExternalTrafficPolicyCluster
			},
		},
		{
			name: "sessionAffinity None: sessionAffinityConfig dropped",
			body: `"spec":{"sessionAffinity":"None","sessionAffinityConfig":{"clientIP":{"timeoutSeconds":60}},"ports":[{"port":80}]}`,
			check: func(svc *corev1.Service) (any, any) {
				return svc.Spec.SessionAffinityConfig, (*corev1.SessionAffinityConfig)(nil)
			},
		},
		{
			name: "ClientIP affinity with an empty config: timeout filled in",
			body: `"spec":{"sessionAffinity":"ClientIP","sessionAffinityConfig":{},"ports":[{"port":80}]}`,
			check: func(svc *corev1.Service) (any, any) {
				return svc.Spec.SessionAffinityConfig, &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](10800)}}
			},
		},
		{
			name: "load balancer ingress: ipMode VIP",
			body: `"spec":{"type":"LoadBalancer","ports":[{"port":80}]},"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.1"},{"hostname":"lb.example.com"}]}}`,
			check: func(svc *corev1.Service) (any, any) {
				return svc.Status.LoadBalancer.Ingress, []corev1.LoadBalancerIngress{
					{IP: "203.0.113.1", IPMode: ptr.To(corev1.LoadBalancerIPModeVIP)},
					{Hostname: "lb.example.com"},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"default"},`+tt.body+`}`)
			got, want := tt.check(obj.(*corev1.Service))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("defaulted value (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeVolumeDefaults(t *testing.T) {
	t.Run("persistent volume claim", func(t *testing.T) {
		obj := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","namespace":"default"},
			"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`)
		pvc := obj.(*corev1.PersistentVolumeClaim)
		got := []any{pvc.Spec.VolumeMode, pvc.Status.Phase}
		want := []any{ptr.To(corev1.PersistentVolumeFilesystem), corev1.ClaimPending}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("volumeMode, phase (-want +got):\n%s", diff)
		}
	})
	t.Run("persistent volume claim, explicit values", func(t *testing.T) {
		obj := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","namespace":"default"},
			"spec":{"volumeMode":"Block"},"status":{"phase":"Bound"}}`)
		pvc := obj.(*corev1.PersistentVolumeClaim)
		got := []any{pvc.Spec.VolumeMode, pvc.Status.Phase}
		want := []any{ptr.To(corev1.PersistentVolumeBlock), corev1.ClaimBound}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("volumeMode, phase (-want +got):\n%s", diff)
		}
	})
	t.Run("persistent volume", func(t *testing.T) {
		obj := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv-1"},
			"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"nfs":{"server":"nfs","path":"/x"}}}`)
		pv := obj.(*corev1.PersistentVolume)
		got := []any{pv.Spec.PersistentVolumeReclaimPolicy, pv.Spec.VolumeMode, pv.Status.Phase}
		want := []any{corev1.PersistentVolumeReclaimRetain, ptr.To(corev1.PersistentVolumeFilesystem), corev1.VolumePending}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("reclaimPolicy, volumeMode, phase (-want +got):\n%s", diff)
		}
	})
	t.Run("persistent volume, explicit reclaim policy", func(t *testing.T) {
		obj := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv-1"},"spec":{"persistentVolumeReclaimPolicy":"Delete"}}`)
		if got := obj.(*corev1.PersistentVolume).Spec.PersistentVolumeReclaimPolicy; got != corev1.PersistentVolumeReclaimDelete {
			t.Errorf("reclaimPolicy: got %q, want Delete", got)
		}
	})
}

// TestDecodePersistentVolumeHostPathDefault: upstream's generated
// SetObjectDefaults_PersistentVolume runs SetDefaults_HostPathVolumeSource,
// which sets hostPath.type to "" (HostPathUnset) when unset.
func TestDecodePersistentVolumeHostPathDefault(t *testing.T) {
	obj := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv-1"},"spec":{"hostPath":{"path":"/data"}}}`)
	if got := obj.(*corev1.PersistentVolume).Spec.HostPath.Type; got == nil || *got != corev1.HostPathUnset {
		t.Errorf("hostPath.type: got %v, want a pointer to \"\"", got)
	}
}

// TestDecodeInTreeSourceDefaults: a pod's volumes and a persistent
// volume's source get the defaults upstream's generated defaulters give
// the in-tree sources (their +default markers), and an image volume its
// pull policy as a container's image would; set values are kept.
func TestDecodeInTreeSourceDefaults(t *testing.T) {
	pod := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"i:1"}],"volumes":[
		{"name":"iscsi","iscsi":{"targetPortal":"p","iqn":"iqn.2001-04.com.example:s","lun":0}},
		{"name":"rbd","rbd":{"monitors":["m"],"image":"img","pool":"mine"}},
		{"name":"azure","azureDisk":{"diskName":"d","diskURI":"u"}},
		{"name":"scaleio","scaleIO":{"gateway":"g","system":"s","secretRef":{"name":"s"}}},
		{"name":"image","image":{"reference":"registry.example/data"}},
		{"name":"image-tagged","image":{"reference":"registry.example/data:1"}}]}}`).(*corev1.Pod)
	v := pod.Spec.Volumes
	got := []any{v[0].ISCSI.ISCSIInterface, v[1].RBD.RBDPool, v[1].RBD.RadosUser, v[1].RBD.Keyring,
		v[2].AzureDisk.CachingMode, v[2].AzureDisk.FSType, v[2].AzureDisk.ReadOnly, v[2].AzureDisk.Kind,
		v[3].ScaleIO.StorageMode, v[3].ScaleIO.FSType, v[4].Image.PullPolicy, v[5].Image.PullPolicy}
	want := []any{"default", "mine", "admin", "/etc/ceph/keyring",
		ptr.To(corev1.AzureDataDiskCachingReadWrite), ptr.To("ext4"), ptr.To(false), ptr.To(corev1.AzureSharedBlobDisk),
		"ThinProvisioned", "xfs", corev1.PullAlways, corev1.PullIfNotPresent}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod volumes (-want +got):\n%s", diff)
	}
	pv := decodeDefaulted(t, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv-1"},
		"spec":{"rbd":{"monitors":["m"],"image":"img","keyring":"/k"}}}`).(*corev1.PersistentVolume)
	if got, want := []string{pv.Spec.RBD.RBDPool, pv.Spec.RBD.RadosUser, pv.Spec.RBD.Keyring}, []string{"rbd", "admin", "/k"}; !cmp.Equal(got, want) {
		t.Errorf("persistent volume's rbd: got %v, want %v", got, want)
	}
}

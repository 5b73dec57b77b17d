package testserver_test

import (
	"net"
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

func TestStartServesAndStopReleasesThePort(t *testing.T) {
	s := testserver.Start(t)
	client := kubernetes.NewForConfigOrDie(s.Config)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	u, err := url.Parse(s.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		t.Fatalf("port %s still in use after Stop: %v", u.Host, err)
	}
	l.Close()
}

func TestRestartOnTheSameDataDirKeepsObjects(t *testing.T) {
	s := testserver.Start(t)
	client := kubernetes.NewForConfigOrDie(s.Config)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	s2 := testserver.Start(t, func(o *server.Options) { o.DataDir = s.DataDir })
	client = kubernetes.NewForConfigOrDie(s2.Config)
	if _, err := client.CoreV1().ConfigMaps("default").Get(t.Context(), "kept", metav1.GetOptions{}); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if s2.Config.BearerToken != s.Config.BearerToken {
		t.Errorf("admin token changed across restart")
	}
}

// Package testserver starts a miniapiserver inside a Go test: embedded etcd in
// t.TempDir(), HTTPS on a free loopback port, stopped by t.Cleanup.
//
//	func TestMyController(t *testing.T) {
//		s := testserver.Start(t)
//		client := kubernetes.NewForConfigOrDie(s.Config)
//		// ... client.CoreV1().ConfigMaps("default").Create(...)
//	}
//
// Options adjust the server before it starts:
//
//	s := testserver.Start(t, func(o *server.Options) { o.EtcdCompactionInterval = 0 })
//
// WithCRDs installs CustomResourceDefinitions from manifests and returns
// once they are served; WithGarbageCollector runs a garbage collector:
//
//	s := testserver.Start(t, testserver.WithCRDs("../config/crd/bases"), testserver.WithGarbageCollector())
package testserver

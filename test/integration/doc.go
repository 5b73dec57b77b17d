// Package integration tests the whole server, started in-process through
// pkg/testserver (or as the built binary), with client-go and the real kubectl.
// One file per concern; TestMain builds kubectl and miniapiserver once. The
// LIST, GET and WATCH semantics tests run on both storage paths, as the
// subtests "watchcache" and "etcd" (--watch-cache=false): forEachStoragePath.
package integration

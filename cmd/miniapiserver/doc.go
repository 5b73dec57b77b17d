// Command miniapiserver is a minimal Kubernetes API server with an embedded
// etcd, for tests and local work.
package main

// Command etcd is the etcd server of go.etcd.io/etcd/server/v3, at the version
// miniapiserver embeds, for hack/bench to run beside kube-apiserver. The etcd
// v3 module's own main lives in the go.etcd.io/etcd/v3 module, which also
// brings etcdctl and etcdutl; this is the same one line.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}

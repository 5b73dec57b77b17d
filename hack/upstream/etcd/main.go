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

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

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/pflag"
)

// runEnvtestAssets makes the directory of its one argument an envtest
// assets directory (KUBEBUILDER_ASSETS): kube-apiserver and etcd, links to
// this binary, and kubectl, a link to the kubectl beside it (make build's
// bin/kubectl) or else on the PATH; and prints its absolute path.
func runEnvtestAssets(args []string, out io.Writer) error {
	fs := pflag.NewFlagSet("miniapiserver envtest-assets", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "miniapiserver envtest-assets makes DIR/kube-apiserver, DIR/etcd and DIR/kubectl, links to this binary, and prints DIR:\n"+
			"controller-runtime's envtest (any version) and other harnesses run them as kube-apiserver's assets.\n\n"+
			"Usage:\n  KUBEBUILDER_ASSETS=\"$(miniapiserver envtest-assets DIR)\" go test ./...\n")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("envtest-assets: want one argument, the directory")
	}
	dir, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("envtest-assets: %w", err)
	}
	for _, name := range []string{personaKubeAPIServer, personaEtcd} {
		if err := link(self, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("envtest-assets: %w", err)
		}
	}
	kubectl, err := findKubectl(filepath.Dir(self))
	if err != nil {
		return fmt.Errorf("envtest-assets: %w", err)
	}
	if err := link(kubectl, filepath.Join(dir, "kubectl")); err != nil {
		return fmt.Errorf("envtest-assets: %w", err)
	}
	_, err = fmt.Fprintln(out, dir)
	return err
}

// findKubectl returns the kubectl in dir, or else the one on the PATH.
func findKubectl(dir string) (string, error) {
	beside := filepath.Join(dir, "kubectl")
	if fi, err := os.Stat(beside); err == nil && fi.Mode()&0o111 != 0 {
		return beside, nil
	}
	path, err := exec.LookPath("kubectl")
	if err != nil {
		return "", fmt.Errorf("no kubectl in %s nor on the PATH (make build builds bin/kubectl)", dir)
	}
	return filepath.Abs(path)
}

// link makes path a symbolic link to target, replacing a link that was
// there, but no other file.
func link(target, path string) error {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSymlink == 0 {
			return fmt.Errorf("%s exists and is not a link: remove it first", path)
		}
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	return os.Symlink(target, path)
}

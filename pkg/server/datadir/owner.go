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

package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// trusted are the files of a data dir the server trusts: whoever can write
// them can make himself its admin.
var trusted = []string{caCertFile, caKeyFile, servingCertFile, servingKeyFile, tokenFile, saKeyFile, kubeconfigFile, "etcd",
	frontProxyCACertFile, frontProxyCAKeyFile, frontProxyClientCertFile, frontProxyClientKeyFile}

// CheckOwned refuses a data dir, as ssh refuses its keys, unless it and the
// files it trusts in it (those that exist) belong to this process's user
// and none of them is writable by group or others: a dir another user made
// (in a shared /tmp, say) could hold a CA of theirs before the first start.
func CheckOwned(dir string) error {
	return checkOwned(dir, os.Geteuid())
}

func checkOwned(dir string, uid int) error {
	paths := []string{dir}
	for _, name := range trusted {
		paths = append(paths, filepath.Join(dir, name))
	}
	for i, path := range paths {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) && i > 0 {
			continue
		}
		if err != nil {
			return fmt.Errorf("--data-dir: %w", err)
		}
		if err := checkMode(path, fi, uid); err != nil {
			return err
		}
	}
	return nil
}

// checkMode refuses fi unless it is a directory or a regular file (not a
// link) owned by uid, and, a file, not writable by group or others (a
// directory of the server's is made private: Options.Config does).
func checkMode(path string, fi fs.FileInfo, uid int) error {
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return fmt.Errorf("--data-dir: %s is a %s, not a file the server made: refusing to trust it", path, fi.Mode().Type())
	}
	if owner, ok := ownerOf(fi); ok && owner != uid {
		return fmt.Errorf("--data-dir: %s belongs to user %d, not to this server's user (%d): refusing to trust it", path, owner, uid)
	}
	if !fi.IsDir() && fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("--data-dir: %s is writable by others (mode %s): refusing to trust it", path, fi.Mode().Perm())
	}
	return nil
}

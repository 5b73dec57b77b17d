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
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// lockFile in the data dir is flock(2)ed by the server using the dir and
// holds its PID. The kernel drops the lock when the process dies, however it dies.
const lockFile = "miniapiserver.lock"

// Lock is an exclusive lock on a data dir: one server per dir, as two
// would corrupt etcd's data and race on the certificates.
type Lock struct {
	file        *os.File
	releaseOnce sync.Once
}

// TakeLock takes dir's lock without waiting; if another server holds it,
// the error names dir and that server's PID.
func TakeLock(dir string) (*Lock, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking data dir %s: %w", dir, err)
	}
	switch locked, err := tryLock(f); {
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("locking data dir %s: %w", dir, err)
	case !locked:
		defer f.Close()
		return nil, fmt.Errorf("data dir %s is in use by another miniapiserver (pid %s)", dir, holder(f))
	}
	if err := writePID(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &Lock{file: f}, nil
}

// holder reads the PID a lock file names, or "unknown" (its holder may not have written it yet).
func holder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid := strings.TrimSpace(string(b[:n]))
	if _, err := strconv.Atoi(pid); err != nil {
		return "unknown"
	}
	return pid
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// Release empties the lock file and unlocks it. The file stays: removing it
// would let two servers lock two different files of the same name. It is
// safe to call more than once, and on nil.
func (l *Lock) Release() {
	if l == nil {
		return
	}
	l.releaseOnce.Do(func() {
		_ = l.file.Truncate(0)
		_ = l.file.Close() // closing the only descriptor drops the flock
	})
}

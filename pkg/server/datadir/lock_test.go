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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestDataDirLockIsExclusiveUntilReleased(t *testing.T) {
	dir := t.TempDir()
	first, err := TakeLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, lockFile))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(b)), strconv.Itoa(os.Getpid()); got != want {
		t.Errorf("lock file holds %q, want the holder's pid %s", got, want)
	}

	// flock locks belong to an open file, so a second lock fails in one process too.
	if second, err := TakeLock(dir); err == nil {
		second.Release()
		t.Fatal("second lock: got nil error, want the dir in use")
	} else if want := "data dir " + dir + " is in use by another miniapiserver (pid " + strconv.Itoa(os.Getpid()) + ")"; err.Error() != want {
		t.Errorf("second lock: got %q, want %q", err, want)
	}

	first.Release()
	first.Release() // idempotent
	again, err := TakeLock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again.Release()
	if b, err := os.ReadFile(filepath.Join(dir, lockFile)); err != nil || len(b) != 0 {
		t.Errorf("lock file after release: got %q, %v; want it empty", b, err)
	}
}

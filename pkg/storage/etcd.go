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

package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

// EtcdConfig configures an embedded etcd.
type EtcdConfig struct {
	// Dir holds etcd's data; required. It survives restarts.
	Dir string
	// ProgressNotifyInterval is how often etcd tells idle watchers its revision
	// (the watch cache relies on it to advance). Defaults to 5s, as kube deployments run it.
	ProgressNotifyInterval time.Duration
	// UnsafeNoFsync skips fsync: only for throwaway test data dirs.
	UnsafeNoFsync bool
	// StartTimeout bounds how long Start waits for etcd to be ready. Defaults to 60s.
	StartTimeout time.Duration
}

// Etcd is a running embedded etcd that only the process's own OS user can
// reach: it serves clients on a unix socket in a 0700 directory (its data
// dir, or a private temporary one if that path is too long for a socket),
// and has no peer listener, since it is a single member. On loopback TCP
// any local user could read and write every object, past authentication,
// validation and admission.
type Etcd struct {
	etcd      *embed.Etcd
	url       string
	cleanup   func()
	closeOnce sync.Once
	closing   *atomic.Bool
}

// walSegmentBytes is the size etcd preallocates for each WAL file: it
// keeps one in use and one ready, so a fresh data dir is about twice this.
// etcd's default, 64 MB, made every in-process test server leave over
// 120 MB on disk; an entry larger than a segment still fits (the segment
// grows), so a small segment only means more, smaller files.
const walSegmentBytes = 4 << 20

// smallSegments sets etcd's WAL segment size, a package variable of
// etcd's, once, before the first etcd of this process starts.
var smallSegments = sync.OnceFunc(func() { wal.SegmentSizeBytes = walSegmentBytes })

// maxSocketPath is the longest unix socket path every platform takes
// (sockaddr_un's sun_path is 104 bytes on macOS and BSDs, 108 on Linux,
// with the terminating NUL).
const maxSocketPath = 103

// socketPath returns where etcd's client socket goes for dataDir, and a
// func that removes what it made. The path is inside dataDir, unless that
// is too long for a socket: then it is inside a new private directory.
// A stale socket left by a killed process is removed (the caller owns the
// data dir).
func socketPath(dataDir string) (path string, cleanup func(), err error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", nil, fmt.Errorf("creating etcd data dir: %w", err)
	}
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return "", nil, fmt.Errorf("etcd data dir: %w", err)
	}
	path = filepath.Join(dataDir, "etcd.sock")
	if len(path) <= maxSocketPath {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", nil, fmt.Errorf("removing stale etcd socket: %w", err)
		}
		return path, func() { os.Remove(path) }, nil
	}
	dir, err := os.MkdirTemp("", "miniapiserver-etcd-") // 0700
	if err != nil {
		return "", nil, fmt.Errorf("etcd socket dir: %w", err)
	}
	return filepath.Join(dir, "etcd.sock"), func() { os.RemoveAll(dir) }, nil
}

// StartEtcd starts an embedded etcd on a unix socket only its user can
// reach (see Etcd) and waits until it serves.
func StartEtcd(ctx context.Context, c EtcdConfig) (e *Etcd, err error) {
	if c.Dir == "" {
		return nil, errors.New("etcd config: Dir is required")
	}
	smallSegments()
	if c.ProgressNotifyInterval == 0 {
		c.ProgressNotifyInterval = 5 * time.Second
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 60 * time.Second
	}
	if err := checkDatabase(c.Dir); err != nil {
		return nil, err
	}
	sock, cleanup, err := socketPath(c.Dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	cfg := embed.NewConfig()
	cfg.Name = "miniapiserver"
	cfg.Dir = c.Dir
	client := url.URL{Scheme: "unix", Path: sock}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	// A single member talks to no peer: no peer listener. The advertised
	// peer URL only names the member (its ID is derived from it on the
	// first start), so it stays what earlier versions advertised, and data
	// dirs made by them keep their member.
	cfg.ListenPeerUrls = nil
	cfg.AdvertisePeerUrls = []url.URL{{Scheme: "http", Host: "127.0.0.1:0"}}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// One member, no peers: a 10ms tick and the shortest election timeout
	// etcd allows (5 ticks) elect it leader 10-50ms after start, instead of
	// up to 1.1s with the defaults (raft waits a random 1-5 ticks once it has
	// advanced the rest). A lone member can't lose its leadership, so the
	// short timeout costs nothing. (A 5ms tick would save ~15ms more, for
	// half as much idle CPU again.)
	cfg.TickMs = 10
	cfg.ElectionMs = 50
	cfg.WatchProgressNotifyInterval = c.ProgressNotifyInterval
	// The apiserver's own compactor compacts, so CompactRevision() observes it.
	cfg.AutoCompactionRetention = "0"
	cfg.UnsafeNoFsync = c.UnsafeNoFsync
	closing := &atomic.Bool{}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(etcdLogger(klog.FromContext(ctx), closing))
	cfg.Metrics = "basic"

	ee, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", c.Dir, err)
	}
	defer func() {
		if err != nil {
			closing.Store(true)
			ee.Close()
		}
	}()
	timer := time.NewTimer(c.StartTimeout)
	defer timer.Stop()
	select {
	case <-ee.Server.ReadyNotify():
	case err := <-ee.Err():
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-timer.C:
		return nil, fmt.Errorf("embedded etcd not ready after %s", c.StartTimeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if len(ee.Clients) == 0 {
		return nil, errors.New("embedded etcd has no client listener")
	}
	return &Etcd{etcd: ee, url: client.String(), cleanup: cleanup, closing: closing}, nil
}

// checkDatabase returns an error naming etcd's database in dir if it is
// damaged in a way etcd does not report: a database cut short (a full disk,
// an interrupted copy) crashes etcd with SIGBUS when it reads past the end.
// Only the meta pages are read, so the check costs the same for any size.
func checkDatabase(dir string) error {
	path := filepath.Join(dir, "member", "snap", "db")
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // etcd creates it
	}
	if err != nil {
		return fmt.Errorf("etcd database: %w", err)
	}
	damaged := func(err error) error {
		return fmt.Errorf("etcd database %s is damaged (%w): restore it or remove %s to start empty", path, err, dir)
	}
	if fi.Size() == 0 {
		return damaged(errors.New("empty file"))
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, berrors.ErrTimeout) {
		return fmt.Errorf("etcd database %s is in use by another process", path)
	}
	if err != nil {
		return damaged(err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		if want := tx.Size(); fi.Size() < want {
			return damaged(fmt.Errorf("truncated: %d of %d bytes", fi.Size(), want))
		}
		return nil
	})
}

// URL is the client URL to dial, e.g. "unix:///data/etcd/etcd.sock".
func (e *Etcd) URL() string { return e.url }

// Close stops etcd and removes its socket. It is safe to call more than once.
func (e *Etcd) Close() {
	e.closeOnce.Do(func() {
		e.closing.Store(true)
		e.etcd.Close()
		e.cleanup()
	})
}

// etcdLogger logs etcd's errors only, to logger (the server's: in tests,
// the test's that started it), without stack traces (its info lines about
// every lease and snapshot show with -v=4), and drops the errors etcd logs
// about its own listeners closing while it shuts down and the harmless
// storage-version error of a fresh member.
func etcdLogger(logger klog.Logger, closing *atomic.Bool) *zap.Logger {
	level := zapcore.ErrorLevel
	verbose := klog.V(4).Enabled() // read once: etcd's goroutines must not read klog's state
	if verbose {
		level = zapcore.InfoLevel
	}
	return zap.New(shutdownFilter{logrCore{LevelEnabler: level, logger: logger.WithName("etcd")}, closing, verbose})
}

// logrCore is a zap core that writes to a logr logger: errors as errors,
// the rest as info lines at verbosity 4.
type logrCore struct {
	zapcore.LevelEnabler
	logger klog.Logger
	fields []zapcore.Field
}

func (c logrCore) With(fields []zapcore.Field) zapcore.Core {
	c.fields = append(slices.Clip(c.fields), fields...)
	return c
}

func (c logrCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c logrCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range append(slices.Clip(c.fields), fields...) {
		f.AddTo(enc)
	}
	var err error
	if v, ok := enc.Fields["error"]; ok {
		err = fmt.Errorf("%v", v)
		delete(enc.Fields, "error")
	}
	kv := make([]any, 0, 2*len(enc.Fields)+2)
	for _, k := range slices.Sorted(maps.Keys(enc.Fields)) {
		kv = append(kv, k, enc.Fields[k])
	}
	if e.LoggerName != "" {
		kv = append(kv, "component", e.LoggerName)
	}
	if e.Level >= zapcore.ErrorLevel {
		c.logger.Error(err, e.Message, kv...)
	} else {
		if err != nil {
			kv = append(kv, "error", err)
		}
		c.logger.V(4).Info(e.Message, kv...)
	}
	return nil
}

func (logrCore) Sync() error { return nil }

type shutdownFilter struct {
	zapcore.Core
	closing *atomic.Bool
	verbose bool
}

func (f shutdownFilter) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if f.closing.Load() && e.Message == "setting up serving from embedded etcd failed." {
		return ce
	}
	// A fresh member logs this until its first raft term is applied: it
	// is harmless, and etcd retries on its own.
	if e.Message == "failed to update storage version" && e.Level < zapcore.DPanicLevel && !f.verbose {
		return ce
	}
	return f.Core.Check(e, ce)
}

func (f shutdownFilter) With(fields []zapcore.Field) zapcore.Core {
	return shutdownFilter{f.Core.With(fields), f.closing, f.verbose}
}

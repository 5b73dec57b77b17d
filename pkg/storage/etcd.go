package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.etcd.io/etcd/server/v3/embed"
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

// Etcd is a running embedded etcd listening on loopback only.
type Etcd struct {
	etcd      *embed.Etcd
	url       string
	closeOnce sync.Once
	closing   *atomic.Bool
}

// StartEtcd starts an embedded etcd on free loopback ports and waits until it serves.
func StartEtcd(ctx context.Context, c EtcdConfig) (e *Etcd, err error) {
	if c.Dir == "" {
		return nil, errors.New("etcd config: Dir is required")
	}
	if c.ProgressNotifyInterval == 0 {
		c.ProgressNotifyInterval = 5 * time.Second
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 60 * time.Second
	}
	if err := checkDatabase(c.Dir); err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "miniapiserver"
	cfg.Dir = c.Dir
	// Port 0: the kernel picks free ports; the real client address is read back below.
	loopback := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls = []url.URL{loopback}
	cfg.AdvertiseClientUrls = []url.URL{loopback}
	cfg.ListenPeerUrls = []url.URL{loopback}
	cfg.AdvertisePeerUrls = []url.URL{loopback}
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
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(etcdLogger(closing))
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
	return &Etcd{etcd: ee, url: "http://" + ee.Clients[0].Addr().String(), closing: closing}, nil
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

// URL is the client URL to dial, e.g. "http://127.0.0.1:40123".
func (e *Etcd) URL() string { return e.url }

// Close stops etcd. It is safe to call more than once.
func (e *Etcd) Close() {
	e.closeOnce.Do(func() {
		e.closing.Store(true)
		e.etcd.Close()
	})
}

// etcdLogger logs etcd's errors only, without stack traces (its info lines
// about every lease and snapshot show with -v=4), and drops the errors etcd
// logs about its own listeners closing while it shuts down and the harmless
// storage-version error of a fresh member.
func etcdLogger(closing *atomic.Bool) *zap.Logger {
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(zap.ErrorLevel)
	if klog.V(4).Enabled() {
		cfg.Level = zap.NewAtomicLevelAt(zap.InfoLevel)
	}
	cfg.Sampling = nil
	cfg.DisableStacktrace = true   // an error line is enough for a user; -v=4 has the rest
	verbose := klog.V(4).Enabled() // read once: etcd's goroutines must not read klog's state
	l, err := cfg.Build(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return shutdownFilter{c, closing, verbose} }))
	if err != nil {
		return zap.NewNop()
	}
	return l
}

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

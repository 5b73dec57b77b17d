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
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	readyTimeout = 2 * time.Minute  // from exec to the ready line
	stopTimeout  = 30 * time.Second // from SIGTERM to exit, then SIGKILL
	stderrTail   = 4 << 10          // bytes of server stderr kept for errors
)

// server is one running miniapiserver process (or, started by launch, one
// of the processes of upstream kube-apiserver, see upstream.go).
type server struct {
	cmd        *exec.Cmd
	stderr     *tailWriter
	exited     chan struct{} // closed when cmd.Wait has returned
	waitErr    error         // cmd.Wait's result; read after exited is closed
	ready      time.Duration // from exec to the ready line
	banner     string        // the ready line
	kubeconfig string        // from the ready line

	stopAfter time.Duration // how long Stop waits before SIGKILL; 0: stopTimeout
	// diesOnSIGTERM: death by the SIGTERM Stop sent is a clean stop (etcd
	// re-raises it after its own shutdown).
	diesOnSIGTERM bool

	stopOnce sync.Once
	stopped  time.Duration // from SIGTERM to exit
	stopErr  error
}

// errStopTimeout is what Stop's error wraps when it had to kill the server.
var errStopTimeout = errors.New("server still running after SIGTERM")

// onOurs runs measure on a miniapiserver of its own (cfg's), on a fresh
// data dir under root (removed after), then stops it: onUpstream's twin.
func onOurs[T any](ctx context.Context, cfg config, root, name string, measure func(*server) (T, error)) (res T, err error) {
	dir := filepath.Join(root, name)
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	s, err := startServer(ctx, cfg, dir)
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	res, err = measure(s)
	if err = errors.Join(err, s.Stop()); err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

// startServer runs the binary on dataDir with a free port and waits for its
// ready line. On error the process has already been stopped.
func startServer(ctx context.Context, cfg config, dataDir string) (*server, error) {
	// No namespace defaults: kube-apiserver, which the bench compares with,
	// runs without kube-controller-manager, and the LISTs count ConfigMaps.
	args := append([]string{"--data-dir", dataDir, "--secure-port", "0", "--namespace-defaults=false"}, cfg.serverArgs...)
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating stdout pipe: %w", err)
	}
	began := time.Now()
	s, err := launch(cfg.server, args, w)
	w.Close()
	if err != nil {
		stdout.Close()
		return nil, err
	}
	if err := s.awaitReady(ctx, stdout, began); err != nil {
		if s.hasExited() {
			return nil, err
		}
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

// launch execs path with args in a process group of its own, its stdout
// to stdout (nil: discarded) and the tail of its stderr kept for errors.
// The returned server is not ready yet: its caller waits for that.
func launch(path string, args []string, stdout *os.File) (*server, error) {
	s := &server{
		cmd:    exec.Command(path, args...),
		stderr: &tailWriter{max: stderrTail},
		exited: make(chan struct{}),
	}
	s.cmd.Stderr, s.cmd.SysProcAttr = s.stderr, sysProcAttr()
	if stdout != nil {
		s.cmd.Stdout = stdout
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	go func() { s.waitErr = s.cmd.Wait(); close(s.exited) }()
	return s, nil
}

func (s *server) hasExited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// awaitReady reads stdout until the ready line, then drains and closes it.
func (s *server) awaitReady(ctx context.Context, stdout *os.File, began time.Time) error {
	lines := make(chan string, 1)
	go func() {
		defer stdout.Close()
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), " ready on ") {
				lines <- sc.Text()
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
		}
	}()
	timeout := time.NewTimer(readyTimeout)
	defer timeout.Stop()
	select {
	case line, ok := <-lines:
		if !ok {
			<-s.exited
			return fmt.Errorf("server exited before it was ready (%v)%s", s.waitErr, s.stderr.excerpt())
		}
		s.ready, s.banner = time.Since(began), line
		return s.parseBanner()
	case <-timeout.C:
		return fmt.Errorf("server not ready within %s", readyTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *server) parseBanner() error {
	_, path, ok := strings.Cut(s.banner, "KUBECONFIG=")
	if !ok || strings.TrimSpace(path) == "" {
		return fmt.Errorf("no KUBECONFIG=... in the ready line %q", s.banner)
	}
	s.kubeconfig = strings.TrimSpace(path)
	return nil
}

// version is the banner's leading "miniapiserver vX.Y.Z".
func (s *server) version() string {
	v, _, _ := strings.Cut(s.banner, " ready on ")
	return v
}

// restConfig is an admin client config without rate limits or short timeouts.
func (s *server) restConfig() (*rest.Config, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", s.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", s.kubeconfig, err)
	}
	rc.QPS, rc.Burst, rc.Timeout = -1, 1000, 5*time.Minute
	return rc, nil
}

// client is an admin clientset on restConfig.
func (s *server) client() (*kubernetes.Clientset, error) {
	rc, err := s.restConfig()
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return client, nil
}

// streamingClient is an admin clientset on a connection of its own, with
// no request timeout, for watches that stream as long as a run takes (or
// across a restart, or until the server exits). Close its HTTP client's
// idle connections when done (closeIdle).
func (s *server) streamingClient() (*kubernetes.Clientset, *http.Client, error) {
	rc, err := s.restConfig()
	if err != nil {
		return nil, nil, err
	}
	rc.Timeout = 0
	return ownClient(rc)
}

// Stop sends SIGTERM and waits for the exit, killing the process after
// stopAfter (default stopTimeout). A server that exits before Stop, or with
// an error, is an error. It is safe to call more than once.
func (s *server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *server) stop() error {
	if s.hasExited() {
		return fmt.Errorf("server exited unexpectedly (%v)%s", s.waitErr, s.stderr.excerpt())
	}
	began := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return errors.Join(fmt.Errorf("sending SIGTERM: %w", err), s.cmd.Process.Kill())
	}
	limit := s.stopAfter
	if limit == 0 {
		limit = stopTimeout
	}
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	select {
	case <-s.exited:
		s.stopped = time.Since(began)
		if s.waitErr != nil && !(s.diesOnSIGTERM && terminatedBy(s.waitErr, syscall.SIGTERM)) {
			return fmt.Errorf("server failed after SIGTERM (%w)%s", s.waitErr, s.stderr.excerpt())
		}
		return nil
	case <-timeout.C:
		err := s.cmd.Process.Kill()
		<-s.exited
		s.stopped = time.Since(began)
		return errors.Join(fmt.Errorf("%w %s; killed it%s", errStopTimeout, limit, s.stderr.excerpt()), err)
	}
}

// terminatedBy is whether a cmd.Wait error says the process died of sig.
func terminatedBy(err error, sig syscall.Signal) bool {
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return false
	}
	status, ok := exitErr.Sys().(interface {
		Signaled() bool
		Signal() syscall.Signal
	})
	return ok && status.Signaled() && status.Signal() == sig
}

// tailWriter keeps the last max bytes written to it. Read it only after the
// process has exited (cmd.Wait has returned).
type tailWriter struct {
	buf []byte
	max int
	cut bool // whether earlier output was dropped
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf, t.cut = t.buf[over:], true
	}
	return len(p), nil
}

// excerpt formats the kept stderr for an error message.
func (t *tailWriter) excerpt() string {
	tail := string(t.buf)
	if _, rest, ok := strings.Cut(tail, "\n"); t.cut && ok {
		tail = rest // drop the partial first line
	}
	if tail = strings.TrimRight(tail, "\n"); tail == "" {
		return ""
	}
	return "; last server stderr:\n" + tail
}

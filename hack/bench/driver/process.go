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

package driver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	readyTimeout = 2 * time.Minute  // from exec to ready
	stopTimeout  = 30 * time.Second // from SIGTERM to exit, then SIGKILL
	stderrTail   = 4 << 10          // bytes of stderr kept for errors
)

// process is one running server process: miniapiserver, kube-apiserver or
// etcd.
type process struct {
	cmd     *exec.Cmd
	stderr  *tailWriter
	exited  chan struct{} // closed when cmd.Wait has returned
	waitErr error         // cmd.Wait's result; read after exited is closed

	// diesOnSIGTERM: death by the SIGTERM stop sent is a clean stop (etcd
	// re-raises it after its own shutdown).
	diesOnSIGTERM bool

	stopOnce sync.Once
	stopped  time.Duration // from SIGTERM to exit
	stopErr  error
}

// errStopTimeout is what stop's error wraps when it had to kill the process.
var errStopTimeout = errors.New("still running after SIGTERM")

// launch execs path with args in a process group of its own, its stdout
// to stdout (nil: discarded) and the tail of its stderr kept for errors.
func launch(path string, args []string, stdout *os.File) (*process, error) {
	p := &process{
		cmd:    exec.Command(path, args...),
		stderr: &tailWriter{max: stderrTail},
		exited: make(chan struct{}),
	}
	p.cmd.Stderr, p.cmd.SysProcAttr = p.stderr, sysProcAttr()
	if stdout != nil {
		p.cmd.Stdout = stdout
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	go func() { p.waitErr = p.cmd.Wait(); close(p.exited) }()
	return p, nil
}

// launchUntilReady launches path and waits for the line on its stdout that
// holds " ready on " (miniapiserver's), which it returns.
func launchUntilReady(ctx context.Context, path string, args []string) (*process, string, error) {
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, "", fmt.Errorf("creating stdout pipe: %w", err)
	}
	p, err := launch(path, args, w)
	w.Close()
	if err != nil {
		stdout.Close()
		return nil, "", err
	}
	line, err := p.awaitReadyLine(ctx, stdout)
	if err != nil && !p.hasExited() {
		err = errors.Join(err, p.stop(stopTimeout))
	}
	return p, line, err
}

func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// awaitReadyLine reads stdout until the ready line, then drains and closes it.
func (p *process) awaitReadyLine(ctx context.Context, stdout *os.File) (string, error) {
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
			<-p.exited
			return "", fmt.Errorf("server exited before it was ready (%v)%s", p.waitErr, p.stderr.excerpt())
		}
		return line, nil
	case <-timeout.C:
		return "", fmt.Errorf("server not ready within %s", readyTimeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// stop sends SIGTERM and waits for the exit, killing the process after
// limit. A process that exited before, or exits with an error, is an error.
// It is safe to call more than once; later calls return the first's result.
func (p *process) stop(limit time.Duration) error {
	p.stopOnce.Do(func() { p.stopErr = p.doStop(limit) })
	return p.stopErr
}

func (p *process) doStop(limit time.Duration) error {
	if p.hasExited() {
		return fmt.Errorf("exited unexpectedly (%v)%s", p.waitErr, p.stderr.excerpt())
	}
	began := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return errors.Join(fmt.Errorf("sending SIGTERM: %w", err), p.cmd.Process.Kill())
	}
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	select {
	case <-p.exited:
		p.stopped = time.Since(began)
		if p.waitErr != nil && !(p.diesOnSIGTERM && terminatedBy(p.waitErr, syscall.SIGTERM)) {
			return fmt.Errorf("failed after SIGTERM (%w)%s", p.waitErr, p.stderr.excerpt())
		}
		return nil
	case <-timeout.C:
		err := p.cmd.Process.Kill()
		<-p.exited
		p.stopped = time.Since(began)
		return errors.Join(fmt.Errorf("%w %s; killed it%s", errStopTimeout, limit, p.stderr.excerpt()), err)
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

// EnvtestAssets makes dir an envtest assets directory of the miniapiserver
// binary bin (its envtest-assets command: kube-apiserver, etcd, kubectl)
// and returns its path.
func EnvtestAssets(bin, dir string) (string, error) {
	out, err := exec.Command(bin, "envtest-assets", dir).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Errorf("%s envtest-assets: %w: %s", bin, err, exit.Stderr)
		}
		return "", fmt.Errorf("%s envtest-assets: %w", bin, err)
	}
	return strings.TrimSpace(string(out)), nil
}

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

package testserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// LogsEnv, set to a klog verbosity (e.g. MINIAPISERVER_TEST_LOGS=2), makes
// the servers' info lines up to that verbosity appear in the log of the
// test that started them. Errors always do.
const LogsEnv = "MINIAPISERVER_TEST_LOGS"

// The servers log through klog, which is process-wide. Quiet by default:
// importing testserver routes klog to a logger that drops info lines
// (unless LogsEnv asks for them) and sends errors to the servers' tests.
// Each server also gets a logger of its own, in the context it runs
// with (klog.FromContext), which the server puts into every request's
// context too: what is logged through it reaches that server's test only,
// whatever else runs in parallel. A line logged through klog's global
// functions says no server: it goes to every running server's test (to
// stderr while none runs). It is installed at init, before any goroutine
// can log, because klog.SetLogger must not race with logging; klog output
// from the test itself goes the same way.
var router = &logRouter{}

func init() { router.install() }

type logRouter struct {
	once sync.Once
	// verbosity is the highest info level shown (from LogsEnv); -1: none.
	verbosity int

	// mu guards live.
	mu   sync.RWMutex
	live []*serverLog
}

// serverLog is what one running server's test receives.
type serverLog struct {
	// out writes a line to the test's log; nil writes errors to stderr
	// and drops info lines.
	out func(args ...any)
	// mu guards errs, last, repeats and done.
	mu   sync.Mutex
	errs []string
	// last is the line last handed to out; repeats counts the lines equal
	// to it since, which out gets as one line when another line comes or
	// the server stops (a flood of one error must not hide the test's
	// failure at the end of its log).
	last    string
	repeats int
	// done: the server has stopped, and its test may have ended.
	done bool
}

func newServerLog(out func(args ...any)) *serverLog { return &serverLog{out: out} }

// write records line (an error if isError) and hands it to the test,
// unless the server has stopped.
func (l *serverLog) write(line string, isError bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	if isError {
		l.errs = append(l.errs, line)
	}
	if line == l.last {
		l.repeats++
		return
	}
	l.flushRepeats()
	l.last = line
	switch {
	case l.out != nil:
		l.out(line)
	case isError:
		fmt.Fprintln(os.Stderr, line)
	}
}

// flushRepeats says how many times the last line came again, if it did.
func (l *serverLog) flushRepeats() {
	if l.repeats == 0 {
		return
	}
	line := fmt.Sprintf("(the line above repeated: %d more)", l.repeats)
	l.repeats = 0
	switch {
	case l.out != nil:
		l.out(line)
	case strings.HasPrefix(l.last, "E "):
		fmt.Fprintln(os.Stderr, line)
	}
}

// stop flushes what is pending and drops every later line.
func (l *serverLog) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushRepeats()
	l.done = true
}

// logger is the server's own logger: its lines reach l only.
func (l *serverLog) logger() logr.Logger {
	return logr.New(&routerSink{verbosity: router.verbosity, write: l.write})
}

func (r *logRouter) install() {
	r.once.Do(func() {
		r.verbosity = -1
		if v := os.Getenv(LogsEnv); v != "" {
			if _, err := fmt.Sscan(v, &r.verbosity); err != nil {
				r.verbosity = 0
			}
		}
		klog.SetLogger(logr.New(&routerSink{verbosity: r.verbosity, write: r.write}))
	})
}

// add routes the global log lines to l until the returned func is called
// (once the server has stopped, before its test ends).
func (r *logRouter) add(l *serverLog) func() {
	r.mu.Lock()
	r.live = append(r.live, l)
	r.mu.Unlock()
	return func() {
		l.stop()
		r.mu.Lock()
		defer r.mu.Unlock()
		for i, x := range r.live {
			if x == l {
				r.live = append(r.live[:i], r.live[i+1:]...)
				return
			}
		}
	}
}

// write hands a global line to every live server's test; with none,
// errors go to stderr.
func (r *logRouter) write(line string, isError bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if len(r.live) == 0 {
		if isError {
			fmt.Fprintln(os.Stderr, line)
		}
		return
	}
	for _, l := range r.live {
		l.write(line, isError)
	}
}

// routerSink is a logr.LogSink that formats lines for write.
type routerSink struct {
	verbosity int
	write     func(line string, isError bool)
	name      string
	values    []any
}

func (s *routerSink) Init(logr.RuntimeInfo) {}

func (s *routerSink) Enabled(level int) bool { return level <= s.verbosity }

func (s *routerSink) Info(level int, msg string, kv ...any) {
	s.write(s.format("I", msg, kv), false)
}

func (s *routerSink) Error(err error, msg string, kv ...any) {
	if shutdownRace(msg, err) {
		s.write(s.format("I", msg, append([]any{"err", err}, kv...)), false)
		return
	}
	s.write(s.format("E", msg, append([]any{"err", err}, kv...)), true)
}

// shutdownRace reports whether msg is an error upstream's code logs
// through klog when a server's stop cancels what it was doing: nothing
// went wrong, and it is kept as an info line (LoggedErrors leaves it out).
// k8s.io/apiserver's compactor (storage/etcd3/compact.go, runWatchLoop)
// reads compact_rev_key a second after it starts, and logs the read a stop
// cancelled. Priority and fairness's config controller
// (util/flowcontrol/apf_controller.go) may patch a FlowSchema's status
// once more after the stop's wait for those writes (see
// server.flowSchemaStatusTimeout) has seen them all: its write to the
// server's own port is refused only once that port is closed. An
// informer's reflector (client-go's tools/cache) whose watch ended as the
// stop cancelled its context may start the next one before it sees that,
// and logs the request's context canceled error.
func shutdownRace(msg string, err error) bool {
	return strings.Contains(msg, `get "compact_rev_key" failed: context canceled`) ||
		msg == "Failed to watch" && errors.Is(err, context.Canceled) ||
		strings.Contains(msg, "failed to set a status.condition for FlowSchema") && strings.Contains(msg, "connect: connection refused")
}

func (s *routerSink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.values = append(append([]any(nil), s.values...), kv...)
	return &c
}

func (s *routerSink) WithName(name string) logr.LogSink {
	c := *s
	if s.name != "" {
		c.name = s.name + "/" + name
	} else {
		c.name = name
	}
	return &c
}

func (s *routerSink) format(severity, msg string, kv []any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s miniapiserver", severity)
	if s.name != "" {
		fmt.Fprintf(&b, " [%s]", s.name)
	}
	fmt.Fprintf(&b, ": %s", msg)
	kv = append(append([]any(nil), s.values...), kv...)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%q", kv[i], fmt.Sprint(kv[i+1]))
	}
	return b.String()
}

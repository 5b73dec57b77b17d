package testserver

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// LogsEnv, set to a klog verbosity (e.g. MINIAPISERVER_TEST_LOGS=2), makes
// the servers' info lines up to that verbosity appear in the log of the
// test that started them. Errors always do.
const LogsEnv = "MINIAPISERVER_TEST_LOGS"

// The servers log through klog, which is process-wide. Quiet by default:
// importing testserver routes klog to a logger that drops info lines
// (unless LogsEnv asks for them) and writes errors to the t.Log of the
// tests whose servers are running (to stderr while none is), so that a
// test's -v output is its own. It is installed at init, before any
// goroutine can log, because klog.SetLogger must not race with logging;
// klog output from the test itself goes the same way.
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
	t testing.TB
	// mu guards errs.
	mu   sync.Mutex
	errs []string
}

func (r *logRouter) install() {
	r.once.Do(func() {
		r.verbosity = -1
		if v := os.Getenv(LogsEnv); v != "" {
			if _, err := fmt.Sscan(v, &r.verbosity); err != nil {
				r.verbosity = 0
			}
		}
		klog.SetLogger(logr.New(&routerSink{router: r}))
	})
}

// add routes logs to t until the returned func is called (before t ends).
func (r *logRouter) add(t testing.TB) (*serverLog, func()) {
	l := &serverLog{t: t}
	r.mu.Lock()
	r.live = append(r.live, l)
	r.mu.Unlock()
	return l, func() {
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

// write hands line to every live server's test (under the read lock, so
// never after a test has removed itself); with none, errors go to stderr.
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
		if isError {
			l.mu.Lock()
			l.errs = append(l.errs, line)
			l.mu.Unlock()
		}
		l.t.Log(line)
	}
}

// routerSink is a logr.LogSink over the router.
type routerSink struct {
	router *logRouter
	name   string
	values []any
}

func (s *routerSink) Init(logr.RuntimeInfo) {}

func (s *routerSink) Enabled(level int) bool { return level <= s.router.verbosity }

func (s *routerSink) Info(level int, msg string, kv ...any) {
	s.router.write(s.format("I", msg, kv), false)
}

func (s *routerSink) Error(err error, msg string, kv ...any) {
	s.router.write(s.format("E", msg, append([]any{"err", err}, kv...)), true)
}

func (s *routerSink) WithValues(kv ...any) logr.LogSink {
	return &routerSink{router: s.router, name: s.name, values: append(append([]any(nil), s.values...), kv...)}
}

func (s *routerSink) WithName(name string) logr.LogSink {
	if s.name != "" {
		name = s.name + "/" + name
	}
	return &routerSink{router: s.router, name: name, values: s.values}
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

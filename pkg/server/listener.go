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

package server

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/waitgroup"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// closingListener tracks the connections it accepts so that shutdown can
// close them once the server has stopped listening and its in-flight
// requests have drained (the watches were ended before, by the
// "end-watches" hook): every connection is idle then. Without it, Go's
// HTTP/2 server waits a second after its GOAWAY for each client to close
// an idle connection, and a connection that misses the GOAWAY holds the
// shutdown for its whole 60 s timeout.
type closingListener struct {
	net.Listener
	// drained blocks until the server's in-flight requests have drained.
	drained   func()
	closeOnce sync.Once

	// mu guards conns.
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

func newClosingListener(l net.Listener, drained func()) *closingListener {
	return &closingListener{Listener: l, drained: drained, conns: map[*trackedConn]struct{}{}}
}

func (l *closingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	l.mu.Lock()
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	return tc, nil
}

// Close stops listening (the HTTP server's Shutdown calls it first), then,
// in the background, closes every connection once requests have drained.
func (l *closingListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() {
		go func() {
			l.drained()
			l.closeQuietConns()
		}()
	})
	return err
}

// Once the handlers have returned, the HTTP/2 server may still be writing
// what they wrote (a watch's final bookmark) from its own goroutine: a
// connection is closed only once nothing has been written to it for
// quietFor, or after quietWait whatever it does. (Clients close most
// connections themselves after the server's GOAWAY.)
const (
	quietFor  = 10 * time.Millisecond
	quietWait = 2 * time.Second
)

func (l *closingListener) closeQuietConns() {
	deadline := time.Now().Add(quietWait)
	for {
		l.mu.Lock()
		conns := make([]*trackedConn, 0, len(l.conns))
		for c := range l.conns {
			conns = append(conns, c)
		}
		l.mu.Unlock()
		if len(conns) == 0 {
			return
		}
		now := time.Now()
		for _, c := range conns {
			if now.After(deadline) || now.Sub(time.Unix(0, c.lastWrite.Load())) >= quietFor {
				c.Close()
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// trackedConn forgets itself when closed, and remembers its last write.
type trackedConn struct {
	net.Conn
	l         *closingListener
	once      sync.Once
	lastWrite atomic.Int64 // unix nanoseconds
}

func (c *trackedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.lastWrite.Store(time.Now().UnixNano())
	return n, err
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return err
}

// watchHandlers counts the watch requests being served, so that shutdown
// closes connections only once every watch handler has written its last
// event (a final bookmark) and returned.
type watchHandlers struct {
	wg waitgroup.SafeWaitGroup
}

// wrap counts the watch requests h serves; it goes inside the generic
// filters, which resolve the request's verb.
func (w *watchHandlers) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if info, ok := request.RequestInfoFrom(req.Context()); ok && info.Verb == "watch" {
			if err := w.wg.Add(1); err == nil { // refused once shutdown waits
				defer w.wg.Done()
			}
		}
		h.ServeHTTP(rw, req)
	})
}

// wait waits until every watch handler has returned, for at most timeout
// (a watch the shutdown did not end must not hold it).
func (w *watchHandlers) wait(timeout time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

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

package serving

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/waitgroup"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/endpoints/responsewriter"
)

// ClosingListener tracks the connections it accepts so that shutdown can
// close them once the server has stopped listening and its in-flight
// requests have drained (the watches were ended before, by the
// "end-watches" hook): every connection is idle then. Without it, Go's
// HTTP/2 server waits a second after its GOAWAY for each client to close
// an idle connection, and a connection that misses the GOAWAY holds the
// shutdown for its whole 60 s timeout.
type ClosingListener struct {
	net.Listener
	// drained blocks until the server's in-flight requests have drained.
	drained   func()
	closeOnce sync.Once
	// closing is set by Close, and closed is closed once it has closed
	// every connection.
	closing atomic.Bool
	closed  chan struct{}

	// mu guards conns.
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

func NewClosingListener(l net.Listener, drained func()) *ClosingListener {
	return &ClosingListener{Listener: l, drained: drained, closed: make(chan struct{}), conns: map[*trackedConn]struct{}{}}
}

// Accept returns the next connection. Once the listener is closed, it
// returns its error only after every connection is closed too: the HTTP
// server's Serve returns then, and its Shutdown, which waits for Serve
// before it polls for idle connections (at intervals that double from
// 1 ms), finds them gone at once instead of at its next poll.
func (l *ClosingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		if l.closing.Load() {
			<-l.closed
		}
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
func (l *ClosingListener) Close() error {
	l.closing.Store(true)
	err := l.Listener.Close()
	l.closeOnce.Do(func() {
		go func() {
			defer close(l.closed)
			l.drained()
			l.closeQuietConns()
		}()
	})
	return err
}

// Once the handlers have returned, the HTTP/2 server may still be writing
// what they wrote (a watch's final bookmark, the answer of a request held
// until then) from its own goroutine: a connection is closed only once
// nothing has been written to it for quietFor since the handlers returned,
// or after quietWait whatever it does. (Clients close most connections
// themselves after the server's GOAWAY.)
const (
	quietFor  = 10 * time.Millisecond
	quietWait = 2 * time.Second
)

func (l *ClosingListener) closeQuietConns() {
	drained := time.Now()
	deadline := drained.Add(quietWait)
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
			// A connection last written before the handlers returned
			// (its request held until then) gets quietFor from then.
			lastWrite := max(c.lastWrite.Load(), drained.UnixNano())
			if now.After(deadline) || now.Sub(time.Unix(0, lastWrite)) >= quietFor {
				c.Close()
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// LastWrite returns when the connection from remoteAddr (a request's
// RemoteAddr) was last written to; false if the listener has no such
// connection.
func (l *ClosingListener) LastWrite(remoteAddr string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		if c.RemoteAddr().String() == remoteAddr {
			return time.Unix(0, c.lastWrite.Load()), true
		}
	}
	return time.Time{}, false
}

// trackedConn forgets itself when closed, and remembers its last write.
type trackedConn struct {
	net.Conn
	l         *ClosingListener
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

// WatchHandlers counts the watch requests being served, so that shutdown
// closes connections only once every watch handler has written its last
// event (a final bookmark) and returned.
type WatchHandlers struct {
	// ConnWritten, if set, returns when the connection from a remote
	// address was last written to (ClosingListener.LastWrite).
	ConnWritten func(remoteAddr string) (time.Time, bool)

	wg      waitgroup.SafeWaitGroup
	mu      sync.Mutex
	writers map[*watchWriter]struct{}
}

// wrap counts the watch requests h serves; it goes inside the generic
// filters, which resolve the request's verb.
func (w *WatchHandlers) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if info, ok := request.RequestInfoFrom(req.Context()); !ok || info.Verb != "watch" {
			h.ServeHTTP(rw, req)
			return
		}
		if err := w.wg.Add(1); err != nil { // refused once shutdown waits
			h.ServeHTTP(rw, req)
			return
		}
		defer w.wg.Done()
		ww := &watchWriter{ResponseWriter: rw, remoteAddr: req.RemoteAddr}
		w.mu.Lock()
		if w.writers == nil {
			w.writers = map[*watchWriter]struct{}{}
		}
		w.writers[ww] = struct{}{}
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			delete(w.writers, ww)
			w.mu.Unlock()
		}()
		h.ServeHTTP(responsewriter.WrapForHTTP1Or2(ww), req)
	})
}

// stalledWrite is how long a watch's write may stay blocked, once
// shutdown waits for the handlers, with nothing written to its connection
// meanwhile, before it is cut off: the client is not reading (a final
// bookmark is a few bytes). A write blocked while its connection is being
// written to waits behind the others: HTTP/2 writes the frames of a
// connection's streams one at a time, and a hundred watches' final
// bookmarks take longer than that on a loaded machine. Cut off, such a
// watch would end with a stream reset its client reports as an error.
const stalledWrite = 200 * time.Millisecond

// wait waits until every watch handler has returned, for at most timeout
// (a watch the shutdown did not end must not hold it). A handler whose
// write has been blocked for stalledWrite gets a write deadline of now,
// which ends the write and so the handler: a client that stopped reading
// does not hold the shutdown either.
func (w *WatchHandlers) Wait(timeout time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.wg.Wait()
	}()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-deadline.C:
			return
		case now := <-tick.C:
			w.cutStalled(now)
		}
	}
}

// cutStalled cuts off the stalled writes and returns how many it cut.
func (w *WatchHandlers) cutStalled(now time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	cut := 0
	for ww := range w.writers {
		began := ww.writing.Load()
		if began == 0 || now.Sub(time.Unix(0, began)) < stalledWrite {
			continue
		}
		if w.ConnWritten != nil {
			if last, ok := w.ConnWritten(ww.remoteAddr); ok && now.Sub(last) < stalledWrite {
				continue
			}
		}
		_ = http.NewResponseController(ww.ResponseWriter).SetWriteDeadline(now)
		cut++
	}
	return cut
}

// watchWriter is a watch's response writer that knows since when its
// current write or flush has been blocked.
type watchWriter struct {
	http.ResponseWriter
	remoteAddr string
	writing    atomic.Int64 // unix nanoseconds the write in progress began; 0: none
}

func (w *watchWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *watchWriter) Write(b []byte) (int, error) {
	w.writing.Store(time.Now().UnixNano())
	defer w.writing.Store(0)
	return w.ResponseWriter.Write(b)
}

func (w *watchWriter) Flush() {
	w.writing.Store(time.Now().UnixNano())
	defer w.writing.Store(0)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

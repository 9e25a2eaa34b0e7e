package adaptors

import (
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Writer writes a connection's output queue (Out) to it, from two places:
// the behavior's goroutine at Flush (WriteNow), as far as the socket takes
// it without blocking, which saves a thread hand-off per answer; and the
// connection's writer goroutine (Write), which waits for the peer. Output
// stays in order: whoever writes holds the lock, and what one took and
// could not write goes before anything else. A peer that does not read is
// found by the outbox, as before.
type Writer struct {
	Out *Outbox
	c   net.Conn
	raw syscall.RawConn // nil: everything is left to the writer goroutine
	// encode appends an item of Out as it goes on the wire.
	encode func(dst []byte, item string) []byte
	held   *Held // where Send marks the writer; nil: Send wakes the writer

	mu      sync.Mutex
	pending []byte
	taken   []string
	ended   bool // Write's extra went out: nothing more is written
}

// NewWriter returns the writer of c's queue out. With held, Send holds
// output until held's Flush; encode appends an item as it is written.
func NewWriter(c net.Conn, out *Outbox, held *Held, encode func(dst []byte, item string) []byte) *Writer {
	w := &Writer{Out: out, c: c, held: held, encode: encode}
	if sc, ok := c.(syscall.Conn); ok && held != nil {
		w.raw, _ = sc.SyscallConn()
	}
	return w
}

// Send queues an item the behavior sends: held until Flush, or with the
// writer woken when there is no Held. False: the peer is not reading (see
// Outbox) or the queue is closed.
func (w *Writer) Send(item string) bool {
	if w.held == nil {
		return w.Out.Put(item)
	}
	ok, first := w.Out.Add(item)
	if ok && first {
		w.held.add(w)
	}
	return ok
}

// Write writes what is pending and queued, then extra (nil: nothing; a
// close frame, the last thing written: what is sent after it, until the
// connection is closed, is not), waiting for the peer up to timeout. It is
// the writer goroutine's.
func (w *Writer) Write(timeout time.Duration, extra []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return nil
	}
	w.takeLocked()
	w.pending = append(w.pending, extra...)
	w.ended = extra != nil
	if len(w.pending) == 0 {
		return nil
	}
	_ = w.c.SetWriteDeadline(time.Now().Add(timeout))
	_, err := w.c.Write(w.pending)
	w.pending = trim(w.pending)
	if err != nil {
		return err
	}
	// No deadline between writes: WriteNow's raw write would fail on a
	// past one.
	_ = w.c.SetWriteDeadline(time.Time{})
	return nil
}

// WriteNow writes what is queued on the caller's goroutine as far as the
// socket takes it without blocking. What does not fit, and everything
// while the writer goroutine writes or has something pending, is left to
// it.
func (w *Writer) WriteNow() {
	if w.raw == nil || !w.mu.TryLock() {
		w.Out.Signal()
		return
	}
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	if len(w.pending) > 0 {
		w.Out.Signal()
		return
	}
	w.takeLocked()
	if len(w.pending) == 0 {
		return
	}
	var n int
	var werr error
	err := w.raw.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), w.pending)
		return true // never wait: what is left is the writer's
	})
	if err == nil && werr == nil && n == len(w.pending) {
		w.pending = trim(w.pending)
		return
	}
	if n > 0 {
		w.pending = w.pending[:copy(w.pending, w.pending[n:])]
	}
	w.Out.Signal() // the writer writes the rest, or finds the error
}

// Written reports whether everything queued has been written.
func (w *Writer) Written() bool {
	if _, empty := w.Out.Quiet(); !empty {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending) == 0
}

// takeLocked moves what is queued to the end of pending; mu is held.
func (w *Writer) takeLocked() {
	w.taken = w.Out.Take(w.taken)
	for _, item := range w.taken {
		w.pending = w.encode(w.pending, item)
	}
	clear(w.taken)
}

// trim empties a written buffer, letting a large one go.
func trim(b []byte) []byte {
	if cap(b) > 64<<10 {
		return nil
	}
	return b[:0]
}

// Held is an adaptor's list of writers with output held since its last
// Flush (FlushingSink).
type Held struct {
	mu    sync.Mutex
	list  []*Writer
	any   atomic.Bool // list is not empty: a Flush with nothing to do takes no lock
	flush sync.Mutex  // one Flush at a time: it owns spare
	spare []*Writer   // the list's other buffer
}

// NewHeld returns the list for an adaptor opened with sink, or nil when
// sink does not call Flush: then output is written as it is sent.
func NewHeld(sink Sink) *Held {
	if fs, ok := sink.(FlushingSink); ok && fs.Flushes() {
		return &Held{}
	}
	return nil
}

func (h *Held) add(w *Writer) {
	h.mu.Lock()
	h.list = append(h.list, w)
	h.any.Store(true)
	h.mu.Unlock()
}

// Flush writes what was sent since the last Flush (WriteNow).
func (h *Held) Flush() {
	if h == nil || !h.any.Load() {
		return // a behavior flushes every adaptor after each pass; most have nothing
	}
	h.flush.Lock()
	defer h.flush.Unlock()
	h.mu.Lock()
	list := h.list
	h.list = h.spare[:0]
	h.any.Store(false)
	h.mu.Unlock()
	for _, w := range list {
		w.WriteNow()
	}
	clear(list)
	h.spare = list
}

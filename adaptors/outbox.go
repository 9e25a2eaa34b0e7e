package adaptors

import (
	"sync"
	"time"
)

// Output queue limits (Tuning overrides them).
const (
	// DefaultQueueBytes is the bound of each connection's output queue: a
	// queue may stay above it only while its peer keeps reading.
	DefaultQueueBytes = 1 << 20
	// DefaultStallTime is how long a queue may stay above its bound with
	// nothing taken by the writer before the peer counts as not reading.
	DefaultStallTime = 2 * time.Second
	// HardQueueFactor times the bound is what a queue may never pass, to
	// keep memory bounded while a burst outruns even a reading peer.
	HardQueueFactor = 8
)

// Outbox is a connection's output queue, bounded in bytes. Add and Put
// never block. The bound is for peers that stopped reading, not for
// bursts: a queue may go above it, and a send fails only when the queue
// has stayed above it for the stall time without the writer taking
// anything (the peer does not read), or when it would pass HardQueueFactor
// times the bound. The writer takes everything queued at once, so writes
// batch under load; a queue past half its bound wakes the writer at once
// even when its owner holds output until Flush.
type Outbox struct {
	mu        sync.Mutex
	items     []string
	bytes     int
	max       int
	stall     time.Duration
	overSince time.Time // when the queue went above max; zero while below
	wake      chan struct{}
	closed    bool
	added     uint64 // everything ever queued, for Quiet
}

// NewOutbox returns an outbox bounded by t.QueueBytes (DefaultQueueBytes
// if 0) and t.StallTime (DefaultStallTime if 0).
func NewOutbox(t Tuning) *Outbox {
	o := &Outbox{max: t.QueueBytes, stall: t.StallTime, wake: make(chan struct{}, 1)}
	if o.max <= 0 {
		o.max = DefaultQueueBytes
	}
	if o.stall <= 0 {
		o.stall = DefaultStallTime
	}
	return o
}

// Put queues s and wakes the writer; it reports false if the peer is not
// reading (see Outbox) or the outbox is closed.
func (o *Outbox) Put(s string) bool {
	ok, _ := o.Add(s)
	if ok {
		o.Signal()
	}
	return ok
}

// Add queues s without waking the writer (Signal does), unless the queue
// passes half its bound; first reports whether the outbox was empty before.
func (o *Outbox) Add(s string) (ok, first bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false, false
	}
	if n := o.bytes + len(s); n > o.max && len(o.items) > 0 {
		now := time.Now()
		switch {
		case n > HardQueueFactor*o.max:
			return false, false
		case o.overSince.IsZero():
			o.overSince = now
		case now.Sub(o.overSince) > o.stall:
			return false, false
		}
	}
	first = len(o.items) == 0
	o.added++
	o.items = append(o.items, s)
	o.bytes += len(s)
	if o.bytes > o.max/2 {
		o.Signal() // a burst: start writing now, not at the end of the pass
	}
	return true, first
}

// Signal wakes the writer.
func (o *Outbox) Signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Wait returns a channel that receives after Put.
func (o *Outbox) Wait() <-chan struct{} { return o.wake }

// Take moves everything queued into dst (reused) and returns it.
func (o *Outbox) Take(dst []string) []string {
	o.mu.Lock()
	dst = append(dst[:0], o.items...)
	clear(o.items)
	o.items = o.items[:0]
	o.bytes = 0
	o.overSince = time.Time{}
	o.mu.Unlock()
	return dst
}

// Quiet returns how many items were ever queued and whether none waits:
// the same count twice, apart, with none waiting, means nothing was sent
// in between.
func (o *Outbox) Quiet() (added uint64, empty bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.added, len(o.items) == 0
}

// Close makes later Puts fail.
func (o *Outbox) Close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

// Max returns the bound in bytes.
func (o *Outbox) Max() int { return o.max }

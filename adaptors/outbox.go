package adaptors

import "sync"

// DefaultQueueBytes bounds each connection's output queue.
const DefaultQueueBytes = 1 << 20

// Outbox is a connection's output queue, bounded in bytes. Put never
// blocks: it fails when the bound would be exceeded, which means the peer
// has stopped reading (a busy but healthy peer drains it). The writer
// takes everything queued at once, so writes batch under load.
type Outbox struct {
	mu     sync.Mutex
	items  []string
	bytes  int
	max    int
	wake   chan struct{}
	closed bool
}

// NewOutbox returns an outbox of at most max bytes (DefaultQueueBytes if
// max <= 0).
func NewOutbox(max int) *Outbox {
	if max <= 0 {
		max = DefaultQueueBytes
	}
	return &Outbox{max: max, wake: make(chan struct{}, 1)}
}

// Put queues s and wakes the writer; it reports false if the outbox is
// full or closed.
func (o *Outbox) Put(s string) bool {
	ok, _ := o.Add(s)
	if ok {
		o.Signal()
	}
	return ok
}

// Add queues s without waking the writer (Signal does); first reports
// whether the outbox was empty before.
func (o *Outbox) Add(s string) (ok, first bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.bytes+len(s) > o.max && len(o.items) > 0 {
		return false, false
	}
	first = len(o.items) == 0
	o.items = append(o.items, s)
	o.bytes += len(s)
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
	o.mu.Unlock()
	return dst
}

// Close makes later Puts fail.
func (o *Outbox) Close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

// Max returns the bound in bytes.
func (o *Outbox) Max() int { return o.max }

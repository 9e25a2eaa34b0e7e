package interpreter

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/scxml"
)

// item is one entry of the event queue: an event, a batch of events read
// together, the end of an input, or a function to run on the machine's
// goroutine (Sync).
type item struct {
	ev    adaptors.Event
	batch []adaptors.Event
	eof   bool
	fn    func()
	// at is when the item reached the queue. A timer due at D runs after
	// every item that arrived before D (SEATML §5: arrival order).
	at time.Time
}

// events is how many events the item counts for against the queue's bound.
func (it *item) events() int {
	switch {
	case it.batch != nil:
		return len(it.batch)
	case it.fn != nil || it.eof:
		return 0
	}
	return 1
}

// eventQueue is a machine's one queue. Its input lane holds what others
// deliver: items in arrival order, bounded in events (not items: a batch
// of 64 lines counts 64). A producer that would pass the bound waits, so
// a fast peer is slowed down by TCP flow control instead of losing
// events; an item larger than the bound is taken when the queue is empty.
// The machine looks at the head before taking it, to order input against
// its timers. Its own lane holds what an SCXML document sends itself and
// the documents it invoked (the sessions' external queues): only the
// machine's goroutine touches it, and it never blocks, as a document
// cannot wait for itself; the document's behavior takes it a slice at a
// time, at a yielding timer, so that input that arrived first goes first.
type eventQueue struct {
	own    scxml.FIFO
	mu     sync.Mutex
	items  []item
	head   int
	events int
	limit  int
	wake   chan struct{}   // holds one token while items may be waiting
	space  chan struct{}   // closed when events are taken; nil when no one waits
	done   <-chan struct{} // closed when the machine has stopped
}

func newEventQueue(limit int, done <-chan struct{}) *eventQueue {
	return &eventQueue{limit: limit, wake: make(chan struct{}, 1), done: done}
}

// push appends it, waiting while the queue holds too many events, and
// wakes the machine's goroutine. It fails once ctx ends or the machine has
// stopped.
func (q *eventQueue) push(ctx context.Context, it item) error {
	if err := q.add(ctx, it); err != nil {
		return err
	}
	q.signal()
	return nil
}

// signal wakes the machine's goroutine.
func (q *eventQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// add appends it without waking anyone: for a producer that then runs the
// machine itself, or leaves the item to the one running it.
func (q *eventQueue) add(ctx context.Context, it item) error {
	n := it.events()
	q.mu.Lock()
	for n > 0 && q.events > 0 && q.events+n > q.limit {
		if q.space == nil {
			q.space = make(chan struct{})
		}
		space := q.space
		q.mu.Unlock()
		select {
		case <-space:
		case <-ctx.Done():
			return ctx.Err()
		case <-q.done:
			return errStopped
		}
		q.mu.Lock()
	}
	select {
	case <-q.done: // the machine has drained its queue for the last time
		q.mu.Unlock()
		return errStopped
	default:
	}
	if q.head > 0 && len(q.items) == cap(q.items) {
		k := copy(q.items, q.items[q.head:])
		clear(q.items[k:])
		q.items = q.items[:k]
		q.head = 0
	}
	q.items = append(q.items, it)
	q.events += n
	q.mu.Unlock()
	return nil
}

// prepend puts items ahead of everything queued, past the bound (the
// events a replaced version left, at most its own queue's worth), and
// wakes the machine's goroutine.
func (q *eventQueue) prepend(items []item) {
	q.mu.Lock()
	q.items = append(slices.Clone(items), q.items[q.head:]...)
	q.head = 0
	for i := range items {
		q.events += items[i].events()
	}
	q.mu.Unlock()
	q.signal()
}

// peek returns when the head item arrived, if there is one.
func (q *eventQueue) peek() (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		return time.Time{}, false
	}
	return q.items[q.head].at, true
}

// pop takes the head item, if there is one, and lets waiting producers on.
func (q *eventQueue) pop() (item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		return item{}, false
	}
	it := q.items[q.head]
	q.items[q.head] = item{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	q.events -= it.events()
	if q.space != nil {
		close(q.space)
		q.space = nil
	}
	return it, true
}

// empty reports whether no item is waiting.
func (q *eventQueue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.head == len(q.items)
}

// len returns how many events are queued.
func (q *eventQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.events
}

// describe lists the first max queued events, as "source: text" (a
// batch's each), for the debugger.
func (q *eventQueue) describe(max int) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []string
	add := func(ev adaptors.Event) {
		if len(out) < max {
			out = append(out, ev.Source+": "+ev.Text)
		}
	}
	for _, it := range q.items[q.head:] {
		switch {
		case it.batch != nil:
			for _, ev := range it.batch {
				add(ev)
			}
		case it.fn == nil && !it.eof:
			add(it.ev)
		}
	}
	return out
}

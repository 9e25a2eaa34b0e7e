package adaptors

import (
	"sync"
	"sync/atomic"
)

// A Baton is the reading of one input (a connection, standard input) by
// one goroutine at a time. A reader that finds its behavior idle runs the
// behavior itself inside Sink.Deliver (one hand-off fewer per event), and
// reads nothing meanwhile. When the behavior then works long (a slow
// script), the sink calls Pass: the reading goes on at once on a new
// goroutine, which reads and stamps what arrives while the script runs,
// so an answer that arrived before a deadline still comes before the
// timeout (docs/seatml.md "Order"). The goroutine that passed the baton
// returns when Deliver does. A reader loop looks like:
//
//	leg := b.Take()
//	for {
//		line, err := r.Next()
//		...
//		leg.Deliver()
//		err = sink.Deliver(ctx, ev)
//		if !leg.Delivered() {
//			return // the reading went on elsewhere
//		}
//	}
//
// and the sink, on the goroutine that delivered:
//
//	leg := b.Holder() // before its event is queued
//	...               // the event is queued (which may wait for room)
//	if leg.Run() {    // this goroutine now runs the behavior
//		...           // a slow script calls leg.Pass() from any goroutine
//		leg.Ran()
//	}
//
// Only a holder that runs the behavior is passed on: one that waits inside
// Deliver for room in a full queue still holds its event, and a reader
// started meanwhile would race it to the queue with the next (reordered
// lines), or meet the end of input and close the connection while it
// still held one.
type Baton struct {
	leg  atomic.Pointer[Leg]
	goOn func() // starts the reader's loop again on a new goroutine
}

// A Leg is one goroutine's hold of a Baton.
type Leg struct {
	s atomic.Uint32
	b *Baton
}

const (
	legReading uint32 = iota
	legDelivering
	legRunning
	legPassed
)

// NewBaton returns a baton whose Pass calls goOn, which must start the
// reader's loop (beginning with Take) on a new goroutine.
func NewBaton(goOn func()) *Baton { return &Baton{goOn: goOn} }

// ReadOn returns the baton of a reader loop, read, which a Pass starts
// again on a new goroutine counted in wg (nil: not waited for).
func ReadOn(wg *sync.WaitGroup, read func()) *Baton {
	return NewBaton(func() {
		if wg != nil {
			wg.Add(1)
		}
		go func() {
			if wg != nil {
				defer wg.Done()
			}
			read()
		}()
	})
}

// Take makes the calling goroutine the reader.
func (b *Baton) Take() *Leg {
	l := &Leg{b: b}
	b.leg.Store(l)
	return l
}

// Holder returns the reader's leg: called by the sink on the goroutine
// that delivers, it is that goroutine's.
func (b *Baton) Holder() *Leg {
	if b == nil {
		return nil
	}
	return b.leg.Load()
}

// Deliver marks the reader as handing an event to its sink.
func (l *Leg) Deliver() { l.s.Store(legDelivering) }

// Delivered reports, once the sink has returned, whether the caller is
// still the reader; false means the baton was passed and the caller must
// leave the reading (and the connection's clean-up) to the new holder.
func (l *Leg) Delivered() bool { return l.s.CompareAndSwap(legDelivering, legReading) }

// Run marks the holder, inside Deliver with its event queued, as running
// the behavior: until Ran, Pass may pass its reading on. It reports false
// (nothing to pass) when the holder is not delivering: its reading was
// passed already, or the event is not one it read (its departure).
func (l *Leg) Run() bool {
	return l != nil && l.s.CompareAndSwap(legDelivering, legRunning)
}

// Ran marks the holder as no longer running the behavior.
func (l *Leg) Ran() { l.s.CompareAndSwap(legRunning, legDelivering) }

// Pass moves the reading to a new goroutine if its holder is running the
// behavior (between Run and Ran); otherwise it does nothing. Safe from any
// goroutine.
func (l *Leg) Pass() {
	if l != nil && l.s.CompareAndSwap(legRunning, legPassed) {
		l.b.goOn()
	}
}

// BatonHolder is implemented by connections (Event.From) whose reader
// runs the behavior on its own goroutine and can pass its reading on.
type BatonHolder interface {
	Baton() *Baton
}

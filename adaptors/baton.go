package adaptors

import "sync/atomic"

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
type Baton struct {
	leg  atomic.Pointer[Leg]
	goOn func() // starts the reader's loop again on a new goroutine
}

// A Leg is one goroutine's hold of a Baton.
type Leg struct {
	s atomic.Uint32
}

const (
	legReading uint32 = iota
	legDelivering
	legPassed
)

// NewBaton returns a baton whose Pass calls goOn, which must start the
// reader's loop (beginning with Take) on a new goroutine.
func NewBaton(goOn func()) *Baton { return &Baton{goOn: goOn} }

// Take makes the calling goroutine the reader.
func (b *Baton) Take() *Leg {
	l := new(Leg)
	b.leg.Store(l)
	return l
}

// Deliver marks the reader as handing an event to its sink.
func (l *Leg) Deliver() { l.s.Store(legDelivering) }

// Delivered reports, once the sink has returned, whether the caller is
// still the reader; false means the baton was passed and the caller must
// leave the reading (and the connection's clean-up) to the new holder.
func (l *Leg) Delivered() bool { return l.s.CompareAndSwap(legDelivering, legReading) }

// Pass moves the reading to a new goroutine if its holder is inside the
// sink; otherwise it does nothing. Safe from any goroutine.
func (b *Baton) Pass() {
	if l := b.leg.Load(); l != nil && l.s.CompareAndSwap(legDelivering, legPassed) {
		b.goOn()
	}
}

// BatonHolder is implemented by connections (Event.From) whose reader
// runs the behavior on its own goroutine and can pass its reading on.
type BatonHolder interface {
	Baton() *Baton
}

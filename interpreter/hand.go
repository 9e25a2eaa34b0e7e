package interpreter

// Driving a machine by hand, on a virtual clock: seat test (and seat
// replay, which runs a recording as a transcript) and the benchmarks.

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/interpreter/statechart"
)

// Hand drives a machine by hand. seat test delivers input, waits until
// it is handled (Settle) and moves a virtual clock from timer to timer
// (NextTimer, Advance); the benchmarks step a machine without its loop
// (Begin, Dispatch). A machine's other users never need it.
type Hand struct {
	m     *Machine
	clock *FakeClock
}

// NewHand returns a hand for m, whose Options.Clock is clock (nil for
// Begin and Dispatch alone). For Settle to handle device events, m's
// Options.ManualDevices is set.
func NewHand(m *Machine, clock *FakeClock) *Hand { return &Hand{m: m, clock: clock} }

// Machine returns the machine the hand drives.
func (h *Hand) Machine() *Machine { return h.m }

// Begin enters the initial state without opening adaptors or starting the
// event loop, so that Dispatch can drive the machine synchronously. A
// machine that Begins must not Run.
func (h *Hand) Begin() {
	m := h.m
	m.running.Store(true)
	m.b.begin()
	close(m.ready)
}

// Dispatch handles one event on the caller's goroutine (after Begin):
// matching, actions, transitions, as the event loop would.
func (h *Hand) Dispatch(ev adaptors.Event) { h.m.handleEvent(ev) }

// Settle waits until the machine has handled what was delivered before,
// and what that caused (an SCXML document's own queued events), then,
// on the machine's goroutine, handles the device events waiting and runs
// fn, if set; a host of sessions waits for each session likewise. fn may
// call PostEvent and Advance.
func (h *Hand) Settle(ctx context.Context, fn func()) error {
	m := h.m
	err := m.Sync(ctx, func() {
		m.settle()
		if fn != nil {
			fn()
		}
	})
	if err != nil || m.host == nil {
		return err
	}
	for _, s := range m.host.list() {
		if err := s.m.Sync(ctx, s.m.settle); err != nil && !errors.Is(err, errStopped) {
			return err
		}
	}
	return nil
}

// settle handles, on the machine's goroutine, its own work that is due
// and the device events waiting, until neither is left.
func (m *Machine) settle() {
	m.runOwnWork()
	for range 1000 { // a rule that writes the key it matches would loop
		if m.pumpDevices() == 0 {
			break
		}
		m.runOwnWork()
	}
}

// ErrNotSCXML is returned by PostEvent for a SEATML behavior.
var ErrNotSCXML = errors.New("the behavior is SEATML, not an SCXML document: it takes events from its adaptors")

// ErrSessionHost is returned by PostEvent for a behavior that runs a
// session per peer: a named event has no session to go to.
var ErrSessionHost = errors.New("the behavior runs a session per peer (session=): a named event has no session to go to; send it from a peer")

// PostEvent hands an SCXML document the external event name, with data
// as its _event.data (nil for none), as a seat test transcript's @event
// step does, and handles what it causes, as an adaptor's event is
// handled. Call it from Settle's fn. A SEATML behavior has no named
// events from outside: ErrNotSCXML.
func (h *Hand) PostEvent(name string, data any) error {
	m := h.m
	if m.host != nil {
		return ErrSessionHost
	}
	r, ok := m.b.(*scxmlRun)
	if !ok {
		return ErrNotSCXML
	}
	m.turn++
	prev := m.cc
	m.cc = nil // no peer: seat.reply has no one to answer
	defer func() { m.cc = prev }()
	r.sys.Post(r.s, &statechart.Event{Name: name, Type: statechart.External, Data: data})
	r.settled(r.drain(0))
	r.schedule()
	return nil
}

// NextTimer returns when the machine's next timer is due, if one is
// armed; for a host, the earliest its sessions have armed.
func (h *Hand) NextTimer(ctx context.Context) (time.Time, bool) {
	m := h.m
	var next time.Time
	if m.host == nil {
		_ = m.Sync(ctx, func() { next, _ = m.timers.next() })
		return next, !next.IsZero()
	}
	for _, s := range m.host.list() {
		_ = s.m.Sync(ctx, func() {
			if t, ok := s.m.timers.next(); ok && (next.IsZero() || t.Before(next)) {
				next = t
			}
		})
	}
	return next, !next.IsZero()
}

// Advance runs, in order, every timer due up to until, moving the clock
// to each as it comes: seat test's "+1h" in one call instead of one
// round trip per tick. Call it from Settle's fn. It stops early, with the
// time reached, when stop reports true (asked every 16 timers: an onexec
// that takes milliseconds must not run far past a limit) or the run ends
// (seat.exit); ran counts the timers run.
func (h *Hand) Advance(until time.Time, stop func() bool) (reached time.Time, ran int) {
	m, clock := h.m, h.clock
	for !m.over() {
		due, ok := m.timers.next()
		if !ok || due.After(until) {
			break
		}
		if d := due.Sub(clock.Now()); d > 0 {
			clock.Advance(d)
		}
		m.fireFirst()
		for range 1000 { // device events its actions caused, as Settle does
			if !m.devicePending() || m.pumpDevices() == 0 {
				break
			}
		}
		m.flushAdaptors()
		if ran++; ran%16 == 0 && stop() {
			return clock.Now(), ran
		}
	}
	if d := until.Sub(clock.Now()); d > 0 && !m.over() {
		clock.Advance(d)
	}
	return clock.Now(), ran
}

// pumpDevices handles the device events waiting in their buffers, memory
// keys first (in the order of their subscriptions' prefixes), then motion
// outcomes; it reports how many it handled. It is for
// Options.ManualDevices and runs on the machine's goroutine.
func (m *Machine) pumpDevices() int {
	if m.dev == nil {
		return 0
	}
	m.dev.mu.Lock()
	subs := make([]*hal.Subscription, 0, len(m.dev.subs))
	for _, p := range slices.Sorted(maps.Keys(m.dev.subs)) {
		subs = append(subs, m.dev.subs[p])
	}
	m.dev.mu.Unlock()
	n := 0
	for _, s := range subs {
		for drained := false; !drained; {
			select {
			case e := <-s.C():
				m.handleEvent(adaptors.Event{Source: "memory", Key: e.Key, Text: e.Text(), Time: m.clock.Now()})
				n++
			default:
				drained = true
			}
		}
	}
	for {
		select {
		case e := <-m.dev.events:
			m.handleEvent(adaptors.Event{Source: "motion", Key: e.Key(), Text: e.Text, Time: m.clock.Now()})
			n++
		default:
			m.flushAdaptors()
			return n
		}
	}
}

// devicePending reports whether a device event waits for pumpDevices
// (cheaper than pumping when none does: Advance asks after every tick).
func (m *Machine) devicePending() bool {
	if m.dev == nil {
		return false
	}
	if len(m.dev.events) > 0 {
		return true
	}
	m.dev.mu.Lock()
	defer m.dev.mu.Unlock()
	for _, s := range m.dev.subs {
		if len(s.C()) > 0 {
			return true
		}
	}
	return false
}

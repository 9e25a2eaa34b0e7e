package interpreter

// Internal events: raised by lists and scripts (and by a failed script,
// as error.execution), handled after the event, timer or list that
// raised them, within bounds.

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/statechart"
	"github.com/seatml/seat/schema"
)

// scriptFailed tells of a script, cond or callback that failed (what:
// "script", "cond", "onentry" ...), and raises error.execution for the
// rules that hear it.
func (m *env) scriptFailed(err error, what string) {
	if m.wants(kError) { // the problem is built only for an observer
		m.fail(problemOf(what+" failed", err))
	}
	if m.prog.HearsInternal {
		m.raise("error.execution", err.Error(), nil) // for rules of source "event"
	}
}

// raise puts an internal event on the queue: the rules of source "event"
// handle it (its name is the lookup text, data its text) once the event,
// timer or list being handled is done, before anything else. at says
// where it was raised, for the errors of drainInternal. The queue holds
// at most Options.QueueLen: past it the event is dropped, and counted
// for one error once the queue is drained.
func (m *env) raise(name, data string, at fmt.Stringer) {
	if m.sc.InternalLen() >= m.opts.QueueLen {
		m.unqueued.add(name, at)
		return
	}
	var d any // as little as says it: a <raise>'s is its place, a pointer (no allocation)
	switch pos, isPos := at.(*schema.Pos); {
	case at == nil && data != "":
		d = data
	case isPos && data == "":
		d = pos
	case at != nil:
		d = raised{text: data, at: at}
	}
	m.sc.Raise(&statechart.Event{Name: name, Type: statechart.Internal, Data: d})
}

// raised is the data of an internal event the machine raised with both
// a text and a place.
type raised struct {
	text string
	at   fmt.Stringer
}

// placeText is a place given as text (a Lua script's file:line).
type placeText string

func (p placeText) String() string { return string(p) }

// droppedEvents counts internal events dropped for one reason, and names
// the first: its name and where it was raised.
type droppedEvents struct {
	n     int
	first string
	at    fmt.Stringer
}

func (d *droppedEvents) add(name string, at fmt.Stringer) {
	if d.n == 0 {
		d.first, d.at = name, at
	}
	d.n++
}

// log logs one error for the events dropped, if any, and forgets them.
func (d *droppedEvents) log(m *env, msg string, limit int) {
	if d.n == 0 {
		return
	}
	fields := []zap.Field{zap.String("event", d.first), zap.Int("limit", limit), zap.Int("dropped", d.n), zap.String("state", m.stateName())}
	if d.at != nil { // not for the engine's own events, such as done.state
		fields = append(fields, zap.String("raised_at", d.at.String()))
	}
	m.log.Error(msg, fields...)
	*d = droppedEvents{}
}

// drainInternal handles the internal events raised so far, and those they
// raise in turn. A chain (each event raised while the one before it was
// handled) is cut past maxChain events deep; events raised side by side
// are bounded by the queue (raise); and at most maxInternal are handled
// in all, so that a fan-out (each event raising two) ends too. depths
// holds each waiting event's depth in its chain, in the queue's order: 1
// for those raised by the event, timer or list just handled, d+1 for
// those raised while an event of depth d was handled (by its rules or by
// the engine, as done.state).
func (m *seatmlBehavior) drainInternal() {
	m.depths = m.depths[:0]
	for range m.sc.InternalLen() {
		m.depths = append(m.depths, 1)
	}
	var deep, many droppedEvents
	for next := 0; m.exitCode == nil; next++ {
		ev := m.sc.NextInternal()
		if ev == nil {
			break
		}
		var text string
		var at fmt.Stringer
		switch d := ev.Data.(type) {
		case raised:
			text, at = d.text, d.at
		case *schema.Pos:
			at = d
		case string: // error.execution's message
			text = d
		}
		depth := m.depths[next]
		switch {
		case depth > maxChain:
			deep.add(ev.Name, at)
			continue
		case next >= maxInternal:
			many.add(ev.Name, at)
			continue
		}
		before := m.sc.InternalLen()
		iev := adaptors.Event{Source: seatml.InternalSource, Key: ev.Name, Text: text}
		m.received(&iev)
		m.handleOne(&iev)
		for range m.sc.InternalLen() - before {
			m.depths = append(m.depths, depth+1)
		}
	}
	if cap(m.depths) > 4*m.opts.QueueLen {
		m.depths = nil // a fan-out's: not kept for the next
	}
	if deep.n+many.n+m.unqueued.n > 0 { // (no message is formatted for nothing)
		deep.log(m.env, fmt.Sprintf("internal events cut: a chain of %d, each raised while handling the one before (a rule that raises the event it handles?)", maxChain), maxChain)
		many.log(m.env, fmt.Sprintf("internal events cut: %d handled after one event, timer or list (each raising more than one?)", maxInternal), maxInternal)
		m.unqueued.log(m.env, fmt.Sprintf("internal event queue full: raised events dropped (at most %d wait at once)", m.opts.QueueLen), m.opts.QueueLen)
	}
}

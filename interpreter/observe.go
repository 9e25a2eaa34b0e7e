package interpreter

import (
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// Observer is told what a machine does, in order, by whoever runs the
// machine (one at a time): seat run --record writes it down and the live
// monitor shows it. Observe must not block, and must not take a lock that
// anything else may hold while it waits for something.
type Observer interface {
	Observe(Record)
}

// A Watcher is an Observer that is not always watching: while Watching
// reports false the machine builds no records for it, so that watching
// costs nothing while nobody watches (the live monitor with no page open).
// Watching is called on the event path and must be cheap (an atomic load).
type Watcher interface {
	Observer
	Watching() bool
}

// watching reports whether the machine's observer wants records now.
func (m *env) watching() bool {
	if m.watcher != nil {
		return m.watcher.Watching()
	}
	return m.opts.Observer != nil
}

// RecordKind is what a Record reports.
type RecordKind string

// Record kinds.
const (
	RecIn         RecordKind = "in"         // an event arrived and is handled
	RecConnect    RecordKind = "connect"    // a peer connected
	RecDisconnect RecordKind = "disconnect" // a peer left
	RecOut        RecordKind = "out"        // a message was sent (or a reply, with Peer)
	RecFire       RecordKind = "fire"       // a rule or widget fired (At)
	RecState      RecordKind = "state"      // a state was entered
	RecTimer      RecordKind = "timer"      // a timeout, onexec tick or delayed send ran (Timer)
	RecAnswer     RecordKind = "answer"     // a service answered seat.call (Source), as JSON, or with Key "error" the call failed (Text: why); its request is the RecOut before
	RecRaise      RecordKind = "raise"      // an internal event the behavior raised is handled (Key: its name, Text: its data); a replay raises it again itself
	RecCut        RecordKind = "cut"        // seat stopping stopped a script of the event being handled: that event was not handled, and a replay leaves it out
)

// Record is one thing a machine did.
type Record struct {
	Time time.Time
	Kind RecordKind
	// Source is the adaptor of an event or message: "memory" and "motion"
	// for device events, "gui" for a page's widget.
	Source string
	Peer   string
	Text   string
	// Message marks an event whose Text is a structured message (a ROS
	// message, adaptors.Event.Data) written as JSON.
	Message bool
	// Key is a device event's key, or a widget event's id.
	Key string
	// At is where the rule or widget that fired is written.
	At schema.Pos
	// State is the state entered, or the state a timer ran in.
	State string
	// Timer is "timeout" or "onexec", or "delay" for an SCXML document's
	// delayed <send>.
	Timer string
}

// observe tells the observer, if there is one.
func (m *env) observe(r Record) {
	if m.opts.Observer == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = m.clock.Now()
	}
	m.opts.Observer.Observe(r)
}

// observeEvent reports an event about to be handled.
func (m *env) observeEvent(ev *adaptors.Event) {
	// An event is timed by its arrival, which orders it against timers.
	r := Record{Time: ev.Time, Kind: RecIn, Source: ev.Source, Text: ev.Text, Key: ev.Key, Message: ev.Data != nil}
	if ev.Source == "gui" {
		r.Key = ev.ID
	}
	switch {
	case ev.Source == seatml.InternalSource:
		r.Kind, r.Source = RecRaise, ""
	case ev.Kind == adaptors.Connected:
		r.Kind = RecConnect
	case ev.Kind == adaptors.Disconnected:
		r.Kind = RecDisconnect
	}
	if ev.From != nil {
		r.Peer = ev.From.Peer()
	}
	m.observe(r)
}

// Observers combines observers; nil ones are left out.
func Observers(list ...Observer) Observer {
	var out multiObserver
	for _, o := range list {
		if o != nil {
			out = append(out, o)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}

type multiObserver []Observer

func (m multiObserver) Observe(r Record) {
	for _, o := range m {
		if w, ok := o.(Watcher); !ok || w.Watching() {
			o.Observe(r)
		}
	}
}

// Watching reports whether any of the observers watches.
func (m multiObserver) Watching() bool {
	for _, o := range m {
		if w, ok := o.(Watcher); !ok || w.Watching() {
			return true
		}
	}
	return false
}

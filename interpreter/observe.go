package interpreter

import (
	"strconv"
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
	return m.obs != nil
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

	// The details: a trace (Options.Trace) shows them; the recorder and
	// the monitor leave them out (Detail).
	RecExit    RecordKind = "exit"    // a state was exited (State)
	RecStep    RecordKind = "step"    // a lifecycle step or callback ran, or a call went out (Text: "lua:open", "onLoad", "call:srv" ...)
	RecHandler RecordKind = "handler" // an onconnect or ondisconnect list runs (Key: which, Source: its adaptor)
	RecKey     RecordKind = "key"     // a keyed event is looked up (Source, Key)
)

// Detail reports whether records of kind k are details, which only a
// trace shows.
func (k RecordKind) Detail() bool {
	switch k {
	case RecExit, RecStep, RecHandler, RecKey:
		return true
	}
	return false
}

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
	// Op says what an "out" record is other than a message sent: "reply"
	// (to the event's peer), "call" (seat.call's request), "result" or
	// "cancel" (to a goal). A recording does not keep it.
	Op string
}

// TraceLine is the line a trace (Options.Trace) shows for a record; ""
// for none.
func TraceLine(r Record) string {
	switch r.Kind {
	case RecState:
		return "enter:" + r.State
	case RecExit:
		return "exit:" + r.State
	case RecStep:
		return r.Text
	case RecHandler:
		return r.Key + ":" + r.Source
	case RecKey:
		return "event:" + r.Source + "/" + r.Key
	case RecFire:
		return "fire:" + r.At.File + ":" + strconv.Itoa(r.At.Line)
	case RecOut:
		switch r.Op {
		case "":
			return "send:" + r.Source + ":" + r.Text
		case "reply":
			return "reply:" + r.Source + ":" + r.Text
		}
	case RecTimer:
		switch r.Timer {
		case "timeout":
			return "timeout:" + r.State
		case "onexec":
			return "exec:" + r.State
		}
	}
	return ""
}

// traceObserver turns records into a trace's lines.
type traceObserver func(string)

func (t traceObserver) Observe(r Record) {
	if l := TraceLine(r); l != "" {
		t(l)
	}
}

// step tells the observers of a lifecycle step (a trace shows it).
func (m *env) step(s string) {
	if m.details {
		m.observe(Record{Kind: RecStep, Text: s})
	}
}

// observe tells the observer, if there is one.
func (m *env) observe(r Record) {
	if m.obs == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = m.clock.Now()
	}
	m.obs.Observe(r)
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

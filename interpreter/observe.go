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
	RecSet        RecordKind = "set"        // the debugger set a Lua variable (Key: its name, Text: its value as JSON); a replay sets it again
	RecPaused     RecordKind = "paused"     // the debugger's pause ended (Text: how long it took, in seconds; Key: why it paused); a replay leaves the time out, as the timers did

	// The details: a trace (Options.Trace) shows them; the recorder and
	// the monitor leave them out (Detail).
	RecExit    RecordKind = "exit"    // a state was exited (State)
	RecStep    RecordKind = "step"    // a lifecycle step or callback ran, or a call went out (Text: "lua:open", "onLoad", "call:srv" ...)
	RecHandler RecordKind = "handler" // an onconnect or ondisconnect list runs (Key: which, Source: its adaptor)
	RecKey     RecordKind = "key"     // a keyed event is looked up (Source, Key)

	RecError RecordKind = "error" // a script, cond or callback failed, or an SCXML document raised an error event (Problem)
)

// KindSet is a set of record kinds.
type KindSet uint32

// The kinds, as sets of one.
const (
	kIn KindSet = 1 << iota
	kConnect
	kDisconnect
	kOut
	kFire
	kState
	kTimer
	kAnswer
	kRaise
	kCut
	kSet
	kPaused
	kExit
	kStep
	kHandler
	kKey
	kError
	kOther // a kind this version does not know

	// kDetails are the details, kAll every kind.
	kDetails = kExit | kStep | kHandler | kKey
	kAll     = kOther<<1 - 1
)

// bit is the set of k alone.
func (k RecordKind) bit() KindSet {
	switch k {
	case RecIn:
		return kIn
	case RecOut:
		return kOut
	case RecFire:
		return kFire
	case RecState:
		return kState
	case RecTimer:
		return kTimer
	case RecConnect:
		return kConnect
	case RecDisconnect:
		return kDisconnect
	case RecAnswer:
		return kAnswer
	case RecRaise:
		return kRaise
	case RecCut:
		return kCut
	case RecSet:
		return kSet
	case RecPaused:
		return kPaused
	case RecExit:
		return kExit
	case RecStep:
		return kStep
	case RecHandler:
		return kHandler
	case RecKey:
		return kKey
	case RecError:
		return kError
	}
	return kOther
}

// Kinds is the set of the kinds listed.
func Kinds(list ...RecordKind) KindSet {
	var s KindSet
	for _, k := range list {
		s |= k.bit()
	}
	return s
}

// Has reports whether s holds k.
func (s KindSet) Has(k RecordKind) bool { return s&k.bit() != 0 }

// A Chooser is an Observer that wants records of some kinds only: the
// machine makes none of the others for it. An Observer that is not one
// is told of every kind but the details (RecordKind.Detail).
type Chooser interface {
	Observer
	Kinds() KindSet
}

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
	// From is what a state record's state was entered from: the leaves
	// the step left ("" when none: the initial configuration), as the
	// log says it. A recording does not keep it.
	From string
	// Quiet marks a state record the log counts instead of writing it (a
	// runaway document's: one line sums them up).
	Quiet bool
	// Problem is what failed, in an error record.
	Problem *Problem
}

// Problem is a run-time failure, as an error record tells it: What
// failed ("script failed", "cond failed", "error event"), and the
// diagnostic: where, why, and the failing line of code (Detail) when it
// is known. Invoked names an SCXML document's invoked session, and
// Document its file, when the error was the invoked document's.
type Problem struct {
	What              string
	Diagnostic        schema.Diagnostic
	Invoked, Document string
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

// traceObserver turns records into a trace's lines: it wants every kind.
type traceObserver func(string)

func (t traceObserver) Observe(r Record) {
	if l := TraceLine(r); l != "" {
		t(l)
	}
}

func (t traceObserver) Kinds() KindSet { return kAll }

// observing is a machine's observers, one stream of records for all of
// them: which kinds the ones that always watch want (always), which the
// Watchers want while they watch (watched), and the Watchers together.
type observing struct {
	obs     Observer
	always  KindSet
	watched KindSet
	watcher Watcher
	// timed: an observer reads the records' times (the log has its own).
	timed bool
}

// observeBy combines the observers; nil ones are left out, and a
// combination is taken apart (Observers).
func observeBy(list ...Observer) observing {
	var o observing
	all := flatten(list)
	var watchers multiObserver
	for _, c := range all {
		if _, log := c.o.(*logRecords); !log {
			o.timed = true
		}
		if c.w != nil {
			o.watched |= c.kinds
			watchers = append(watchers, c)
		} else {
			o.always |= c.kinds
		}
	}
	if len(watchers) > 0 {
		o.watcher = watchers
	}
	o.obs = all.single()
	return o
}

// wants reports whether an observer wants a record of kind k now: the
// machine makes no record nobody wants (an unwatched event costs
// nothing more). A record is made only after asking for its own kind: a
// single observer is told of every record made, without routing.
func (o *observing) wants(k KindSet) bool {
	return o.always&k != 0 || (o.watched&k != 0 && o.watcher.Watching())
}

// step tells the observers of a lifecycle step (a trace shows it).
func (m *env) step(s string) {
	if m.wants(kStep) {
		m.observe(Record{Kind: RecStep, Text: s})
	}
}

// observe tells the observers of r. The caller asked whether its kind is
// wanted before making it (wants); a record of a kind nobody wants now is
// dropped here all the same, so that an observer is never told of a kind
// it did not choose.
func (m *env) observe(r Record) {
	if m.obs == nil || !m.wants(r.Kind.bit()) {
		return
	}
	if r.Time.IsZero() && m.timed {
		r.Time = m.clock.Now()
	}
	m.obs.Observe(r)
}

// observeEvent reports an event about to be handled, if its kind is
// wanted (the caller asked whether any of an event's kinds is).
func (m *env) observeEvent(ev *adaptors.Event) {
	// An event is timed by its arrival, which orders it against timers.
	r := Record{Time: ev.Time, Kind: RecIn, Source: ev.Source, Text: ev.Text, Key: ev.Key, Message: ev.Data != nil}
	if ev.Source == "gui" {
		r.Key = ev.ID
	}
	k := kIn
	switch {
	case ev.Source == seatml.InternalSource:
		r.Kind, r.Source, k = RecRaise, "", kRaise
	case ev.Kind == adaptors.Connected:
		r.Kind, k = RecConnect, kConnect
	case ev.Kind == adaptors.Disconnected:
		r.Kind, k = RecDisconnect, kDisconnect
	}
	if !m.wants(k) {
		return
	}
	if ev.From != nil {
		r.Peer = ev.From.Peer()
	}
	m.observe(r)
}

// Observers combines observers; nil ones are left out. Each is told of
// the kinds it wants (Chooser), while it watches (Watcher).
func Observers(list ...Observer) Observer { return flatten(list).single() }

// flatten lists the observers with their choices, taking combinations
// apart and leaving nil ones out.
func flatten(list []Observer) multiObserver {
	var out multiObserver
	for _, o := range list {
		if mo, ok := o.(multiObserver); ok {
			out = append(out, mo...)
		} else if o != nil {
			out = append(out, chosen(o))
		}
	}
	return out
}

// single is m as one Observer: nil for none, or the one observer itself
// (no routing: a machine asks for each record whether its kind is wanted,
// and makes none that is not).
func (m multiObserver) single() Observer {
	switch len(m) {
	case 0:
		return nil
	case 1:
		return m[0].o
	}
	return m
}

// choice is an observer with the kinds it wants, and itself as a Watcher
// if it is one.
type choice struct {
	o     Observer
	kinds KindSet
	w     Watcher
}

func chosen(o Observer) choice {
	c := choice{o: o, kinds: kAll &^ kDetails}
	if ch, ok := o.(Chooser); ok {
		c.kinds = ch.Kinds()
	}
	c.w, _ = o.(Watcher)
	return c
}

type multiObserver []choice

func (m multiObserver) Observe(r Record) {
	k := r.Kind.bit()
	for _, c := range m {
		if c.kinds&k != 0 && (c.w == nil || c.w.Watching()) {
			c.o.Observe(r)
		}
	}
}

// Kinds are the kinds any of the observers wants.
func (m multiObserver) Kinds() KindSet {
	var s KindSet
	for _, c := range m {
		s |= c.kinds
	}
	return s
}

// Watching reports whether any of the observers watches.
func (m multiObserver) Watching() bool {
	for _, c := range m {
		if c.w == nil || c.w.Watching() {
			return true
		}
	}
	return false
}

package interpreter

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/scxml"
	"github.com/seatml/seat/interpreter/statechart"
	"github.com/seatml/seat/schema"
)

// scxmlRun is an SCXML document's behavior: its session, run by the
// SCXML front end on its machine's clock, Lua state, adaptors and
// devices. Its states are mirrored by the program's.
type scxmlRun struct {
	m     *env
	sys   *scxml.System
	s     *scxml.Session
	start time.Time // when the session began, on the machine's clock: the system's zero
	// more: events are queued (a slice of them was handled); burst counts
	// the events handled since the queue was last empty; watching: the
	// system counts them (System.Watch), the burst nearing its bound.
	more     bool
	burst    int
	watching bool
	// unlogged counts the states entered that were not logged one by one
	// (a runaway's), last the last of them: one line sums them up.
	unlogged int
	last     string
	// lineSource and lineName: the last adaptor a line came from and its
	// event name ("chat.line"), made once instead of per line.
	lineSource, lineName string
	// wake is the behavior's timer in its machine's list for when the
	// session has work of its own queued (schedule); each delayed event
	// has a timer of its own there too (Schedule).
	wake timer
}

// A document's queue is handled a slice at a time, with the machine's
// input and timers in between, so that a document that keeps sending
// itself events without a delay still hears its adaptors and Ctrl-C;
// after scxmlBurst events without the queue ever empty it is stopped.
// The last scxmlWatch events of such a burst are counted, to say what
// kept the queue full.
const (
	scxmlSlice = 64
	scxmlBurst = 100000
	scxmlWatch = 10000
)

// A state entered is logged ("state") unless the macrostep has taken
// more than stateLinesSteps microsteps, or the queue has not been empty
// for more than stateLinesBurst events: a runaway's states are counted,
// and one line sums them up, instead of 100,000 lines.
const (
	stateLinesSteps = 100
	stateLinesBurst = 1000
)

// docWhere names the document in a log line about a message.
type docWhere string

func (d docWhere) String() string { return string(d) }

// newSCXML makes the behavior of m's SCXML document: its session on
// m's Lua state, with the seat table (less what is SEATML's own) in its
// datamodel, and its sessions' external queues in own, its machine's
// queue's own lane.
func newSCXML(m *env, own *scxml.FIFO) *scxmlRun {
	run := &scxmlRun{m: m, sys: scxml.NewSystem(), wake: timer{yield: true}}
	sys := run.sys
	sys.Queue = own
	sys.ScriptTimeout, sys.ScriptMemory = m.opts.ScriptTimeout, m.opts.ScriptMemory
	sys.MacrostepTimeout = max(sys.MacrostepTimeout, 10*m.opts.ScriptTimeout)
	sys.Clock = func() time.Duration { return m.clock.Now().Sub(run.start) }
	sys.Scheduler = run
	sys.OnEnter = func(in *statechart.Instance, n *statechart.State) { run.entered(in, n) }
	sys.OnExit = func(_ *statechart.Instance, n *statechart.State) { run.exited(n) }
	sys.Adaptor = func(_ *scxml.Session, target, line string) error {
		if !m.declaredAdaptor(target) {
			return fmt.Errorf("<send type=\"seat\"> to %q: the document declares no such adaptor (<seat:adaptor name=%q>)", target, target)
		}
		m.send(target, line, docWhere(m.prog.File))
		return nil
	}
	sys.Log = func(s *scxml.Session, label, text string) {
		var fields []zap.Field
		if s != run.s { // an invoked document's (a session's peer is already in the logger)
			fields = append(fields, zap.String("invoked", s.ID), zap.String("document", filepath.Base(s.Doc.File)))
		}
		m.log.Info("log", append(fields, zap.String("label", label), zap.String("text", text))...)
	}
	sys.Error = func(s *scxml.Session, text string, err error) {
		if !m.wants(kError) {
			return
		}
		p := problemOf("error event", err)
		p.Diagnostic.Msg, p.Diagnostic.Pos, p.Diagnostic.Severity = text, schema.Pos{}, schema.Warning
		if s != run.s {
			p.Invoked, p.Document = s.ID, filepath.Base(s.Doc.File)
		}
		m.fail(p)
	}
	m.installAPI()
	run.trimAPI()
	run.s = sys.Prepare(m.prog.Document, m.dm)
	m.activeNames = run.activeNames
	m.sc = run.s.Instance()
	m.active = make([]atomic.Bool, len(m.prog.Document.Chart.States))
	return run
}

// scxmlOnly are the seat functions that are SEATML's own: in SCXML a
// <transition> changes state, <send delay> and <cancel> time, and there
// are no widgets.
var scxmlOnly = map[string]string{
	"transition": "a <transition> changes the state", "push": "a <history> state resumes", "pop": "a <history> state resumes",
	"timeout": "a <send delay=…> times", "reset_timer": "<cancel> stops a delayed <send>",
	"get_entry": "there are no widgets", "set_entry": "there are no widgets", "get_text": "there are no widgets",
	"set_text": "there are no widgets", "append_text": "there are no widgets", "clear_text": "there are no widgets",
	"getEntry": "there are no widgets", "setEntry": "there are no widgets", "getText": "there are no widgets", "appendText": "there are no widgets", "clearText": "there are no widgets",
}

// trimAPI replaces the seat functions an SCXML document cannot use with
// ones that say why, and seat.raise with the session's.
func (r *scxmlRun) trimAPI() {
	m := r.m
	api := m.L.GetGlobal("seat").(*lua.LTable)
	for name, why := range scxmlOnly {
		msg := fmt.Sprintf("seat.%s is SEATML's: in an SCXML document %s", name, why)
		api.RawSetString(name, m.L.NewFunction(func(L *lua.LState) int {
			L.RaiseError("%s", msg)
			return 0
		}))
	}
	api.RawSetString("raise", m.L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(1)
		if name == "" || strings.ContainsAny(name, " \t\r\n") {
			L.ArgError(1, fmt.Sprintf("event name %q: an event name is one word, without spaces", name))
		}
		ev := &statechart.Event{Name: name, Type: statechart.Internal}
		if L.GetTop() >= 2 {
			data, err := luadm.FromLua(L.Get(2))
			if err != nil {
				L.ArgError(2, err.Error())
			}
			ev.Data = data
		}
		r.s.Instance().Raise(ev)
		return 0
	}))
}

// begin enters the document's initial configuration.
func (r *scxmlRun) begin() {
	m := r.m
	r.start = m.clock.Now()
	m.starting = true
	r.s.Begin()
	m.starting = false
	r.settled(r.drain(0))
	r.schedule()
}

// drain handles a slice of the document's queue, of which the caller
// handled the first already.
func (run *scxmlRun) drain(first int) error {
	n, more := run.sys.Drain(scxmlSlice - first)
	n += first
	run.more = more
	if run.burst += n; !more {
		run.burst = 0
		if run.watching {
			run.sys.Watch(false)
			run.watching = false
		}
	} else if run.burst >= scxmlBurst {
		return fmt.Errorf("%d events handled without the queue ever empty: %s", scxmlBurst, run.sys.Storm())
	} else if !run.watching && run.burst >= scxmlBurst-scxmlWatch {
		run.sys.Watch(true)
		run.watching = true
	}
	return nil
}

// handle hands an adaptor's or the device layer's event to the session
// as an external event (docs/scxml.md "seat's world"), and handles what
// it causes.
func (r *scxmlRun) handle(ev *adaptors.Event) {
	m := r.m
	switch ev.Source {
	case "gui":
		if ev.Update {
			m.log.Warn("value update for a widget the current state does not have", zap.String("id", ev.ID), zap.String("state", m.stateName()))
		}
		return // an SCXML document has no widgets
	case "motion":
		m.reportResource(*ev) // the manager keeps a lost motion as the last reason
	}
	if ev.Key != "" { // a ROS goal has one (ros_action)
		if t, ok := ev.From.(adaptors.Taker); ok {
			t.Take() // the document has every event posted to it
		}
	}
	cc := m.ctx(ctxEvent)
	cc.ev = &m.evBuf
	prev := m.cc
	m.cc = cc // seat.reply answers the event's peer
	defer func() { m.cc = prev }()
	first := 0
	if r.sys.Handle(r.s, r.eventOf(&m.evBuf)) {
		first = 1 // one of the slice: a burst counts it
	}
	r.settled(r.drain(first))
	r.schedule()
}

// eventOf is the SCXML event for a seat event: "chat.line" for a line
// from adaptor chat, "chat.connect" and "chat.disconnect" for a peer's
// arrival and departure, "memory.KEY" and "motion.done.NAME" (a device
// key's ':' read as '.') for the device layer, "ros.message" for a
// structured message from adaptor ros. _event.data holds text, adaptor,
// peer, and topic, key or message (a table) when there is one; _event.origin is the
// adaptor, and _event.origintype seat's processor, so that a <send
// type="seat" targetexpr="_event.origin"> answers on the same adaptor.
// The event and its data are one allocation; the data becomes a Lua
// table only when a script reads _event.data.
func (r *scxmlRun) eventOf(ev *adaptors.Event) *statechart.Event {
	var name string
	switch {
	case ev.Kind == adaptors.Connected:
		name = ev.Source + ".connect"
	case ev.Kind == adaptors.Disconnected:
		name = ev.Source + ".disconnect"
	case ev.Key != "":
		name = ev.Source + "." + strings.Map(func(r rune) rune {
			switch r {
			case ':':
				return '.'
			case ' ', '\t', '\r', '\n':
				return '_'
			}
			return r
		}, ev.Key)
	case ev.Data != nil:
		name = ev.Source + ".message"
	default:
		if ev.Source != r.lineSource || r.lineName == "" {
			r.lineSource, r.lineName = ev.Source, ev.Source+".line"
		}
		name = r.lineName
	}
	se := &seatEvent{data: seatEventData{text: ev.Text, adaptor: ev.Source, message: ev.Data, topic: ev.Topic, key: ev.Key}}
	if ev.From != nil {
		se.data.peer, se.data.hasPeer = ev.From.Peer(), true
	}
	se.ev = statechart.Event{Name: name, Type: statechart.External, Data: &se.data,
		Origin: ev.Source, OriginType: scxml.SeatProcessor}
	return &se.ev
}

// seatEvent is an SCXML event made from a seat event, with its data.
type seatEvent struct {
	ev   statechart.Event
	data seatEventData
}

// seatEventData is _event.data of an event from an adaptor or the device
// layer: text and adaptor always; peer, topic, key and message when there
// is one. Scripts read it as a read-only table (luadm.Record), through
// ud: no table is built for an event.
type seatEventData struct {
	ud                              lua.LUserData
	L                               *lua.LState // the state ud and messageLV belong to
	text, adaptor, peer, topic, key string
	hasPeer                         bool
	message                         any
	messageLV                       lua.LValue // message converted, on first read
}

// LuaValue is the record scripts read (luadm.Lazy).
// Another state (an invoked session the event is autoforwarded to) reads
// a record of its own: no Lua value is shared between sessions.
func (d *seatEventData) LuaValue(L *lua.LState) lua.LValue {
	if d.L != nil && d.L != L {
		d = &seatEventData{text: d.text, adaptor: d.adaptor, peer: d.peer, topic: d.topic, key: d.key,
			hasPeer: d.hasPeer, message: d.message}
	}
	d.L = L
	return luadm.SetRecord(L, &d.ud, d)
}

// Field is a field of the data (luadm.Record).
func (d *seatEventData) Field(L *lua.LState, name string) lua.LValue {
	switch name {
	case "text":
		return lua.LString(d.text)
	case "adaptor":
		return lua.LString(d.adaptor)
	case "peer":
		if d.hasPeer {
			return lua.LString(d.peer)
		}
	case "topic":
		if d.topic != "" {
			return lua.LString(d.topic)
		}
	case "key":
		if d.key != "" {
			return lua.LString(d.key)
		}
	case "message":
		if d.message != nil && d.messageLV == nil {
			d.messageLV = luadm.ToLua(L, d.message)
		}
		if d.messageLV != nil {
			return d.messageLV
		}
	}
	return lua.LNil
}

// Fields are the names of the fields the data has (luadm.Record).
func (d *seatEventData) Fields() []string {
	names := make([]string, 0, 6)
	names = append(names, "text", "adaptor")
	if d.hasPeer {
		names = append(names, "peer")
	}
	if d.topic != "" {
		names = append(names, "topic")
	}
	if d.key != "" {
		names = append(names, "key")
	}
	if d.message != nil {
		names = append(names, "message")
	}
	return names
}

// GoValue is the data as plain values (luadm.Record): message as a script
// may have changed it, once read.
func (d *seatEventData) GoValue(fromLua func(lua.LValue) (any, error)) (any, error) {
	m := d.plain()
	if d.messageLV != nil {
		v, err := fromLua(d.messageLV)
		if err != nil {
			return nil, err
		}
		m["message"] = v
	}
	return m, nil
}

// plain is the data as it came from the adaptor.
func (d *seatEventData) plain() map[string]any {
	m := map[string]any{"text": d.text, "adaptor": d.adaptor}
	if d.hasPeer {
		m["peer"] = d.peer
	}
	if d.topic != "" {
		m["topic"] = d.topic
	}
	if d.key != "" {
		m["key"] = d.key
	}
	if d.message != nil {
		m["message"] = d.message
	}
	return m
}

// String names the data in tostring and errors (luadm.Record).
func (d *seatEventData) String() string {
	return "_event.data{text=" + strconv.Quote(d.text) + ", adaptor=" + strconv.Quote(d.adaptor) + "}"
}

// MarshalJSON writes the data as a JSON object (a <send> of it to an
// adaptor, a log of the event).
func (d *seatEventData) MarshalJSON() ([]byte, error) { return json.Marshal(d.plain()) }

// schedule sets the session's wake while events are queued: now, but
// after the input that has arrived by then (the timer yields).
func (r *scxmlRun) schedule() {
	if r.more && !r.s.Ended() {
		r.m.timers.set(&r.wake, r.m.clock.Now())
	} else if r.wake.armed() {
		r.m.timers.stop(&r.wake)
	}
}

// Schedule arms a delayed event's timer in the machine's list
// (scxml.Scheduler).
func (r *scxmlRun) Schedule(d *scxml.Delayed) {
	t := &timer{id: timerDelayed, ref: d}
	d.Ext = t
	r.m.timers.set(t, r.start.Add(d.At))
}

// Unschedule disarms a delayed event's timer (cancelled, or its session
// ended).
func (r *scxmlRun) Unschedule(d *scxml.Delayed) { r.m.timers.stop(d.Ext.(*timer)) }

// timerDelayed is the id of a delayed event's timer.
const timerDelayed = 1

// fire handles a slice of the session's queue; for a delayed event's
// timer, first puts it on the queue with the others due by then, in the
// order they were sent.
func (r *scxmlRun) fire(t *timer) {
	m, at := r.m, t.at
	if t.id == timerDelayed {
		if m.wants(kTimer) { // a replay moves its clock here before what it causes
			m.observe(Record{Kind: RecTimer, Timer: "delay", State: m.stateName(), Peer: m.sessionPeer()})
		}
		r.sys.FireDelayed(t.ref.(*scxml.Delayed))
		for f := m.timers.first(); f != nil && f.id == timerDelayed && !f.at.After(at); f = m.timers.first() {
			m.timers.stop(f)
			r.sys.FireDelayed(f.ref.(*scxml.Delayed))
		}
	}
	r.settled(r.drain(0))
	r.schedule()
}

// stop exits the active states: their onexit handlers run.
func (r *scxmlRun) stop() {
	if r.m.cur != nil {
		r.s.Instance().Cancel()
	}
}

// activeNames names the current state: in a parallel state, the first
// region's.
func (r *scxmlRun) activeNames() []string { return []string{r.m.cur.Name} }

// settled follows a macrostep: the current state for observers, and the
// end of the run when the session ended (in a top-level final state:
// "finished", status 0; stopped by a bound: status 1) or err stopped it.
func (run *scxmlRun) settled(err error) {
	m, s := run.m, run.s
	if run.unlogged > 0 && (!run.more || s.Ended() || err != nil) {
		m.log.Info("states entered, not logged one by one", zap.Int("count", run.unlogged), zap.String("last", run.last),
			zap.String("why", "a macrostep of many microsteps, or a queue that did not empty"))
		run.unlogged, run.last = 0, ""
	}
	if err != nil && !s.Ended() {
		m.log.Error("stopped without reaching a final state", zap.Error(err))
		s.Instance().Cancel()
		m.exit(1, "stopped without reaching a final state: "+err.Error())
		return
	}
	for _, n := range m.sc.Configuration() { // in a parallel state, the first region's
		if n.Atomic() {
			if cur := m.prog.SCXMLStates[n]; cur != m.cur {
				m.cur = cur
				m.notifyState()
			}
			break
		}
	}
	if !s.Ended() || m.exitCode != nil {
		return
	}
	if s.Final == "" {
		m.log.Error("stopped without reaching a final state", zap.String("cause", s.StopCause))
		m.exit(1, "stopped without reaching a final state: "+s.StopCause)
		return
	}
	m.log.Info("finished", zap.String("final", s.Final))
	m.exit(0, "finished in the final state "+s.Final)
}

// exit ends the run with code, as seat.exit does; cause says why
// (EndCause).
func (m *env) exit(code int, cause string) {
	if m.exitCode == nil {
		m.exitCode, m.endCause = &code, cause
	}
}

// EndCause says why a behavior that ended itself ended: "seat.exit(2)",
// "finished in the final state 終わり", "stopped without reaching a final
// state: …"; "" otherwise. Call it once Run has returned.
func (m *Machine) EndCause() string { return m.endCause }

func (r *scxmlRun) entered(in *statechart.Instance, n *statechart.State) {
	m := r.m
	s := m.prog.SCXMLStates[n]
	m.active[n.Index()].Store(true)
	if n.Atomic() {
		m.cur = s
		m.notifyState()
	}
	m.leftLeaves.entering()
	quiet := in.Microsteps() > stateLinesSteps || r.burst > stateLinesBurst
	if quiet {
		r.unlogged++
		r.last = s.Name
	}
	if m.wants(kState) {
		m.observe(Record{Kind: RecState, State: s.Name, From: m.leftLeaves.from(r.stateName), Quiet: quiet, Peer: m.sessionPeer()})
	}
}

// stateName names a document's state.
func (r *scxmlRun) stateName(n *statechart.State) string { return r.m.prog.SCXMLStates[n].Name }

func (r *scxmlRun) exited(n *statechart.State) {
	m := r.m
	m.active[n.Index()].Store(false)
	m.leftLeaves.exited(n)
	if m.wants(kExit) {
		m.observe(Record{Kind: RecExit, State: m.prog.SCXMLStates[n].Name, Peer: m.sessionPeer()})
	}
}

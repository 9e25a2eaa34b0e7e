package scxml

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/srcfile"
	"github.com/seatml/seat/interpreter/statechart"
	"github.com/seatml/seat/schema"
)

// Session is one running SCXML document: the top-level one, or one an
// <invoke> started.
type Session struct {
	ID       string
	Doc      *Document
	sys      *System
	in       *statechart.Instance
	dm       dataModel
	parent   *Session
	invokeID string // the id its parent invoked it under
	children map[string]*Session
	params   map[string]any // values the invoking parent gave its data
	depth    int            // how many invocations deep it runs
	ended    bool
	// macro is when the current macrostep began; lap when the Lua call
	// last ended (since macro), and slowest the most that one call took
	// (the time since the one before, or the macrostep's start), which
	// slowCode ran: a macrostep that runs too long names it.
	macro    time.Time
	lap      time.Duration
	slowest  time.Duration
	slowCode *luadm.Code
	// cancelled: its parent cancelled the invocation, and what it sends
	// is dropped.
	cancelled bool
	// borrowed: its Lua state is the caller's (Prepare), not closed here.
	borrowed bool
	// ev is the event being handled, and evLV its _event table once a
	// script asked for it.
	ev   *statechart.Event
	evLV lua.LValue
	// Final is the id of the top-level final state the session ended in.
	Final string
	// StopCause is the error that stopped it, when it ended without
	// reaching a final state (a runaway macrostep).
	StopCause string
}

// dataModel is the session's datamodel, which times each call for a
// macrostep that runs too long (Session.lapped): one clock read a call.
type dataModel struct {
	*luadm.DataModel
	s *Session
}

func (d dataModel) Eval(c *luadm.Code) (lua.LValue, error) {
	v, err := d.DataModel.Eval(c)
	d.s.lapped(c)
	return v, err
}

func (d dataModel) Cond(c *luadm.Code) (bool, error) {
	ok, err := d.DataModel.Cond(c)
	d.s.lapped(c)
	return ok, err
}

func (d dataModel) Exec(c *luadm.Code) error {
	err := d.DataModel.Exec(c)
	d.s.lapped(c)
	return err
}

func (d dataModel) Assign(c *luadm.Code, v lua.LValue) error {
	err := d.DataModel.Assign(c, v)
	d.s.lapped(c)
	return err
}

// lapped notes that c has just run: the time since the last call ended
// (or since the macrostep began) is charged to it. Between two calls the
// engine's own work is microseconds, so a call that took seconds is the
// one charged with them.
func (s *Session) lapped(c *luadm.Code) {
	now := time.Since(s.macro)
	if d := now - s.lap; d > s.slowest {
		s.slowest, s.slowCode = d, c
	}
	s.lap = now
}

// beginMacro notes that a macrostep begins.
func (s *Session) beginMacro() {
	s.macro, s.lap, s.slowest, s.slowCode = time.Now(), 0, 0, nil
}

// tooLong is the error that stops a macrostep that ran longer than
// timeout, saying why: one Lua call that took most of it (a script the
// script time limit did not stop soon enough, such as a long library
// call), or many microsteps that each took a part.
func (s *Session) tooLong(timeout time.Duration) error {
	if c := s.slowCode; c != nil && s.slowest >= timeout/2 {
		why := ""
		if limit := s.sys.ScriptTimeout; limit > 0 && s.slowest > 2*limit {
			why = fmt.Sprintf(": the script time limit of %v did not stop it sooner", limit)
		}
		return fmt.Errorf("the macrostep ran longer than %v: the Lua at %s (%q) was running for %v of it%s",
			timeout, c.Pos, schema.Excerpt(strings.TrimSpace(c.Src), 40), s.slowest.Round(time.Millisecond), why)
	}
	msg := fmt.Sprintf("the macrostep ran longer than %v: eventless transitions, raised events or the error events they caused kept it going", timeout)
	if c := s.slowCode; c != nil {
		msg += fmt.Sprintf(" (the longest Lua call, at %s, took %v)", c.Pos, s.slowest.Round(time.Millisecond))
	}
	return errors.New(msg)
}

// runawayText is what stopped a runaway macrostep, placed at the last
// transition it took (its Ext is the element) or at the document.
func (s *Session) runawayText(re *statechart.RunawayError) string {
	pos := schema.Pos{File: s.Doc.File}
	if re.Transition != nil {
		if n, ok := re.Transition.Ext.(*schema.Node); ok {
			pos = n.Pos
		}
	}
	return fmt.Sprintf("%s: %v", pos, re)
}

// Instance returns the session's statechart instance.
func (s *Session) Instance() *statechart.Instance { return s.in }

func sess(in *statechart.Instance) *Session { return in.Ext.(*Session) }

// System runs SCXML sessions on one goroutine: their external queues,
// delayed sends and invocations. Its clock is virtual: Run advances it
// to the next delayed event whenever every queue is empty, so a document
// that waits 2 s for a timeout runs at once.
type System struct {
	// Log receives <log> output, and the errors raised as events (label
	// "error") when Error is not set.
	Log func(s *Session, label, text string)
	// Error, if set, receives the errors raised as events: text says it
	// (the event's name, then the error), err is the error itself.
	Error func(s *Session, text string, err error)
	// Trace, if set, is told of each event a session takes from a queue.
	Trace func(s *Session, ev *statechart.Event)
	// OnEnter and OnExit, if set, are told of each state a top-level
	// session enters and exits.
	OnEnter, OnExit func(in *statechart.Instance, st *statechart.State)
	// Adaptor, if set, sends a line to one of seat's adaptors: a <send
	// type="seat"> of a top-level session (target is the adaptor's name).
	// Without it such a send raises error.communication.
	Adaptor func(s *Session, target, line string) error
	// Clock, if set, reads the time on the clock of the caller: delays
	// count from it, and the caller delivers them when they are due
	// (NextDue, FireDue; with a Scheduler, FireDelayed). Without it the
	// system keeps virtual time (Run).
	Clock func() time.Duration
	// Scheduler, if set, keeps the delayed events in the caller's timer
	// list instead of the system's own (with Clock): the caller delivers
	// each with FireDelayed when it is due.
	Scheduler Scheduler
	// Queue, if set, holds the sessions' external queues in the caller's
	// queue instead of one of the system's own: seat's machine keeps the
	// one queue of its goroutine (NewSystem gives the system its own).
	Queue Queue
	// ScriptTimeout and ScriptMemory limit each expression, condition and
	// script: a call over either is stopped with error.execution.
	ScriptTimeout time.Duration
	ScriptMemory  uint64
	// MacrostepTimeout bounds one macrostep: eventless transitions or
	// raised events that keep it going longer (each waiting on a script
	// that the script limit stops, say) stop the session with
	// error.execution.
	MacrostepTimeout time.Duration

	instant  int // how many events Run handles without the clock advancing
	now      time.Duration
	timers   []*Delayed // by time, or with a Scheduler as they came (Delayed.idx)
	sessions map[string]*Session
	docs     map[string]*Document
	invoked  int // invoked sessions running
	nextSend int
	// fullLogged: a <send> refused for MaxDelayed was logged; the next is
	// logged once half the waiting events have fired.
	fullLogged bool
	// tally counts the events Step handles while Watch is on.
	tally   map[stormKey]int
	tallied int
}

// stormKey is what Watch counts an event by.
type stormKey struct {
	from, to *Session
	name     string
	send     *schema.Node
}

// Delivery is an event on its way to a session's external queue.
type Delivery struct {
	to, from *Session
	ev       *statechart.Event
	send     *schema.Node // the <send>, if one sent it
}

// Queue holds the external queues of a System's sessions, as one queue in
// the order the events were sent: Push adds a delivery at the end, Pop
// takes the first, Len counts them. It is used on the system's goroutine
// only, and must never block (a session cannot wait for itself).
type Queue interface {
	Push(Delivery)
	Pop() (Delivery, bool)
	Len() int
}

// FIFO is a Queue in a slice: a System's own, when no Queue is given.
type FIFO struct {
	items []Delivery
	head  int
}

// Push adds d at the end.
func (q *FIFO) Push(d Delivery) {
	if q.head > 0 && len(q.items) == cap(q.items) { // reuse the room taken ones left
		k := copy(q.items, q.items[q.head:])
		clear(q.items[k:])
		q.items, q.head = q.items[:k], 0
	}
	q.items = append(q.items, d)
}

// Pop takes the first delivery, if there is one.
func (q *FIFO) Pop() (Delivery, bool) {
	if q.head == len(q.items) {
		return Delivery{}, false
	}
	d := q.items[q.head]
	q.items[q.head] = Delivery{}
	if q.head++; q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return d, true
}

// Len counts the deliveries waiting.
func (q *FIFO) Len() int { return len(q.items) - q.head }

// Delayed is an event a <send delay> sent, waiting for its time.
type Delayed struct {
	At time.Duration // when it is due, on the system's clock
	// Ext is the Scheduler's: its entry for the event.
	Ext    any
	idx    int // its index in System.timers, with a Scheduler
	from   *Session
	sendid string
	to     string
	ev     *statechart.Event
	send   *schema.Node // the <send>, which an error when it fires names
}

// Name is the delayed event's name (with its send's id, if it has one):
// what a debugger shows of it.
func (d *Delayed) Name() string {
	if d.ev == nil {
		return d.sendid
	}
	if d.sendid != "" && d.sendid != d.ev.Name {
		return d.ev.Name + " (" + d.sendid + ")"
	}
	return d.ev.Name
}

// Scheduler keeps a System's delayed events in its caller's one timer
// list (seat's machine waits for everything there). Schedule arms d to
// fire at d.At, after any armed before it for the same time (they fire
// in the order sent); Unschedule disarms it. The caller delivers each
// with System.FireDelayed when it falls due.
type Scheduler interface {
	Schedule(d *Delayed)
	Unschedule(d *Delayed)
}

// NewSystem returns an empty system.
func NewSystem() *System {
	return &System{sessions: map[string]*Session{}, docs: map[string]*Document{}, Queue: &FIFO{},
		ScriptTimeout: time.Second, ScriptMemory: 64 << 20, MacrostepTimeout: 10 * time.Second, instant: 1000000}
}

// Bounds on invocations (a session takes some 50 KiB): a document that
// invokes itself without end gets error.execution instead of exhausting
// the memory.
const (
	MaxInvokeDepth = 64   // invocations within invocations
	MaxInvoked     = 1000 // invoked sessions running at once
)

// MaxDelayed bounds the delayed events waiting in a System (the document
// seat runs, or one peer's session of it, with the documents it invoked):
// a <send delay> past it raises error.communication (ErrTooManyDelayed)
// instead of growing the process until the system kills it, as a
// document in which each event sends two delayed ones would. Each
// waiting event takes some 300 bytes.
const MaxDelayed = 10000

// ErrTooManyDelayed is the error a <send delay> meets when MaxDelayed
// delayed events already wait.
var ErrTooManyDelayed = fmt.Errorf("<send> with a delay: %d delayed events already wait in this session, the most it may have (does each event send more than one delayed event?)", MaxDelayed)

// ErrNoProgress is returned by Run when sessions keep sending each other
// events without a delay, so that the virtual clock never advances.
var ErrNoProgress = errors.New("a million events without the clock advancing: a <send> loop with no delay?")

// Start starts a top-level session of doc.
func (sys *System) Start(doc *Document) *Session {
	return sys.start(doc, nil, "", nil)
}

func (sys *System) start(doc *Document, parent *Session, invokeID string, params map[string]any) *Session {
	dm := luadm.New(luadm.Sandbox(sys.ScriptMemory))
	dm.Limit(sys.ScriptTimeout, sys.ScriptMemory)
	s := sys.newSession(doc, parent, invokeID, params, dm)
	s.in.Start()
	return s
}

// Prepare makes a top-level session of doc in dm, a datamodel over a
// sandboxed Lua state, with its limits, that the caller owns (it is not
// closed when the session ends), without starting it: Begin does. seat's
// runtime uses it to give the session the seat table before it enters
// its states, and runs the document's Lua as it runs its own.
func (sys *System) Prepare(doc *Document, dm *luadm.DataModel) *Session {
	s := sys.newSession(doc, nil, "", nil, dm)
	s.borrowed = true
	return s
}

// Begin enters the initial configuration of a session Prepare made.
func (s *Session) Begin() {
	s.beginMacro()
	s.in.Start()
}

// lastSession numbers sessions across the process: every System (each
// peer's session of a document runs its own) gives out ids from it, so
// that no two sessions share an id, and #_scxml_ID never names another
// session than the one with that id.
var lastSession atomic.Uint64

func (sys *System) newSession(doc *Document, parent *Session, invokeID string, params map[string]any, dm *luadm.DataModel) *Session {
	s := &Session{ID: strconv.FormatUint(lastSession.Add(1), 10), Doc: doc, sys: sys, parent: parent, invokeID: invokeID,
		children: map[string]*Session{}, params: params, macro: time.Now()}
	s.dm = dataModel{dm, s}
	if parent != nil {
		s.depth = parent.depth + 1
		sys.invoked++
	}
	sys.sessions[s.ID] = s
	L := dm.L
	L.SetGlobal("_sessionid", lua.LString(s.ID))
	L.SetGlobal("_name", lua.LString(doc.Name))
	io := L.NewTable()
	proc := L.NewTable()
	proc.RawSetString("location", lua.LString("#_scxml_"+s.ID))
	io.RawSetString(SCXMLProcessor, proc)
	io.RawSetString("scxml", proc)
	if parent == nil && sys.Adaptor != nil {
		io.RawSetString(SeatProcessor, L.NewTable())
	}
	L.SetGlobal("_ioprocessors", io)
	opts := statechart.Options{
		OnEvent: func(ev *statechart.Event) {
			if sys.Trace != nil {
				sys.Trace(s, ev)
			}
			s.ev, s.evLV = ev, nil // _event is made when a script first reads it
		},
		OnError: func(ev *statechart.Event, err error) {
			var re *statechart.RunawayError
			if errors.As(err, &re) {
				text := s.runawayText(re)
				s.StopCause = text
				sys.logError(s, ev.Name+": "+text, err)
				return
			}
			s.StopCause = err.Error() // kept if this error ends the session
			if errors.Is(err, ErrTooManyDelayed) {
				// One line for a storm of them, not one per refused <send>.
				if sys.fullLogged {
					return
				}
				sys.fullLogged = true
				sys.logError(s, ev.Name+": "+err.Error()+"; the <send>s refused for this reason are not logged until half the waiting events have fired", err)
				return
			}
			sys.logError(s, ev.Name+": "+err.Error(), err)
		},
		OnDone: func(final *statechart.State, data any) { sys.ended(s, final, data) },
		Limit: func() error {
			if sys.MacrostepTimeout > 0 && time.Since(s.macro) > sys.MacrostepTimeout {
				return s.tooLong(sys.MacrostepTimeout)
			}
			return nil
		},
	}
	if parent == nil {
		opts.OnEnter, opts.OnExit = sys.OnEnter, sys.OnExit
	}
	s.in = statechart.New(doc.Chart, opts)
	s.in.Ext = s
	L.SetGlobal("In", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LBool(s.in.In(L.CheckString(1))))
		return 1
	}))
	L.SetGlobal("print", L.NewFunction(func(L *lua.LState) int {
		parts := make([]string, L.GetTop())
		for i := range parts {
			parts[i] = L.ToStringMeta(L.Get(i + 1)).String()
		}
		sys.log(s, "print", strings.Join(parts, "\t"))
		return 0
	}))
	s.dm.Protect("_sessionid", "_name", "_ioprocessors", "_event", "In")
	s.lazyEvent(L)
	if parent != nil {
		parent.children[invokeID] = s
	}
	return s
}

// lazyEvent makes _event a global read through the globals' metatable
// (luadm.ProtectGlobals): a userdata made for an event only when a script
// reads it (most transitions match on the name alone), whose fields are
// read from the event on access, as SEATML's event is; assigning _event
// is an error.
func (s *Session) lazyEvent(L *lua.LState) {
	records := luadm.RecordMetatable(L)
	luadm.ProtectGlobals(L, luadm.Globals{
		Get: func(L *lua.LState, name string) (lua.LValue, bool) {
			if name != "_event" || s.ev == nil {
				return nil, false
			}
			if s.evLV == nil {
				s.evLV = newEventValue(L, s.ev, records)
			}
			return s.evLV, true
		},
		Set: func(L *lua.LState, name string, _ lua.LValue) bool {
			if name == "_event" {
				L.RaiseError("_event is a system variable and cannot be assigned")
			}
			return false
		},
	})
}

// eventValue is _event for one event: a luadm.Record whose fields are
// read from the event, data converted to Lua on its first read. A script
// that keeps _event keeps that event's.
type eventValue struct {
	ud   lua.LUserData // the value scripts see; its Value is the eventValue
	L    *lua.LState   // the session's
	ev   *statechart.Event
	data lua.LValue // nil until read
}

func newEventValue(L *lua.LState, ev *statechart.Event, records *lua.LTable) *lua.LUserData {
	e := &eventValue{L: L, ev: ev}
	return luadm.SetRecordMeta(&e.ud, e, records)
}

// String names _event in tostring and errors (luadm.Record).
func (e *eventValue) String() string {
	return "_event{name=" + strconv.Quote(e.ev.Name) + ", type=" + e.ev.Type.String() + "}"
}

// Field is a field of _event (luadm.Record), nil if it is empty.
func (e *eventValue) Field(L *lua.LState, name string) lua.LValue {
	ev := e.ev
	switch name {
	case "name":
		return lua.LString(ev.Name)
	case "type":
		return lua.LString(ev.Type.String())
	case "sendid":
		return optional(ev.SendID)
	case "origin":
		return optional(ev.Origin)
	case "origintype":
		return optional(ev.OriginType)
	case "invokeid":
		return optional(ev.InvokeID)
	case "data":
		if e.data == nil {
			e.data = luadm.ToLua(L, ev.Data)
		}
		return e.data
	}
	return lua.LNil
}

// Fields are _event's fields that are not empty, in §5.10.1's order
// (luadm.Record): pairs(_event) walks them as it walked the table.
func (e *eventValue) Fields() []string {
	names := make([]string, 0, 7)
	for _, k := range []string{"name", "type", "sendid", "origin", "origintype", "invokeid", "data"} {
		if e.Field(e.L, k) != lua.LNil {
			names = append(names, k)
		}
	}
	return names
}

// GoValue is _event as plain values (luadm.Record): <content
// expr="_event"> sends them, as it sent the table.
func (e *eventValue) GoValue(fromLua func(lua.LValue) (any, error)) (any, error) {
	m := map[string]any{}
	for _, k := range e.Fields() {
		v, err := fromLua(e.Field(e.L, k))
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, nil
}

// optional is s, or nil when it is empty.
func optional(s string) lua.LValue {
	if s == "" {
		return lua.LNil
	}
	return lua.LString(s)
}

func (sys *System) ended(s *Session, final *statechart.State, data any) {
	if s.ended {
		return
	}
	s.ended = true
	if final != nil {
		s.Final = final.ID
	}
	for id := range s.children {
		sys.cancelInvoke(s, id)
	}
	delete(sys.sessions, s.ID)
	if s.parent != nil {
		sys.invoked--
	}
	if !s.borrowed {
		defer s.dm.Close()
	}
	kept := sys.timers[:0] // its delayed events go with it
	for _, t := range sys.timers {
		if t.from != s {
			t.idx = len(kept)
			kept = append(kept, t)
		} else if sys.Scheduler != nil {
			sys.Scheduler.Unschedule(t)
		}
	}
	clear(sys.timers[len(kept):])
	sys.timers = kept
	if p := s.parent; p != nil && final != nil && p.children[s.invokeID] == s {
		delete(p.children, s.invokeID)
		sys.enqueue(p, s, &statechart.Event{Name: "done.invoke." + s.invokeID, Type: statechart.External, InvokeID: s.invokeID, Data: data}, nil)
	}
}

func (sys *System) log(s *Session, label, text string) {
	if sys.Log != nil {
		sys.Log(s, label, text)
	}
}

// logError tells of an error raised as an event (Error, or Log).
func (sys *System) logError(s *Session, text string, err error) {
	if sys.Error != nil {
		sys.Error(s, text, err)
		return
	}
	sys.log(s, "error", text)
}

// enqueue puts ev on the external queue of to; from is the session that
// sent it, and send the <send> (nil for an event of the system's own).
func (sys *System) enqueue(to, from *Session, ev *statechart.Event, send *schema.Node) {
	if !to.ended {
		sys.Queue.Push(Delivery{to, from, ev, send})
	}
}

// send delivers ev to the target now or after wait; n is the <send>.
func (sys *System) send(from *Session, sendid, to string, ev *statechart.Event, wait time.Duration, n *schema.Node) error {
	if wait > 0 {
		if len(sys.timers) >= MaxDelayed {
			return &statechart.Error{Event: "error.communication", Err: ErrTooManyDelayed}
		}
		if sys.fullLogged && len(sys.timers) < MaxDelayed/2 {
			sys.fullLogged = false
		}
		t := &Delayed{At: sys.time() + wait, from: from, sendid: sendid, to: to, ev: ev, send: n}
		if sys.Scheduler != nil {
			t.idx = len(sys.timers)
			sys.timers = append(sys.timers, t)
			sys.Scheduler.Schedule(t)
			return nil
		}
		// After every timer due at the same time: they fire in the order sent.
		i := sort.Search(len(sys.timers), func(i int) bool { return sys.timers[i].At > t.At })
		sys.timers = append(sys.timers, nil)
		copy(sys.timers[i+1:], sys.timers[i:])
		sys.timers[i] = t
		return nil
	}
	return sys.deliver(from, to, ev, n)
}

// time is the system's clock: the caller's, or virtual.
func (sys *System) time() time.Duration {
	if sys.Clock != nil {
		return sys.Clock()
	}
	return sys.now
}

func (sys *System) deliver(from *Session, to string, ev *statechart.Event, send *schema.Node) error {
	if from.cancelled {
		return nil
	}
	switch {
	case strings.HasPrefix(to, seatTarget):
		return sys.toAdaptor(from, strings.TrimPrefix(to, seatTarget), ev)
	case to == "":
		sys.enqueue(from, from, ev, send)
	case to == "#_parent":
		if from.parent == nil {
			return &statechart.Error{Event: "error.communication", Err: fmt.Errorf("<send> to #_parent from a session that was not invoked")}
		}
		sys.enqueue(from.parent, from, ev, send)
	case strings.HasPrefix(to, "#_scxml_"):
		target := sys.sessions[strings.TrimPrefix(to, "#_scxml_")]
		if target == nil {
			return &statechart.Error{Event: "error.communication", Err: fmt.Errorf("<send> to %s: no such session (a <send> reaches this session and the sessions it invoked; another peer's session of the document is not reachable)", to)}
		}
		sys.enqueue(target, from, ev, send)
	default:
		child := from.children[strings.TrimPrefix(to, "#_")]
		if child == nil {
			return &statechart.Error{Event: "error.communication", Err: fmt.Errorf("<send> to %s: no such invocation", to)}
		}
		sys.enqueue(child, from, ev, send)
	}
	return nil
}

func (sys *System) cancelSend(from *Session, sendid string) {
	for i, t := range sys.timers {
		if t.from == from && t.sendid == sendid {
			if sys.Scheduler != nil {
				sys.Scheduler.Unschedule(t)
				sys.dropDelayed(t)
				return
			}
			sys.timers = append(sys.timers[:i], sys.timers[i+1:]...)
			return
		}
	}
}

// dropDelayed takes d off the system's list of delayed events, kept as
// they came with a Scheduler: the last takes its place.
func (sys *System) dropDelayed(d *Delayed) {
	last := len(sys.timers) - 1
	sys.timers[d.idx] = sys.timers[last]
	sys.timers[d.idx].idx = d.idx
	sys.timers[last] = nil
	sys.timers = sys.timers[:last]
}

// FireDelayed delivers a delayed event its Scheduler says is due, to the
// queues (Drain handles it): a delayed event takes its place in the
// external queue at its time, after the events queued before it.
func (sys *System) FireDelayed(d *Delayed) {
	sys.dropDelayed(d)
	sys.deliverDelayed(d)
}

func (sys *System) invoke(parent *Session, id string, doc *Document, params map[string]any) error {
	if parent.depth >= MaxInvokeDepth {
		return fmt.Errorf("<invoke>: invocations nest more than %d deep (a document that invokes itself?)", MaxInvokeDepth)
	}
	if sys.invoked >= MaxInvoked {
		return fmt.Errorf("<invoke>: %d invoked sessions already run (a document that invokes itself?)", MaxInvoked)
	}
	p := map[string]any{}
	for k, v := range params {
		if doc.data[k] {
			p[k] = v
		}
	}
	sys.start(doc, parent, id, p)
	return nil
}

func (sys *System) cancelInvoke(parent *Session, id string) {
	child := parent.children[id]
	if child == nil {
		return
	}
	delete(parent.children, id)
	child.cancelled = true
	if !child.ended {
		child.in.Cancel()
	}
}

// load reads and compiles the document an <invoke src> or srcexpr
// names, relative to dir (the invoking document's): held to dir, a
// regular file and srcfile.MaxSize bytes, checked when the path is known,
// at run time for a srcexpr.
func (sys *System) load(dir, src string) (*Document, error) {
	path := srcPath(dir, src)
	if d, ok := sys.docs[path]; ok {
		return d, nil
	}
	data, err := srcfile.Read(dir, srcName(src))
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %w", err)
	}
	d, diags := Parse(path, data)
	if d == nil {
		return nil, diags.Err()
	}
	sys.docs[path] = d
	return d, nil
}

// Step handles one queued event; it reports false when every queue is
// empty. (A session whose events only it sends, without a delay, keeps
// its queue full: Run and Drain bound how many they handle.) An event a cancelled invocation sent is dropped: its invoker no
// longer hears from it, even what it sent before the cancellation.
func (sys *System) Step() bool {
	for {
		d, ok := sys.Queue.Pop()
		if !ok {
			return false
		}
		if d.to.ended || d.from.cancelled {
			continue
		}
		if sys.tally != nil {
			sys.tally[stormKey{d.from, d.to, d.ev.Name, d.send}]++
			sys.tallied++
		}
		d.to.beginMacro()
		d.to.in.Handle(d.ev)
		return true
	}
}

// Run handles events until every queue is empty and no delayed event is
// due before limit (virtual time), or until the session ends. It returns
// ErrNoProgress if the sessions handle a million events without the
// clock advancing.
func (sys *System) Run(s *Session, limit time.Duration) error {
	n := 0
	for !s.ended {
		if sys.Step() {
			if n++; n > sys.instant {
				return ErrNoProgress
			}
			continue
		}
		if len(sys.timers) == 0 || sys.timers[0].At > limit {
			return nil
		}
		n = 0
		sys.fire()
	}
	return nil
}

// fire delivers the first delayed event, advancing the clock to it.
func (sys *System) fire() {
	t := sys.timers[0]
	sys.timers[0] = nil
	sys.timers = sys.timers[1:]
	sys.now = t.At
	sys.deliverDelayed(t)
}

// deliverDelayed delivers a delayed event whose time has come; an error
// is raised in its sender.
func (sys *System) deliverDelayed(t *Delayed) {
	if t.from.ended {
		return
	}
	if err := sys.deliver(t.from, t.to, t.ev, t.send); err != nil {
		e := &statechart.Error{SendID: t.ev.SendID, Err: at(t.send.Pos, err)}
		var se *statechart.Error
		if errors.As(err, &se) {
			e.Event = se.Event
		}
		t.from.beginMacro()
		t.from.in.RaiseError(e)
		t.from.in.Settle()
	}
}

// Watch starts (on) or stops counting the events Step handles, by
// sender, receiver, name and <send>, for Storm. A runtime turns it on
// when its queue has been busy for long: it costs a map update an event.
func (sys *System) Watch(on bool) {
	sys.tally, sys.tallied = nil, 0
	if on {
		sys.tally = map[stormKey]int{}
	}
}

// Storm says what the events handled since Watch began were, the most
// frequent first (three at most): their name, who sent them to whom,
// from which <send> and state, and what that suggests. A runtime that
// stops a session whose queue never empties says it.
func (sys *System) Storm() string {
	if sys.tallied == 0 {
		return "a <send> loop with no delay?"
	}
	keys := make([]stormKey, 0, len(sys.tally))
	for k := range sys.tally {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if a, b := sys.tally[keys[i]], sys.tally[keys[j]]; a != b {
			return a > b
		}
		a, b := keys[i], keys[j]
		if a.name != b.name {
			return a.name < b.name
		}
		// Ties in the order of the <send>s in their files, then the
		// sessions': the text is the same from run to run.
		if pa, pb := sendPos(a.send), sendPos(b.send); pa != pb {
			return pa.File < pb.File || pa.File == pb.File && (pa.Line < pb.Line || pa.Line == pb.Line && pa.Col < pb.Col)
		}
		if a.from.ID != b.from.ID {
			return a.from.ID < b.from.ID
		}
		return a.to.ID < b.to.ID
	})
	var b strings.Builder
	fmt.Fprintf(&b, "of the last %d events,", sys.tallied)
	for i, k := range keys[:min(len(keys), 3)] {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %d were %q from %s", sys.tally[k], k.name, k.from.describe())
		switch {
		case k.from == k.to:
			b.WriteString(" to itself")
		case k.to == k.from.parent:
			b.WriteString(" to its parent")
		case k.from == k.to.parent:
			fmt.Fprintf(&b, " to the document it invoked as %q", k.to.invokeID)
		default:
			fmt.Fprintf(&b, " to session %s", k.to.ID)
		}
		if k.send != nil {
			fmt.Fprintf(&b, ", sent by the <send> at %s", k.send.Pos)
		}
	}
	top := keys[0]
	switch {
	case top.send == nil:
		b.WriteString(": events that came faster than they were handled")
	case top.from.parent != nil && top.to == top.from.parent:
		b.WriteString(": an invoked document's <send> to #_parent with no delay, in a loop?")
	case top.from.parent != nil:
		b.WriteString(": an invoked document's <send> with no delay, in a loop?")
	case top.from == top.to:
		b.WriteString(": a <send> to itself with no delay, in a loop?")
	default:
		b.WriteString(": a <send> with no delay, in a loop?")
	}
	return b.String()
}

// sendPos is where a <send> is; none for an event of the system's own.
func sendPos(n *schema.Node) schema.Pos {
	if n == nil {
		return schema.Pos{}
	}
	return n.Pos
}

// describe names a session for a message: the document seat runs, or the
// one invoked under an id, and the state it is in.
func (s *Session) describe() string {
	name := "the document"
	if s.parent != nil {
		name = fmt.Sprintf("the document invoked as %q", s.invokeID)
	}
	for _, st := range s.in.Configuration() {
		if st.Atomic() {
			return fmt.Sprintf("%s (in state %q)", name, st.ID)
		}
	}
	return name
}

// Ended reports whether the session has ended.
func (s *Session) Ended() bool { return s.ended }

// compileContent compiles a document given as a value: an element kept
// from XML content, or text.
func (sys *System) compileContent(file string, v lua.LValue) (*Document, error) {
	var doc *Document
	var diags schema.List
	switch x := v.(type) {
	case *lua.LUserData:
		n, ok := x.Value.(*schema.Node)
		if !ok {
			return nil, fmt.Errorf("<invoke> content is not an SCXML document")
		}
		doc, diags = Compile(file, n)
	case lua.LString:
		doc, diags = Parse(file, []byte(x))
	default:
		return nil, fmt.Errorf("<invoke> content is a %s, not an SCXML document", v.Type())
	}
	if doc == nil {
		return nil, fmt.Errorf("<invoke> content: %v", diags.Err())
	}
	return doc, nil
}

// Post puts an event from outside the system (an adaptor's line, say) on
// the external queue of s; Drain handles it.
func (sys *System) Post(s *Session, ev *statechart.Event) {
	sys.enqueue(s, s, ev, nil)
}

// Handle gives s an event from outside the system: at once when nothing
// is queued before it (the event would be the next one taken), else at
// the end of the queue (Post), to be handled in turn by Drain. It reports
// whether it handled the event (as Drain counts the events it handles).
func (sys *System) Handle(s *Session, ev *statechart.Event) bool {
	if sys.Queue.Len() > 0 || s.ended {
		sys.enqueue(s, s, ev, nil)
		return false
	}
	if sys.tally != nil {
		sys.tally[stormKey{s, s, ev.Name, nil}]++
		sys.tallied++
	}
	s.beginMacro()
	s.in.Handle(ev)
	return true
}

// Drain handles up to limit queued events and what they cause, without
// moving the clock, and reports how many it handled and whether more are
// queued: a caller that also waits on input handles it in between.
func (sys *System) Drain(limit int) (handled int, more bool) {
	for handled < limit && sys.Step() {
		handled++
	}
	return handled, sys.Queue.Len() > 0
}

// NextDue tells when the first delayed event is due, on the system's
// clock (without a Scheduler, which knows).
func (sys *System) NextDue() (time.Duration, bool) {
	if len(sys.timers) == 0 || sys.Scheduler != nil {
		return 0, false
	}
	return sys.timers[0].At, true
}

// FireDue delivers every delayed event due by now, in order, to the
// queues (Drain handles them): a delayed event takes its place in the
// external queue at its time, after the events queued before it.
func (sys *System) FireDue(now time.Duration) {
	for len(sys.timers) > 0 && sys.timers[0].At <= now && sys.Scheduler == nil {
		sys.fire()
	}
}

package interpreter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/statechart"
)

// Defaults of Options.
const (
	DefaultScriptTimeout = time.Second
	// DefaultScriptMemory is how much a script call may grow the heap.
	DefaultScriptMemory = 64 << 20
	DefaultQueueLen     = 1024
	maxChain            = 100
	maxStack            = 1000
)

// Options configure a machine.
type Options struct {
	Log   *zap.Logger
	Clock Clock
	// ScriptTimeout limits each script, cond and general script.
	ScriptTimeout time.Duration
	// ScriptMemory limits how many bytes one script call may grow the
	// heap by (DefaultScriptMemory if 0), and the longest string
	// string.rep may build.
	ScriptMemory uint64
	// QueueLen bounds the event queue.
	QueueLen int
	Stdin    io.Reader
	Stdout   io.Writer
	// AllowShell must match the load option; shell actions refuse to run
	// without it.
	AllowShell bool
	// Tuning is passed to every adaptor.
	Tuning adaptors.Tuning
	// Devices is the device layer; without it <motion> and the device
	// functions of the seat table fail with a logged error.
	Devices *Devices
	// OnResource, if set, is told of each lost: and error: motion event
	// (key, text), from the machine's goroutine. The manager keeps them as
	// the behavior's last reason.
	OnResource func(key, text string)
	// OpenAdaptor, if set, builds the adaptors in place of the registry's
	// factories: seat test runs behaviors on in-memory adaptors with it,
	// and a session's machine its stand-ins for the host's adaptors. Its
	// Config has no GUI, and the machine's logger.
	OpenAdaptor func(adaptors.Config) (adaptors.Adaptor, error)
	// ManualDevices leaves device events (memory keys, motion outcomes)
	// in their buffers until PumpDevices handles them, instead of
	// forwarding them as they come: a caller that steps the engine itself
	// (seat test, on a virtual clock) then knows when they are handled.
	ManualDevices bool
	// Observer, if set, is told what the machine does (Record).
	Observer Observer
	// session is the peer of a session's machine (set by its host), and
	// sandbox a Lua state its host prepared for it.
	session adaptors.Conn
	sandbox *lua.LState
	// Trace, if set, receives a line for each lifecycle step, rule firing
	// and message, in order: "enter:S", "exit:S", "fire:file:line",
	// "send:adaptor:text", "timeout:S", "exec:S". Tests use it.
	Trace func(string)
}

// ExitError is returned by Run when the behavior ended itself with a
// non-zero code: a script called seat.exit, or a bound stopped an SCXML
// document (Cause says which).
type ExitError struct {
	Code  int
	Cause string
}

func (e *ExitError) Error() string {
	if e.Cause != "" {
		return e.Cause
	}
	return fmt.Sprintf("seat.exit(%d)", e.Code)
}

// Machine runs one behavior. Run's goroutine owns the state machine and the
// Lua state; adaptors reach it only through Deliver.
type Machine struct {
	prog  *Program
	opts  Options
	log   *zap.Logger
	clock Clock
	L     *lua.LState
	dog   *luadm.Watchdog
	fns   []*lua.LFunction // by chunk.id, made on first call

	q      *eventQueue
	done   chan struct{}
	ready  chan struct{}
	closeM sync.Once

	curState atomic.Pointer[State] // the current state, for other goroutines
	running  atomic.Bool           // events are queued, not dropped
	dropped  atomic.Uint64         // events dropped while not running
	luaOpen  bool
	unloaded bool

	adMu     sync.RWMutex
	adaptors map[string]adaptors.Adaptor
	opened   bool
	relays   map[string]*relay // what each open adaptor delivers through
	handed   map[string]bool   // adaptors handed to the next version: not closed here
	// next is the version a reload replaces this one with: events that
	// reach this one once it has stopped go there.
	next atomic.Pointer[Machine]
	left []item // events left for next (machine goroutine)

	// runMu is held by whoever runs the machine: its own goroutine, or a
	// producer that found it idle (handOver). Everything below it is
	// touched only by the holder.
	runMu  sync.Mutex
	inline atomic.Bool     // producers may run the machine (Run's loop is on)
	runCtx context.Context // Run's context
	armed  time.Time       // what Run's timer waits for; zero: nothing
	ended  bool            // the end of input was handled

	watcher  Watcher      // opts.Observer, when it does not always watch
	host     *sessionHost // set when the behavior opens sessions
	sent     bool         // a message or reply went out since the last flush
	dev      *devLink
	flushers []adaptors.Flusher // open adaptors that hold output until Flush
	stateObs []adaptors.StateObserver
	guiObs   []adaptors.GUIObserver
	slots    []adaptors.Adaptor // open adaptors by Program.Adaptors index (machine goroutine)

	cur       *State // the active atomic state (the first, in a parallel state)
	stack     []frame
	values    map[string]string
	tried     []uint64
	gen       uint64
	moves     uint64 // transitions made, to tell whether a list changed state
	unmatched uint64
	// encodeWarned holds the messages whose unencodable text was logged.
	encodeWarned map[*action]bool

	deadline time.Time // ontimeout; zero when disarmed
	// timers mirrors deadline and nextTick for Timers (Unix ns, 0: none).
	timerAt, tickAt atomic.Int64
	enteredAt       time.Time // when the current state was entered
	visitTimeout    *time.Duration
	nextTick        time.Time

	// per-list state
	req         request
	ccs         [numCtx]callCtx
	evBuf       adaptors.Event // the event being handled
	inExit      bool
	exitCode    *int
	endCause    string // why exitCode was set (EndCause)
	cc          *callCtx
	luaCC       *callCtx                    // what the event globals show
	luaAssigned [numEventGlobals]lua.LValue // event globals a script assigned, nil: none

	sc      *statechart.Instance // enters and exits the states
	pending request              // the transition the onentry list being run asks for
	// In a nested behavior: the state whose rule is running, which a
	// statetransition leaves from (generalSource for general's; nil: the
	// current state), the transitions made so far, scratch.
	src      *State
	leafBuf2 []*State
	starting bool // the initial configuration is being entered
	// timeouts: in a nested behavior, when each active state with an
	// ontimeout times out (the innermost's is also the deadline above).
	timeouts map[*State]time.Time
	trans    map[[2]*State]*statechart.Transition
	leafBuf  []*State
	scopeBuf []*Scope
	execBuf  []*statechart.State

	scx *scxmlRun // an SCXML document's session (sc is its instance)
	// active marks, by the chart's state index, the active states of a
	// nested behavior or an SCXML document, for ActiveStates from other
	// goroutines (nil for a flat behavior: its current state says it).
	active []atomic.Bool
}

// frame is what push saves: the active state, and in a nested behavior
// every active leaf (the whole configuration, which pop restores).
type frame struct {
	leaf   *State
	leaves []*State
}

// request is a transition asked for by a list; ok is false for none.
type request struct {
	ok     bool
	fn     transFunc
	target *State
}

// callCtx is what scripts see of the current event or list. The machine
// owns one per kind and reuses it; the Lua "event" table is built only when
// a script or cond runs.
type callCtx struct {
	ev     *adaptors.Event // the event, for ctxEvent
	kind   ctxKind
	key    string   // the word that fired
	caps   []string // its submatches
	lookup string   // the text keyed rules matched (§5 step 1)
	table  *lua.LUserData
	data   *eventData
	dataLV lua.LValue // rtc_in_data
}

type ctxKind int

const (
	ctxEvent ctxKind = iota
	ctxLifecycle
	ctxPeriodic
	ctxSetup
	numCtx
)

// ctx returns the machine's call context of a kind, reset. Lists of one
// kind never nest, so one of each suffices.
func (m *Machine) ctx(kind ctxKind) *callCtx {
	c := &m.ccs[kind]
	*c = callCtx{kind: kind}
	return c
}

// tracing reports whether a trace is recorded; callers build trace text
// only then.
func (m *Machine) tracing() bool { return m.opts.Trace != nil }

// Ready is closed once the adaptors are open and the initial state entered.
func (m *Machine) Ready() <-chan struct{} { return m.ready }

// Adaptor returns an open adaptor by name (nil before Ready).
func (m *Machine) Adaptor(name string) adaptors.Adaptor {
	m.adMu.RLock()
	defer m.adMu.RUnlock()
	return m.adaptors[name]
}

// AdaptorInfo describes an open adaptor: where it listens or connects, and
// its connection and rejection counts (adaptors.Stats, for adaptors that
// keep them).
type AdaptorInfo struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Addr string `json:"addr,omitempty"`
	adaptors.Stats
}

// Adaptors lists the open adaptors in declaration order.
func (m *Machine) Adaptors() []AdaptorInfo {
	m.adMu.RLock()
	defer m.adMu.RUnlock()
	var out []AdaptorInfo
	for _, d := range m.prog.Adaptors {
		a := m.adaptors[d.Name]
		if a == nil {
			continue
		}
		i := AdaptorInfo{Name: d.Name, Type: d.Type}
		if ad, ok := a.(adaptors.Addresser); ok {
			i.Addr = ad.Addr()
		}
		if sr, ok := a.(adaptors.StatsReporter); ok {
			i.Stats = sr.Stats()
		}
		out = append(out, i)
	}
	return out
}

// Deliver queues an event; it blocks while the queue is full. While the
// behavior is loaded but not running, events are dropped and counted (L5).
// When the behavior is idle, Deliver handles the event itself before it
// returns (see handOver).
func (m *Machine) Deliver(ctx context.Context, ev adaptors.Event) error {
	return m.deliver(ctx, ev, true)
}

// deliver is Deliver; inline false always leaves the event to the
// machine's goroutine (the device layer's events: its loop's thread must
// never run scripts).
func (m *Machine) deliver(ctx context.Context, ev adaptors.Event, inline bool) error {
	if m.host != nil {
		return m.host.deliver(ctx, ev)
	}
	if !m.running.Load() {
		if n := m.next.Load(); n != nil { // replaced by a reload
			return n.deliver(ctx, ev, inline)
		}
		m.dropped.Add(1)
		m.log.Debug("event dropped: the behavior is not running", zap.String("source", ev.Source), zap.String("text", ev.Text))
		if ev.Done != nil {
			ev.Done(false)
		}
		return nil
	}
	now := m.clock.Now()
	if ev.Time.IsZero() {
		ev.Time = now
	}
	if inline {
		return m.handOver(ctx, item{ev: ev, at: now})
	}
	return m.enqueue(ctx, item{ev: ev, at: now})
}

// errStopped is returned to senders once the machine has stopped.
var errStopped = errors.New("behavior stopped")

// enqueue queues it, stamped with its arrival time, blocking while the
// queue is full.
func (m *Machine) enqueue(ctx context.Context, it item) error {
	if it.at.IsZero() {
		it.at = m.clock.Now()
	}
	return m.q.push(ctx, it)
}

// DeliverBatch queues several events as one item, in order (BatchSink).
func (m *Machine) DeliverBatch(ctx context.Context, evs []adaptors.Event) error {
	if m.host != nil {
		return m.host.deliverBatch(ctx, evs)
	}
	if !m.running.Load() {
		for _, ev := range evs {
			if err := m.Deliver(ctx, ev); err != nil {
				return err
			}
		}
		adaptors.ReleaseBatch(evs) // Deliver copied the events
		return nil
	}
	now := m.clock.Now()
	for i := range evs {
		if evs[i].Time.IsZero() {
			evs[i].Time = now
		}
	}
	return m.handOver(ctx, item{batch: evs, at: now})
}

// inlineLimit is how many queue items a producer that runs the machine
// handles before it leaves the rest to the machine's goroutine: its own
// connection is not read meanwhile.
const inlineLimit = 16

// handOver queues it and, when no one is running the machine, runs it on
// the caller's goroutine: the event is matched and answered, and the
// answer written, by the goroutine that read it, as a bare server would,
// instead of waking the machine's goroutine and then a writer (two
// hand-offs between threads that cost more than the work itself when the
// process is otherwise idle; bench/README.md). Whoever holds runMu runs
// the machine, so events are still handled one at a time in arrival
// order, and timers that fall due in between run in their place.
func (m *Machine) handOver(ctx context.Context, it item) error {
	if !m.inline.Load() {
		return m.enqueue(ctx, it)
	}
	if it.at.IsZero() {
		it.at = m.clock.Now()
	}
	if err := m.q.add(ctx, it); err != nil {
		return err
	}
	// A producer that finds the machine held leaves its item to the
	// holder, who looks at the queue again after letting go.
	for m.runMu.TryLock() {
		if !m.inline.Load() { // stopping: the machine's goroutine finishes
			m.runMu.Unlock()
			m.q.signal()
			return nil
		}
		armed := m.armed
		more := m.drain(inlineLimit)
		due, timed := m.nextWake()
		// The machine's goroutine must look again when work is left, the
		// run ends, or a timer is now due before the one it waits for.
		wake := more || m.over() || (timed && (armed.IsZero() || due.Before(armed)))
		m.runMu.Unlock()
		if wake {
			m.q.signal()
			return nil
		}
		if m.q.empty() {
			return nil
		}
	}
	return nil
}

// Flushes tells adaptors that the machine calls their Flush after each
// pass of its loop (FlushingSink): they may hold output until then.
func (m *Machine) Flushes() bool { return true }

// flushAdaptors starts the writes of the output held since the last pass.
func (m *Machine) flushAdaptors() {
	if m.opts.session != nil {
		// Ten thousand sessions share their adaptors: one flushes them
		// only after a pass that sent something.
		if !m.sent {
			return
		}
		m.sent = false
	}
	for _, f := range m.flushers {
		f.Flush()
	}
}

// EndOfInput ends the run once the events queued so far are handled.
func (m *Machine) EndOfInput(source string) { _ = m.endOfInput(source) }

func (m *Machine) endOfInput(source string) error {
	return m.enqueue(context.Background(), item{eof: true, ev: adaptors.Event{Source: source}})
}

// Sync runs fn while holding the machine, after every event queued before
// it, and waits for it. Tests use it as a barrier.
func (m *Machine) Sync(ctx context.Context, fn func()) error {
	ran := make(chan struct{})
	it := item{fn: func() {
		if fn != nil {
			fn()
		}
		close(ran)
	}}
	if err := m.enqueue(ctx, it); err != nil {
		return err
	}
	select {
	case <-ran:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-m.done:
		return errStopped
	}
}

// CurrentState returns the current state's name; safe from any goroutine.
func (m *Machine) CurrentState() string {
	if s := m.curState.Load(); s != nil {
		return s.Name
	}
	return ""
}

// ActiveStates returns the names of the active states, in document order:
// the whole configuration of a nested behavior or an SCXML document, the
// current state of a flat one. Safe from any goroutine (the monitor shows
// them); while the machine moves, it may mix the states before and after.
func (m *Machine) ActiveStates() []string {
	if m.active == nil {
		if s := m.CurrentState(); s != "" {
			return []string{s}
		}
		return nil
	}
	var out []string
	for _, s := range m.prog.States {
		if m.active[s.node.Index()].Load() {
			out = append(out, s.Name)
		}
	}
	return out
}

// State returns the current state's name; call it from Sync.
func (m *Machine) State() string {
	if m.cur == nil {
		return ""
	}
	return m.cur.Name
}

// Configuration returns the names of the active states in document order
// (in a flat behavior, the current state); call it from Sync.
func (m *Machine) Configuration() []string {
	var names []string
	for _, n := range m.sc.Configuration() {
		names = append(names, n.ID)
	}
	return names
}

func (m *Machine) trace(s string) {
	if m.opts.Trace != nil {
		m.opts.Trace(s)
	}
}

// enterInitial enters the initial state and carries out the transitions
// its onentry list asks for.
func (m *Machine) enterInitial() {
	if m.scx != nil {
		m.scxmlBegin()
		return
	}
	m.starting = true
	m.sc.Start()
	m.starting = false
	if m.prog.nested {
		m.syncCur()
	}
	m.settle(m.takePending())
	m.drainInternal()
}

// enteredHook and exitedHook are the engine's OnEnter and OnExit: plain
// functions, so that a session's instance costs no closures.
func enteredHook(in *statechart.Instance, n *statechart.State) { in.Ext.(*Machine).entered(n) }
func exitedHook(in *statechart.Instance, n *statechart.State)  { in.Ext.(*Machine).exited(n) }

// entered is the engine telling the machine that it entered a state: the
// machine's own bookkeeping, then the state's onentry list, whose
// transition request settle carries out once the engine's step is over.
func (m *Machine) entered(n *statechart.State) {
	s := n.Ext.(*State)
	from := m.cur
	m.cur = s // a state around the leaf to come is current while its onentry runs
	if !m.starting {
		m.moves++
	}
	if ce := m.log.Check(zapcore.InfoLevel, "state"); ce != nil { // no fields built when disabled
		if m.starting || m.prog.nested { // the initial state; a nested entry (regions make from/to a guess)
			ce.Write(zap.String("to", s.Name))
		} else {
			ce.Write(zap.String("from", from.Name), zap.String("to", s.Name))
		}
	}
	if m.prog.nested {
		m.active[n.Index()].Store(true)
		if s.Timeout != nil {
			if m.timeouts == nil {
				m.timeouts = map[*State]time.Time{}
			}
			m.timeouts[s] = m.clock.Now().Add(s.Timeout.After) // its own countdown
		}
	}
	if !m.prog.nested || n.Atomic() { // the leaf: what observers see, its timers
		m.notifyState()
		m.armTimeout()
		if m.starting {
			m.enteredAt = m.clock.Now()
			m.nextTick = m.enteredAt.Add(m.period())
		} else if m.hasExec() { // only onexec asks when (a clock read is 50-100 ns on some VMs)
			m.enteredAt = m.clock.Now()
		}
		m.publishTick()
	}
	if m.tracing() {
		m.trace("enter:" + s.Name)
	}
	if m.watching() {
		m.observe(Record{Kind: RecState, State: s.Name, Peer: m.sessionPeer()})
	}
	m.request(m.runList(s.OnEntry, m.ctx(ctxLifecycle)))
	if n.Kind == statechart.Final && n.Parent == m.prog.chart.Root && m.exitCode == nil {
		// A top-level final state ends the behavior, as a finished run.
		m.log.Info("finished", zap.String("final", s.Name))
		m.exit(0, "finished in the final state "+s.Name)
	}
}

// exited is the engine telling the machine that it exits a state: the
// state's onexit list runs, where no transition may be asked for.
func (m *Machine) exited(n *statechart.State) {
	s := n.Ext.(*State)
	if m.active != nil {
		m.active[n.Index()].Store(false)
	}
	delete(m.timeouts, s)
	if m.tracing() {
		m.trace("exit:" + s.Name)
	}
	if len(s.OnExit) == 0 {
		return
	}
	m.inExit = true
	m.runList(s.OnExit, m.ctx(ctxLifecycle))
	m.inExit = false
}

// transitionTo is the transition a statetransition takes to target in a
// nested behavior (a flat one takes target.into): the transition from
// the active state the event was handled in (the region's, in a parallel
// state), exiting and entering only the states between the two, as
// SCXML's transition from that state would.
func (m *Machine) transitionTo(target *State) *statechart.Transition {
	from := m.src
	if from == nil {
		from = m.cur
	}
	key := [2]*State{from, target}
	t := m.trans[key]
	if t == nil {
		src := m.prog.chart.Root // a general rule's: from the behavior itself
		if from != generalSource {
			src = from.node
		}
		t = m.prog.chart.Transition(src, target.node)
		if m.trans == nil {
			m.trans = map[[2]*State]*statechart.Transition{}
		}
		m.trans[key] = t
	}
	return t
}

// scopes returns the scopes whose lists apply now, inner first: the
// active state, the states around it, general; in a parallel state, each
// region's in document order.
func (m *Machine) scopes() []*Scope {
	m.scopeBuf = m.scopeBuf[:0]
	if !m.prog.nested {
		m.scopeBuf = append(m.scopeBuf, &m.cur.Scope)
	} else {
		m.leafBuf2 = m.appendLeaves(m.leafBuf2[:0])
		for _, leaf := range m.leafBuf2 {
		chain:
			for s := leaf; s != nil; s = s.Parent {
				for _, sc := range m.scopeBuf {
					if sc == &s.Scope {
						break chain // shared with an earlier region
					}
				}
				m.scopeBuf = append(m.scopeBuf, &s.Scope)
			}
		}
	}
	m.scopeBuf = append(m.scopeBuf, m.prog.General) // kept: no allocation next time
	return m.scopeBuf
}

// request keeps the transition an onentry list asks for: the last one
// asked for in a step, whichever state's list asked.
func (m *Machine) request(r request) {
	if r.ok {
		m.pending = r
	}
}

// syncCur makes the current state the first active leaf once a step is
// over (entry left it at the last region's, in a parallel state).
func (m *Machine) syncCur() {
	for _, n := range m.sc.Configuration() {
		if n.Atomic() {
			if s := n.Ext.(*State); s != m.cur {
				m.cur = s
				m.notifyState()
				m.armTimeout()
			}
			return
		}
	}
}

func (m *Machine) takePending() request {
	r := m.pending
	m.pending = request{}
	return r
}

func (m *Machine) period() time.Duration {
	return time.Duration(float64(time.Second) / m.prog.Rate)
}

// effectiveTimeout is the innermost active state's ontimeout (the leaf's,
// else the nearest state around it with one), else general's.
func (m *Machine) effectiveTimeout() *Timeout {
	for s := m.cur; s != nil; s = s.Parent {
		if s.Timeout != nil {
			return s.Timeout
		}
	}
	return m.prog.General.Timeout
}

func (m *Machine) timeoutAfter() (time.Duration, bool) {
	if m.visitTimeout != nil {
		return *m.visitTimeout, *m.visitTimeout > 0
	}
	if t := m.effectiveTimeout(); t != nil {
		return t.After, true
	}
	return 0, false
}

// armTimeout starts the timeout of a newly entered state. In a nested
// behavior each state with an ontimeout started its own on entry
// (entered); general's counts when no active state has one.
func (m *Machine) armTimeout() {
	m.visitTimeout = nil
	if len(m.timeouts) > 0 {
		m.deadline = time.Time{}
		m.clearTimerAt()
		return
	}
	m.resetTimeout()
}

// resetTimeout restarts the countdown, if any. In a nested behavior it
// is the innermost active state's with an ontimeout (the others count
// from their entry, nextStateTimeout), else general's.
func (m *Machine) resetTimeout() {
	if len(m.timeouts) > 0 && m.visitTimeout == nil {
		for s := m.cur; s != nil; s = s.Parent {
			if _, ok := m.timeouts[s]; ok {
				m.timeouts[s] = m.clock.Now().Add(s.Timeout.After)
				m.deadline = time.Time{}
				m.clearTimerAt()
				return
			}
		}
	}
	if d, ok := m.timeoutAfter(); ok {
		m.deadline = m.clock.Now().Add(d)
		m.timerAt.Store(m.deadline.UnixNano())
	} else {
		m.deadline = time.Time{}
		m.clearTimerAt()
	}
}

// publishTick mirrors the next tick for Timers. A store costs more than
// a load: nothing is stored when nothing changed (no onexec, the common
// case).
func (m *Machine) publishTick() {
	var n int64
	if m.hasExec() {
		n = m.nextTick.UnixNano()
	}
	if m.tickAt.Load() != n {
		m.tickAt.Store(n)
	}
}

// clearTimerAt mirrors a disarmed timeout for Timers.
func (m *Machine) clearTimerAt() {
	if m.timerAt.Load() != 0 {
		m.timerAt.Store(0)
	}
}

func (m *Machine) hasExec() bool {
	if len(m.prog.General.OnExec) > 0 || len(m.cur.OnExec) > 0 {
		return true
	}
	if m.prog.nested {
		for _, n := range m.sc.Configuration() {
			if len(n.Ext.(*State).OnExec) > 0 {
				return true
			}
		}
	}
	return false
}

// nextWake returns when the next timer is due: the timeout or, if the
// state or general has an onexec, the next tick.
func (m *Machine) nextWake() (time.Time, bool) {
	if m.scx != nil {
		return m.scxmlNextWake()
	}
	var next time.Time
	if !m.deadline.IsZero() {
		next = m.deadline
	}
	if s, at := m.nextStateTimeout(); s != nil && (next.IsZero() || at.Before(next)) {
		next = at
	}
	if m.hasExec() && (next.IsZero() || m.nextTick.Before(next)) {
		next = m.nextTick
	}
	return next, !next.IsZero()
}

// Timers tells when the armed timeout is due, and the next onexec tick
// if the state or general has an onexec; zero when none. Safe from any
// goroutine (the monitor shows them).
func (m *Machine) Timers() (timeout, tick time.Time) {
	if n := m.timerAt.Load(); n != 0 {
		timeout = time.Unix(0, n)
	}
	if n := m.tickAt.Load(); n != 0 {
		tick = time.Unix(0, n)
	}
	return timeout, tick
}

// NextTimer returns when the next timeout or onexec tick is due, if one
// is armed. It must run on the machine's goroutine (inside Sync); seat
// test uses it to move a virtual clock from one timer to the next.
func (m *Machine) NextTimer() (time.Time, bool) {
	if m.host != nil {
		return time.Time{}, false // its sessions have the timers: SessionsNextTimer
	}
	return m.nextWake()
}

// RunTimers runs, in order, every timeout and onexec tick due up to
// until, moving clock (the machine's clock) to each as it comes: seat
// test's "+1h" in one call instead of one round trip per tick. It must run
// on the machine's goroutine (inside Sync). It stops early, with the time
// reached, when stop reports true (asked every 16 timers: an onexec that
// takes milliseconds must not run far past a limit) or the run ends
// (seat.exit); ran counts the timers run.
func (m *Machine) RunTimers(clock *FakeClock, until time.Time, stop func() bool) (reached time.Time, ran int) {
	for !m.over() {
		due, ok := m.nextWake()
		if !ok || due.After(until) {
			break
		}
		if d := due.Sub(clock.Now()); d > 0 {
			clock.Advance(d)
		}
		m.runTimer(due)
		for range 1000 { // device events its actions caused, as seat test's sync does
			if !m.devicePending() || m.PumpDevices() == 0 {
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

// sessionPeer is the peer of a session's machine (whose state a record
// of its state names); "" for other machines.
func (m *Machine) sessionPeer() string {
	if m.opts.session == nil {
		return ""
	}
	return m.opts.session.Peer()
}

// runTimer runs the timer that is due at at: the timeout if its deadline
// has come (it wins a tie with a tick), else the onexec tick; then the
// internal events they raised.
func (m *Machine) runTimer(at time.Time) {
	m.runTimerOnce(at)
	if m.sc.HasInternal() {
		m.drainInternal()
	}
}

func (m *Machine) runTimerOnce(at time.Time) {
	if m.scx != nil {
		m.scxmlTimer(at)
		return
	}
	if s, due := m.nextStateTimeout(); s != nil && !due.After(at) && (m.deadline.IsZero() || due.Before(m.deadline)) {
		m.runStateTimeout(s)
		return
	}
	if !m.deadline.IsZero() && !m.deadline.After(at) {
		s, moves := m.cur, m.moves
		m.deadline = time.Time{}
		m.clearTimerAt()
		if m.tracing() {
			m.trace("timeout:" + s.Name)
		}
		if m.watching() {
			m.observe(Record{Kind: RecTimer, Timer: "timeout", State: s.Name})
		}
		if t := m.effectiveTimeout(); t != nil {
			m.settle(m.runList(t.Actions, m.ctx(ctxPeriodic)))
		}
		if m.moves == moves {
			m.resetTimeout()
		}
		return
	}
	now := m.clock.Now()
	m.nextTick = m.nextTick.Add(m.period())
	if !m.nextTick.After(now) {
		m.nextTick = now.Add(m.period()) // missed ticks are dropped
	}
	m.publishTick()
	if m.tracing() {
		m.trace("exec:" + m.cur.Name)
	}
	if m.watching() {
		m.observe(Record{Kind: RecTimer, Timer: "onexec", State: m.cur.Name})
	}
	// A state's onexec waits one period after entry (it could run at once
	// when the state was entered just before a tick); general's runs at
	// every tick, so that transitions never starve it.
	if now.Sub(m.enteredAt) >= m.period() {
		if !m.prog.nested {
			m.settle(m.runList(m.cur.OnExec, m.ctx(ctxPeriodic)))
		} else {
			// Every active state's, outer first, until one moves on.
			moves := m.moves
			m.execBuf = append(m.execBuf[:0], m.sc.Configuration()...)
			for _, n := range m.execBuf {
				if m.moves != moves || m.exitCode != nil {
					break
				}
				if s := n.Ext.(*State); len(s.OnExec) > 0 {
					m.settle(m.runList(s.OnExec, m.ctx(ctxPeriodic)))
				}
			}
		}
	}
	if m.exitCode == nil {
		m.settle(m.runList(m.prog.General.OnExec, m.ctx(ctxPeriodic)))
	}
}

// nextStateTimeout returns the state whose own timeout is due first,
// among the active states of a nested behavior with an ontimeout (but
// the one seat.timeout overrides, whose timeout is the deadline), and
// when.
func (m *Machine) nextStateTimeout() (*State, time.Time) {
	var first *State
	var at time.Time
	if len(m.timeouts) == 0 {
		return nil, at // a flat behavior, or no state with an ontimeout
	}
	var eff *Timeout
	if m.visitTimeout != nil {
		eff = m.effectiveTimeout()
	}
	for s, d := range m.timeouts {
		if s.Timeout == eff {
			continue // seat.timeout's: counted by the deadline
		}
		if first == nil || d.Before(at) || d.Equal(at) && s.node.Descends(first.node) {
			first, at = s, d
		}
	}
	return first, at
}

// runStateTimeout runs an outer or other region's state's ontimeout; its
// countdown starts again unless the state was left.
func (m *Machine) runStateTimeout(s *State) {
	if m.tracing() {
		m.trace("timeout:" + s.Name)
	}
	if m.watching() {
		m.observe(Record{Kind: RecTimer, Timer: "timeout", State: s.Name})
	}
	m.timeouts[s] = m.clock.Now().Add(s.Timeout.After)
	m.settle(m.runList(s.Timeout.Actions, m.ctx(ctxPeriodic)))
}

// guiModel describes the behavior's widgets for adaptors that show them.
func (m *Machine) guiModel() *adaptors.GUI {
	g := &adaptors.GUI{Behavior: m.prog.Name}
	for _, s := range m.prog.States {
		st := adaptors.GUIState{Name: s.Name}
		for _, w := range s.Widgets {
			st.Widgets = append(st.Widgets, adaptors.Widget{Kind: w.Kind, ID: w.ID, Ref: w.Ref, Attrs: w.Attrs, Value: w.Initial})
		}
		g.States = append(g.States, st)
	}
	return g
}

// handleEvent is SEATML §5.
// handleEvent handles an event, then the internal events it raised.
func (m *Machine) handleEvent(ev adaptors.Event) {
	m.handleOne(&ev) // by pointer: the event is copied once, as before the split
	if m.sc.HasInternal() {
		m.drainInternal()
	}
}

// handleOne handles one event (§5).
func (m *Machine) handleOne(ev *adaptors.Event) {
	if ev.Done != nil {
		defer ev.Done(true)
	}
	for n := len(ev.Text); n > 0 && (ev.Text[n-1] == '\n' || ev.Text[n-1] == '\r'); n-- {
		ev.Text = ev.Text[:n-1] // TrimRight(text, "\r\n") without building its set per event
	}
	if ev.Update {
		m.updateWidget(*ev)
		return
	}
	if m.watching() {
		m.observeEvent(ev)
	}
	if m.scx != nil {
		m.scxmlEvent(ev)
		return
	}
	if ev.Kind != adaptors.Text {
		m.handleConnection(*ev)
		return
	}
	if ev.Source == "motion" && m.resourceCallback(*ev) {
		return
	}
	if ev.Key != "" && m.tracing() {
		m.trace("event:" + ev.Source + "/" + ev.Key)
	}
	m.evBuf = *ev
	cc := m.ctx(ctxEvent)
	cc.ev = &m.evBuf
	moves := m.moves
	ran := false
	if ev.Source == "gui" {
		w := m.widgetOf(ev.ID)
		if w == nil {
			m.log.Warn("widget event for a widget the current state does not have", zap.String("id", ev.ID), zap.String("state", m.cur.Name))
			return
		}
		cc.lookup = ev.Text
		ran = m.handleWidget(cc, w)
	} else {
		// The lookup text (§5 step 1): a device-layer event's key, else
		// the text up to its first comma (the speech result "はい,0.93" is
		// looked up as "はい"); scripts read it as event.lookup.
		cc.lookup = ev.Text
		if ev.Source == "memory" || ev.Source == "motion" || ev.Source == internalSource {
			cc.lookup = ev.Key
		} else if i := strings.IndexByte(cc.lookup, ','); i >= 0 {
			cc.lookup = cc.lookup[:i]
		}
		ran = m.matchKeyed(cc, ev.Source, cc.lookup)
	}
	if m.moves == moves && m.exitCode == nil {
		if m.runDataRules(cc) {
			ran = true
		}
		m.src = nil
	}
	if !ran {
		m.unmatched++
		m.log.Debug("unmatched event", zap.String("source", ev.Source), zap.String("text", ev.Text), zap.String("state", m.State()))
	}
}

// handleConnection runs the onconnect or ondisconnect list for the
// event's adaptor: the current state's if it has one, else general's. Like
// a fired rule, it restarts the timeout. event.peer names the peer, and
// seat.reply answers just that peer.
func (m *Machine) handleConnection(ev adaptors.Event) {
	what := "onconnect"
	if ev.Kind == adaptors.Disconnected {
		what = "ondisconnect"
	}
	var list []action
	ok := false
	for _, sc := range m.scopes() { // the innermost handler
		handlers := sc.OnConnect
		if ev.Kind == adaptors.Disconnected {
			handlers = sc.OnDisconnect
		}
		if list, ok = handlers[ev.Source]; ok {
			break
		}
	}
	if !ok {
		return
	}
	if m.tracing() {
		m.trace(what + ":" + ev.Source)
	}
	m.evBuf = ev
	cc := m.ctx(ctxEvent)
	cc.ev = &m.evBuf
	m.resetTimeout()
	m.settle(m.runList(list, cc))
}

// matchKeyed fires the first candidate rule for lookup text l (§5 steps 2-4).
func (m *Machine) matchKeyed(cc *callCtx, source, l string) bool {
	m.gen++
	id, known := m.prog.sourceIDs[source]
	if !m.prog.nested {
		return m.matchScope(cc, &m.cur.Scope, id, known, l) || m.matchScope(cc, m.prog.General, id, known, l)
	}
	// Each region's active state, then the states around it, inner
	// first; general's rules when no state's rule fired.
	fired := false
	m.leafBuf = m.appendLeaves(m.leafBuf[:0])
	for _, leaf := range m.leafBuf {
		if !m.sc.Active(leaf.node) {
			continue // an earlier region's transition left it
		}
		m.src = leaf
		for s := leaf; s != nil; s = s.Parent {
			if m.matchScope(cc, &s.Scope, id, known, l) {
				fired = true
				break
			}
		}
	}
	if !fired {
		m.src = generalSource
		fired = m.matchScope(cc, m.prog.General, id, known, l)
	}
	m.src = nil
	return fired
}

// generalSource stands for general as the source of a transition: a
// general rule's transition leaves from the behavior itself, exiting
// every active state, as in a flat behavior.
var generalSource = &State{Name: "general"}

// appendLeaves appends the active atomic states, in document order, to
// dst: a copy, as transitions may change the configuration meanwhile.
func (m *Machine) appendLeaves(dst []*State) []*State {
	for _, n := range m.sc.Configuration() {
		if n.Atomic() {
			dst = append(dst, n.Ext.(*State))
		}
	}
	return dst
}

// matchScope fires the first candidate rule of one scope for lookup text
// l (§5 steps 2-4): rules of the event's source, then rules of any.
func (m *Machine) matchScope(cc *callCtx, sc *Scope, id int, known bool, l string) bool {
	for k, src := range [2]int{id, 0} {
		if k == 0 && (!known || id == 0) {
			continue // no rule names this source
		}
		if k == 1 && cc.ev.Source == internalSource {
			break // internal events are for rules that name their source
		}
		g := sc.bySource[src]
		if g == nil {
			continue
		}
		for _, r := range g.exact[l] {
			if m.try(cc, r, l, nil) {
				return true
			}
		}
		for _, w := range g.patterns {
			r := w.rule
			if m.tried[r.id] == m.gen {
				continue
			}
			var caps []string
			if w.re == nil {
				if !strings.HasPrefix(l, w.Text) {
					continue
				}
			} else if w.re.NumSubexp() == 0 {
				if !w.re.MatchString(l) {
					continue
				}
			} else {
				sm := w.re.FindStringSubmatch(l)
				if sm == nil {
					continue
				}
				caps = sm
			}
			if m.try(cc, r, w.Text, caps) {
				return true
			}
		}
	}
	return false
}

// try runs rule r's cond and, if it holds, its actions.
func (m *Machine) try(cc *callCtx, r *Rule, key string, caps []string) bool {
	if m.tried[r.id] == m.gen {
		return false
	}
	m.tried[r.id] = m.gen
	m.setEventKey(cc, key, caps)
	if !m.condTrue(r, cc) {
		return false
	}
	m.fire(r, cc, key)
	return true
}

func (m *Machine) fire(r *Rule, cc *callCtx, key string) {
	if m.tracing() {
		m.trace(fmt.Sprintf("fire:%s:%d", r.Pos.File, r.Pos.Line))
	}
	if m.watching() {
		m.observe(Record{Kind: RecFire, At: r.Pos})
	}
	if ce := m.log.Check(zapcore.DebugLevel, "rule fired"); ce != nil {
		ce.Write(zap.String("rule", r.Pos.String()), zap.String("key", key), zap.String("source", cc.ev.Source), zap.String("state", m.State()))
	}
	m.resetTimeout()
	m.settle(m.runList(r.actions, cc))
}

func (m *Machine) condTrue(r *Rule, cc *callCtx) bool {
	if r.cond == nil {
		return true
	}
	if r.condPre != nil {
		if _, err := m.call(r.condPre, cc); err != nil {
			m.scriptFailed(err, "cond")
			return false
		}
	}
	v, err := m.call(r.cond, cc)
	if err != nil {
		m.scriptFailed(err, "cond")
		return false
	}
	return lua.LVAsBool(v)
}

// runDataRules is §5 step 5.
func (m *Machine) runDataRules(cc *callCtx) bool {
	ran := false
	src := cc.ev.Source
	for _, sc := range m.scopes() {
		if sc == m.prog.General && m.prog.nested {
			m.src = generalSource // its transitions leave from the behavior (handleEvent resets it)
		}
		for _, r := range sc.DataRules {
			if r.Source != "" && r.Source != src || r.Source == "" && src == internalSource {
				continue // internal events are for rules that name their source
			}
			m.setEventKey(cc, "", nil)
			if !m.condTrue(r, cc) {
				continue
			}
			moves := m.moves
			m.fire(r, cc, "")
			ran = true
			if m.moves != moves || m.exitCode != nil {
				return true
			}
		}
	}
	return ran
}

// updateWidget sets an input's or text's value from a page, without
// running rules; only widgets of the current state can be set.
func (m *Machine) updateWidget(ev adaptors.Event) {
	w := m.prog.widgets[ev.ID]
	if w == nil || w.State != m.cur.Name || (w.Kind != "input" && w.Kind != "text") {
		m.log.Warn("value update for a widget the current state does not have", zap.String("id", ev.ID), zap.String("state", m.cur.Name))
		return
	}
	if m.values[w.Ref] != ev.Text {
		m.values[w.Ref] = ev.Text
		m.notifyGUI(w.Ref, "set", ev.Text)
	}
}

// widgetOf finds a widget of the current state by id or button label.
func (m *Machine) widgetOf(id string) *Widget {
	for s := m.cur; s != nil; s = s.Parent { // a nested state's, inner first
		for _, w := range s.Widgets {
			if w.ID != "" && w.ID == id {
				return w
			}
		}
	}
	return nil
}

// handleWidget handles a "gui" event for widget w (§11).
func (m *Machine) handleWidget(cc *callCtx, w *Widget) bool {
	ev := cc.ev
	if (w.Kind == "input" || w.Kind == "text") && m.values[w.Ref] != ev.Text {
		m.values[w.Ref] = ev.Text
		m.notifyGUI(w.Ref, "set", ev.Text) // every panel shows what was submitted
	}
	if w.Kind == "button" && ev.Text == "" {
		ev.Text = w.Label
	}
	if len(w.actions) > 0 {
		m.gen++
		m.setEventKey(cc, w.ID, nil)
		if m.tracing() {
			m.trace(fmt.Sprintf("fire:%s:%d", w.Pos.File, w.Pos.Line))
		}
		if m.watching() {
			m.observe(Record{Kind: RecFire, At: w.Pos})
		}
		m.resetTimeout()
		m.settle(m.runList(w.actions, cc))
		return true
	}
	return m.matchKeyed(cc, "gui", w.ID)
}

// settle carries out a transition request and those that follow from
// onentry lists (§7).
func (m *Machine) settle(req request) {
	for n := 0; req.ok && m.exitCode == nil; n++ {
		if n >= maxChain {
			m.log.Error("transition chain cut", zap.Int("limit", maxChain), zap.String("state", m.cur.Name))
			return
		}
		var t *statechart.Transition
		switch req.fn {
		case transPush:
			if len(m.stack) >= maxStack {
				m.log.Warn("state stack full; dropping its oldest entry", zap.Int("limit", maxStack))
				m.stack = m.stack[1:]
			}
			f := frame{leaf: m.cur}
			if m.prog.nested { // the whole configuration: its active leaves
				f.leaves = m.appendLeaves(nil)
			}
			m.stack = append(m.stack, f)
		case transPop:
			if len(m.stack) == 0 {
				m.log.Warn("pop on an empty state stack; staying", zap.String("state", m.cur.Name))
				return
			}
			f := m.stack[len(m.stack)-1]
			m.stack = m.stack[:len(m.stack)-1]
			t = f.leaf.into
			if len(f.leaves) > 1 {
				targets := make([]*statechart.State, len(f.leaves))
				for i, s := range f.leaves {
					targets[i] = s.node
				}
				t = m.prog.chart.Transition(m.prog.chart.Root, targets...)
			}
		}
		if t == nil {
			t = req.target.into // flat: leave the state, enter the target
			if m.prog.nested {
				t = m.transitionTo(req.target)
			}
		}
		m.sc.Take(t) // exited, then entered, run the lists
		if m.prog.nested {
			m.src = nil // what follows is asked for by onentry lists
			m.syncCur()
		}
		req = m.takePending()
	}
}

func (m *Machine) notifyState() {
	m.curState.Store(m.cur)
	for _, o := range m.stateObs {
		o.StateChanged(m.cur.Name)
	}
}

func (m *Machine) notifyGUI(ref, op, value string) {
	for _, o := range m.guiObs {
		o.GUIUpdate(ref, op, value)
	}
}

// runList runs an action list (§7) and returns the transition it requests.
func (m *Machine) runList(list []action, cc *callCtx) request {
	m.req = request{}
	prev := m.cc
	m.cc = cc
	defer func() { m.cc = prev }()
	for i := range list {
		a := &list[i]
		switch a.kind {
		case actMessage:
			text := a.text
			if a.input != "" {
				text = m.values[a.input]
			}
			enc, bad := a.encode(text)
			if bad != 0 && !m.encodeWarned[a] {
				m.encodeWarned[a] = true // once per message element, not per send
				m.log.Warn(fmt.Sprintf("message: %q (U+%04X) cannot be encoded; sent as \"?\" (logged once for this message)", bad, bad), zap.String("at", a.pos.String()))
			}
			if a.topic != "" || a.retain {
				m.sendTopic(a, enc)
				continue
			}
			m.sendSlot(a.slot, a.sendto, enc, &a.pos) // a pointer: no boxing per message
		case actTransition:
			if m.inExit {
				m.log.Error("statetransition in onexit refused: a transition is under way", zap.String("at", a.pos.String()))
				m.req = request{}
				return request{}
			}
			m.req = request{}
			return request{ok: true, fn: a.fn, target: a.target}
		case actLog:
			if ce := m.log.Check(a.level, a.text); ce != nil {
				ce.Write(zap.String("state", m.State()), zap.Stringer("at", a.pos))
			}
		case actShell:
			if !m.runShell(a) {
				return m.takeRequest(false)
			}
		case actScript:
			if !m.runScript(a, cc) {
				return m.takeRequest(false)
			}
		case actMotion:
			m.runMotion(a)
		case actRaise:
			m.raise(a.text, "")
		}
	}
	return m.takeRequest(true)
}

func (m *Machine) takeRequest(keep bool) request {
	r := m.req
	m.req = request{}
	if !keep {
		return request{}
	}
	return r
}

func (m *Machine) runScript(a *action, cc *callCtx) bool {
	var result lua.LValue = lua.LNil
	for _, ch := range a.chunks {
		v, err := m.call(ch, cc)
		if err != nil {
			m.scriptFailed(err, "script")
			return false
		}
		result = v
	}
	if a.sendto == "" || result == lua.LNil {
		return true
	}
	text, ok := toText(result)
	if !ok {
		m.scriptFailed(&ScriptError{File: a.pos.File, Line: a.pos.Line, Msg: fmt.Sprintf("script result is a %s; only strings, numbers and booleans can be sent", result.Type())}, "script")
		return false
	}
	m.send(a.sendto, text, &a.pos)
	return true
}

func (m *Machine) scriptFailed(err error, what string) {
	m.log.Error(what+" failed", zap.String("error", err.Error()), zap.String("state", m.State()))
	if m.prog.hearsInternal {
		m.raise("error.execution", err.Error()) // for rules of source "event"
	}
}

// raise puts an internal event on the queue: the rules of source "event"
// handle it (its name is the lookup text, data its text) once the event,
// timer or list being handled is done, before anything else.
func (m *Machine) raise(name, data string) {
	var d any
	if data != "" {
		d = data
	}
	m.sc.Raise(&statechart.Event{Name: name, Type: statechart.Internal, Data: d})
}

// drainInternal handles the internal events raised so far, and those they
// raise in turn, at most maxChain of them.
func (m *Machine) drainInternal() {
	for n := 0; m.exitCode == nil; n++ {
		ev := m.sc.NextInternal()
		if ev == nil {
			return
		}
		if n >= maxChain {
			m.log.Error("internal events cut: each raised another", zap.Int("limit", maxChain), zap.String("event", ev.Name))
			for m.sc.NextInternal() != nil {
			}
			return
		}
		text, _ := ev.Data.(string)
		m.handleOne(&adaptors.Event{Source: internalSource, Key: ev.Name, Text: text})
	}
}

// sendSlot is send for an adaptor known by its index in Program.Adaptors.
func (m *Machine) sendSlot(slot int, name, text string, at fmt.Stringer) {
	m.sent = true
	if slot >= 0 && slot < len(m.slots) && m.slots[slot] != nil && !m.tracing() && !m.watching() {
		if err := m.slots[slot].Send(text); err != nil {
			m.log.Warn("message not sent", zap.String("adaptor", name), zap.Stringer("at", at), zap.Error(err))
		}
		return
	}
	m.send(name, text, at)
}

// send delivers text to a named adaptor (or logs why not); at says where
// the send came from, formatted only if something is logged.
func (m *Machine) send(name, text string, at fmt.Stringer) { m.sendWith(name, text, at, nil) }

// sendWith is send, with publish doing the sending when set (a message to
// a topic of its own).
func (m *Machine) sendWith(name, text string, at fmt.Stringer, publish func(adaptors.Adaptor) error) {
	m.sent = true
	if m.tracing() {
		m.trace("send:" + name + ":" + text)
	}
	if m.watching() {
		m.observe(Record{Kind: RecOut, Source: name, Text: text})
	}
	m.adMu.RLock()
	a, opened := m.adaptors[name], m.opened
	m.adMu.RUnlock()
	if a == nil {
		switch {
		case m.isIgnoredAdaptor(name):
			m.log.Debug("message to an adaptor seat does not run; dropped", zap.String("adaptor", name))
		case !opened:
			m.log.Warn("message not sent: adaptor not active", zap.String("adaptor", name), zap.Stringer("at", at))
		default:
			m.log.Warn("message not sent: adaptor not open", zap.String("adaptor", name), zap.Stringer("at", at))
		}
		return
	}
	var err error
	if publish != nil {
		err = publish(a)
	} else {
		err = a.Send(text)
	}
	if err != nil {
		m.log.Warn("message not sent", zap.String("adaptor", name), zap.Stringer("at", at), zap.Error(err))
	}
}

// sendTopic publishes a message with its own topic or retain flag to an
// MQTT adaptor (adaptors.TopicSender); in a topic session its peer fills
// a "+" in the topic with its value.
func (m *Machine) sendTopic(a *action, text string) {
	m.sendWith(a.sendto, text, &a.pos, func(ad adaptors.Adaptor) error {
		ts, ok := ad.(adaptors.TopicSender)
		if !ok {
			return errors.New("the adaptor does not publish to topics")
		}
		return ts.SendTopic(a.topic, text, a.retain)
	})
}

func (m *Machine) isIgnoredAdaptor(name string) bool {
	for _, d := range m.prog.Adaptors {
		if d.Name == name {
			return d.Ignored
		}
	}
	return false
}

package interpreter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/statechart"
)

// Defaults of Options.
const (
	DefaultScriptTimeout = time.Second
	// DefaultScriptMemory is how much a script call may grow the heap.
	DefaultScriptMemory = 64 << 20
	DefaultQueueLen     = 1024
	maxChain            = 100
	maxInternal         = 10000 // internal events handled after one event, timer or list
	maxStack            = 1000
)

// Options configure a machine.
type Options struct {
	Log   *zap.Logger
	Clock Clock
	// Debugger, if set, can stop the behavior at breakpoints, step it and
	// poke it (debug.go); it watches only while it has something to do.
	Debugger *Debugger
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
	// in their buffers until Hand.Settle handles them, instead of
	// forwarding them as they come: a caller that steps the engine itself
	// (seat test, on a virtual clock) then knows when they are handled.
	ManualDevices bool
	// Observer, if set, is told what the machine does (Record).
	Observer Observer
	// Stopping, if set, ends when seat is stopping (SIGINT, SIGTERM): a
	// script under way is then stopped at once instead of at its time
	// limit. A reload, which stops one version while its peers go on,
	// does not end it: the version's last script finishes.
	Stopping context.Context
	// session is the peer of a session's machine (set by its host), and
	// sandbox a Lua state its host prepared for it.
	session adaptors.Conn
	sandbox *lua.LState
	// Trace, if set, receives the TraceLine of each record the machine
	// makes, in order: "enter:S", "exit:S", "fire:file:line",
	// "send:adaptor:text", "timeout:S", "exec:S", the lifecycle's steps.
	// Tests use it; it observes the same records as Observer.
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

// Machine is a behavior's host: it runs one loaded program's behavior
// (behavior.go) on its goroutine, or on the goroutine of a producer that
// finds it idle (handOver), with the queue, the run lock and reloads; the
// behavior reaches the world through the env the machine shares with it.
// Adaptors reach the machine only through Deliver.
type Machine struct {
	*env
	b    behavior
	in   inbox
	host *sessionHost // set when the behavior opens sessions (in; b is nil)

	q        *eventQueue
	done     chan struct{}
	ready    chan struct{}
	closeM   sync.Once
	running  atomic.Bool   // events are queued, not dropped
	dropped  atomic.Uint64 // events dropped while not running
	unloaded bool
	// next is the version a reload replaces this one with: events that
	// reach this one once it has stopped go there.
	next atomic.Pointer[Machine]
	// handedBack marks a session its host keeps across a reload: what it
	// can no longer take, once stopping, goes back to the host's
	// successor (errStopped) instead of being dropped.
	handedBack atomic.Bool
	left       []item // events left for next (machine goroutine)

	// runMu is held by whoever runs the machine: its own goroutine, or a
	// producer that found it idle (handOver). Everything below it, and
	// the env, is touched only by the holder.
	runMu  sync.Mutex
	inline atomic.Bool // producers may run the machine (Run's loop is on)
	// leg is the reading of the producer running the machine, if it can
	// be passed on: a script that runs long passes it (passBaton).
	leg    atomic.Pointer[adaptors.Leg]
	runCtx context.Context // Run's context
	armed  time.Time       // what Run's timer waits for; zero: nothing
	ended  bool            // the end of input was handled
}

// env is what a behavior is given of the world: its program and options,
// the clock and the log, its adaptors (binding), its Lua state
// (luaWorld), the device layer, the observers, what other goroutines may
// read of its state, and how it ends (exit).
type env struct {
	prog  *seatml.Program
	opts  Options
	log   *zap.Logger
	clock Clock
	binding
	luaWorld
	dev    *devLink
	timers timerList // the behavior's timers, which the host fires
	// observing is Options.Observer, the trace (Options.Trace) and the
	// log, as one stream of records: which kinds they want, and when.
	observing
	// activeNames is the behavior's (behavior.activeNames), for the
	// observers that show every active state.
	activeNames func() []string
	sc          *statechart.Instance // the behavior's instance of its chart
	cur         *seatml.State        // the active atomic state (the first, in a parallel state)
	// curState is cur for other goroutines; active marks, by the chart's
	// state index, the active states of a nested behavior or an SCXML
	// document (nil for a flat behavior: its current state says it);
	// timerAt and tickAt mirror when the timeout and the next tick are
	// due (Unix ns, 0: none), for Timers.
	curState        atomic.Pointer[seatml.State]
	active          []atomic.Bool
	timerAt, tickAt atomic.Int64
	// starting: the initial configuration is being entered; leftLeaves,
	// the leaves the microstep under way exited, which its "state" log
	// lines give as from (states.go).
	starting   bool
	leftLeaves leftLeaves
	// turn counts the events, timers and ticks handled; cutShort: a
	// script of the event being handled was stopped because seat is
	// stopping (Options.Stopping).
	turn     uint64
	cutShort bool
	unqueued droppedEvents // the raises the full internal queue dropped since it was last drained
	exitCode *int
	endCause string // why exitCode was set (EndCause)
	// carried is what a reload that keeps state carries (carry.go): to
	// fill as the old version stops, or to start the new one from; kept,
	// while it starts, the states it enters without their onentry lists.
	// (atomic: the manager sets the old version's while it runs)
	carried atomic.Pointer[carry]
	kept    map[*seatml.State]bool
}

// binding is a machine's open adaptors: by name (for other goroutines),
// by declaration index (slots), and those that hold output until Flush or
// show states and widgets.
type binding struct {
	adMu     sync.RWMutex
	adaptors map[string]adaptors.Adaptor
	opened   bool
	relays   map[string]*relay  // what each open adaptor delivers through
	handed   map[string]bool    // adaptors handed to the next version: not closed here
	slots    []adaptors.Adaptor // open adaptors by Program.Adaptors index (machine goroutine)
	// shared: the adaptors are a session's views of its host's, which ten
	// thousand sessions share: they are flushed only after a pass that
	// sent something (sent), and only the session's goroutine runs it.
	shared   bool
	sent     bool               // a message or reply went out since the last flush
	flushers []adaptors.Flusher // open adaptors that hold output until Flush
	stateObs []adaptors.StateObserver
	// showsActive: some observer shows every active state
	// (adaptors.ActiveObserver); shown is the configuration it was last
	// told of.
	showsActive bool
	shown       []*statechart.State
	guiObs      []adaptors.GUIObserver
	// sentObs are the adaptors that show what is sent to others, by the
	// adaptor watched (nil: none, and no send looks).
	sentObs map[string][]adaptors.SentWatcher
}

// luaWorld is a behavior's Lua state, and what its scripts see of the
// event or list being handled.
type luaWorld struct {
	L           *lua.LState
	dog         *luadm.Watchdog
	dm          *luadm.DataModel // runs every script, cond and callback
	clock       Clock            // the machine's: event.time of a list's event
	luaOpen     bool
	ccs         [numCtx]callCtx
	evBuf       adaptors.Event // the event being handled
	cc          *callCtx
	luaCC       *callCtx                    // what the event globals show
	luaAssigned [numEventGlobals]lua.LValue // event globals a script assigned, nil: none
	selfMade    bool                        // eSEAT's self was made (installGlobals)
	// globalSets is where each global was last assigned while it was
	// not set (the globals' __newindex sees only those), so that a nil
	// global can be told apart from one never assigned (explain.go).
	globalSets map[string]globalSet
}

// frame is what push saves: the active state, and in a nested behavior
// every active leaf (the whole configuration, which pop restores).
type frame struct {
	leaf   *seatml.State
	leaves []*seatml.State
}

// request is a transition asked for by a list; ok is false for none.
type request struct {
	ok     bool
	fn     seatml.TransFunc
	target *seatml.State
	// from is the state whose list asked (a nested behavior's: see src),
	// which the transition leaves from.
	from *seatml.State
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
func (m *env) ctx(kind ctxKind) *callCtx {
	c := &m.ccs[kind]
	*c = callCtx{kind: kind}
	return c
}

// Ready is closed once the adaptors are open and the initial state entered.
func (m *Machine) Ready() <-chan struct{} { return m.ready }

// Adaptor returns an open adaptor by name (nil before Ready).
func (m *Machine) Adaptor(name string) adaptors.Adaptor { return m.adaptor(name) }

// adaptor returns an open adaptor by name; safe from any goroutine.
func (b *binding) adaptor(name string) adaptors.Adaptor {
	b.adMu.RLock()
	defer b.adMu.RUnlock()
	return b.adaptors[name]
}

// AdaptorInfo describes an open adaptor: where it listens or connects, and
// its connection and rejection counts (adaptors.Stats, for adaptors that
// keep them).
type AdaptorInfo struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Addr string `json:"addr,omitempty"`
	adaptors.Stats
	// Conns lists the connections of an adaptor that lists them
	// (adaptors.ConnLister).
	Conns []adaptors.ConnInfo `json:"connections,omitempty"`
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
		if cl, ok := a.(adaptors.ConnLister); ok {
			i.Conns = cl.Connections()
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
	return m.in.deliver(ctx, ev, true)
}

// inbox is where a machine's adaptors deliver, and what runs the
// machine: its own queue and loop (ownQueue), or in a host of sessions
// (docs/sessions.md) the sessions' machines (sessionHost).
type inbox interface {
	// deliver is Deliver; inline false always leaves the event to the
	// machine's goroutine (the device layer's events: its loop's thread
	// must never run scripts).
	deliver(ctx context.Context, ev adaptors.Event, inline bool) error
	deliverBatch(ctx context.Context, evs []adaptors.Event) error
	// handled is Handled.
	handled(ctx context.Context, from adaptors.Conn) error
	// run is Run, once the machine may run.
	run(ctx context.Context) error
}

// ownQueue is the inbox of a machine that runs its behavior: the queue,
// handled by the machine's loop or by a producer that finds it idle.
type ownQueue struct{ *Machine }

func (m ownQueue) deliver(ctx context.Context, ev adaptors.Event, inline bool) error {
	if !m.running.Load() {
		if n := m.next.Load(); n != nil { // replaced by a reload
			return n.in.deliver(ctx, ev, inline)
		}
		if m.handedBack.Load() {
			return errStopped
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
	return m.in.deliverBatch(ctx, evs)
}

func (m ownQueue) deliverBatch(ctx context.Context, evs []adaptors.Event) error {
	if !m.running.Load() {
		if m.handedBack.Load() {
			return errStopped // before any of them is taken
		}
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
	// The producer's reading, passed to a new goroutine if a script runs
	// long while it runs the machine (adaptors.Baton); not while it waits
	// for room in the queue, holding its item.
	var leg *adaptors.Leg
	from := it.ev.From
	if it.batch != nil {
		from = it.batch[0].From
	}
	if h, ok := from.(adaptors.BatonHolder); ok {
		leg = h.Baton().Holder()
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
		running := leg.Run()
		if running {
			m.leg.Store(leg)
		}
		more := m.drain(inlineLimit)
		if running {
			m.leg.Store(nil)
			leg.Ran()
		}
		due, timed := m.timers.next()
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

// passBaton is called when a script runs long: the producer running the
// machine, if any, has its input read on another goroutine meanwhile, so
// that what arrives is stamped when it arrives and comes before the timers
// that fall due after it (docs/seatml.md "Order").
func (m *Machine) passBaton() {
	m.leg.Load().Pass()
}

// Flushes tells adaptors that the machine calls their Flush after each
// pass of its loop (FlushingSink): they may hold output until then.
func (m *Machine) Flushes() bool { return true }

// flushAdaptors starts the writes of the output held since the last pass.
func (m *Machine) flushAdaptors() {
	if m.shared {
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

// Handled returns once every event delivered from the peer before it has
// been handled (adaptors.HandledSink): in a session behavior by the
// peer's session, else by the behavior; at once when the behavior is not
// running (its events were dropped).
func (m *Machine) Handled(ctx context.Context, from adaptors.Conn) error {
	return m.in.handled(ctx, from)
}

func (m ownQueue) handled(ctx context.Context, _ adaptors.Conn) error {
	if !m.running.Load() {
		return nil
	}
	return m.Sync(ctx, nil)
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
		if m.active[s.Node.Index()].Load() {
			out = append(out, s.Name)
		}
	}
	return out
}

// State returns the current state's name; call it from Sync.
func (m *Machine) State() string { return m.stateName() }

// stateName is the current state's name, for log lines and scripts.
func (e *env) stateName() string {
	if e.cur == nil {
		return ""
	}
	return e.cur.Name
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

// relay is the sink an adaptor is opened with: the machine it delivers to
// changes when a reload hands the adaptor to the next version.
type relay struct{ m atomic.Pointer[Machine] }

func newRelay(m *Machine) *relay {
	r := &relay{}
	r.m.Store(m)
	return r
}

// to runs f on the current machine; what a machine that stopped as it
// was handed over refused goes to its successor.
func (r *relay) to(f func(m *Machine) error) error {
	for {
		m := r.m.Load()
		err := f(m)
		if !errors.Is(err, errStopped) || r.m.Load() == m {
			return err
		}
	}
}

// Deliver goes to the current machine.
func (r *relay) Deliver(ctx context.Context, ev adaptors.Event) error {
	return r.to(func(m *Machine) error { return m.Deliver(ctx, ev) })
}

// DeliverBatch is Deliver for a batch (adaptors.BatchSink).
func (r *relay) DeliverBatch(ctx context.Context, evs []adaptors.Event) error {
	return r.to(func(m *Machine) error { return m.DeliverBatch(ctx, evs) })
}

// EndOfInput is Deliver for the end of an input.
func (r *relay) EndOfInput(source string) {
	_ = r.to(func(m *Machine) error { return m.endOfInput(source) })
}

// Handled waits for the peer's events to be handled
// (adaptors.HandledSink), by the machine that has them.
func (r *relay) Handled(ctx context.Context, from adaptors.Conn) error {
	return r.to(func(m *Machine) error { return m.Handled(ctx, from) })
}

func (r *relay) Flushes() bool { return r.m.Load().Flushes() }

func (r *relay) Ready() <-chan struct{} { return r.m.Load().Ready() }

var (
	_ adaptors.BatchSink    = (*relay)(nil)
	_ adaptors.FlushingSink = (*relay)(nil)
	_ adaptors.Readier      = (*relay)(nil)
	_ adaptors.HandledSink  = (*relay)(nil)
	_ adaptors.Sink         = (*Machine)(nil)
	_ adaptors.FlushingSink = (*Machine)(nil)
	_ adaptors.BatchSink    = (*Machine)(nil)
	_ adaptors.Readier      = (*Machine)(nil)
)

// over reports whether the run ends: a stop (which wins over events that
// arrived with it, L6), seat.exit, or the end of input.
func (m *Machine) over() bool {
	return m.exitCode != nil || m.ended || m.runCtx.Err() != nil
}

// runOwnWork runs the timers that are due while the behavior has work of
// its own (a yielding timer: an SCXML session's queued events, a slice
// at a time), until it has none or the run ends: such work goes after
// input at the same instant, but a barrier (Hand.Settle) and the end of
// input wait for it, and for the timers that fall due meanwhile (a
// delayed event).
func (m *Machine) runOwnWork() {
	for m.timers.yielding > 0 && !m.over() {
		if t := m.timers.first(); t == nil || t.at.After(m.clock.Now()) {
			return
		}
		m.fireFirst()
		m.flushAdaptors()
	}
}

// fireFirst takes the first timer off the list and has the behavior run
// it.
func (m *Machine) fireFirst() {
	t := m.timers.first()
	m.timers.stop(t)
	m.b.fire(t)
}

// drain handles what is due, one thing at a time in arrival order: a
// timer due at D runs after the input that reached the queue before D
// (§5, §8), and output goes out after each (timer output now, not with the
// next input). It stops when nothing is due, the run is over, or after
// limit items (0: no limit); it reports whether it stopped at the limit
// with items left.
func (m *Machine) drain(limit int) (more bool) {
	for n := 0; !m.over(); n++ {
		if limit > 0 && n == limit {
			return !m.q.empty()
		}
		// The head is looked at before the clock: an item that arrives
		// in between is stamped no earlier than the clock read, so a
		// timer due by then runs first, as it would have with the clock
		// read after.
		at, queued := m.q.peek()
		if t := m.timers.first(); t != nil && (queued && t.firesBefore(at) || !queued && !m.clock.Now().Before(t.at)) {
			m.fireFirst()
			m.flushAdaptors()
			continue
		}
		it, ok := m.q.pop()
		if !ok {
			return false
		}
		if !m.handleItem(m.runCtx, it) {
			m.ended = true
		}
		m.flushAdaptors()
	}
	return false
}

// otherInputs says whether an adaptor other than source brings input
// from outside (any kind but those with adaptors.NoInput).
func (m *Machine) otherInputs(source string) bool {
	for _, d := range m.prog.Adaptors {
		if k, _ := adaptors.LookupKind(d.Type); d.Name != source && !k.Has(adaptors.NoInput) {
			return true
		}
	}
	return false
}

// busyWorker is the Idle channel of an adaptor still at work on what was
// sent to it (adaptors.Worker), or nil when none is.
func (m *Machine) busyWorker() <-chan struct{} {
	m.adMu.RLock()
	defer m.adMu.RUnlock()
	for _, a := range m.adaptors {
		if w, ok := a.(adaptors.Worker); ok {
			select {
			case <-w.Idle():
			default:
				return w.Idle()
			}
		}
	}
	return nil
}

// endWhenIdle ends source's input again once busy is closed.
func (m *Machine) endWhenIdle(busy <-chan struct{}, source string) {
	select {
	case <-busy:
		_ = m.endOfInput(source)
	case <-m.done:
	}
}

// handleItem handles one queue item; it reports false when the run ends
// (end of input).
func (m *Machine) handleItem(ctx context.Context, it item) bool {
	switch {
	case it.fn != nil:
		it.fn()
	case it.eof:
		if m.otherInputs(it.ev.Source) || m.prog.UsesDevices {
			// Standard input is one peer among others: its end ends its
			// input only (§10.2).
			m.log.Info("standard input ended; the behavior goes on", zap.String("adaptor", it.ev.Source))
			return true
		}
		if busy := m.busyWorker(); busy != nil {
			// A voice still speaking what was sent: the end comes again
			// once it is idle, after the events that tell so.
			go m.endWhenIdle(busy, it.ev.Source)
			return true
		}
		// The events queued so far include the behavior's own (an SCXML
		// document's): they are handled before the run ends.
		m.runOwnWork()
		m.log.Info("end of input", zap.String("adaptor", it.ev.Source))
		return false
	case it.batch != nil:
		for i, ev := range it.batch {
			if ctx.Err() != nil || m.exitCode != nil {
				m.leftOver(it.batch[i:])
				break
			}
			m.handleEvent(ev)
		}
		adaptors.ReleaseBatch(it.batch)
	default:
		m.handleEvent(it.ev)
	}
	return true
}

// sendSlot is send for an adaptor known by its index in Program.Adaptors.
func (m *env) sendSlot(slot int, name, text string, at fmt.Stringer) {
	m.sent = true
	if slot >= 0 && slot < len(m.slots) && m.slots[slot] != nil && !m.wants(kOut) && m.sentObs == nil {
		if err := m.slots[slot].Send(text); err != nil {
			m.log.Warn("message not sent", zap.String("adaptor", name), zap.Stringer("at", at), zap.Error(err))
		}
		return
	}
	m.send(name, text, at)
}

// send delivers text to a named adaptor (or logs why not); at says where
// the send came from, formatted only if something is logged.
func (m *env) send(name, text string, at fmt.Stringer) { m.sendWith(name, text, at, nil) }

// sendWith is send, with publish doing the sending when set (a message to
// a topic of its own).
func (m *env) sendWith(name, text string, at fmt.Stringer, publish func(adaptors.Adaptor) error) {
	m.sent = true
	if m.wants(kOut) {
		m.observe(Record{Kind: RecOut, Source: name, Text: text})
	}
	for _, o := range m.sentObs[name] {
		o.Sent(name, text)
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

func (m *binding) notifyGUI(ref, op, value string) {
	for _, o := range m.guiObs {
		o.GUIUpdate(ref, op, value)
	}
}

// sendTopic publishes a message with its own topic or retain flag to an
// MQTT adaptor (adaptors.TopicSender); in a topic session its peer fills
// a "+" in the topic with its value.
func (m *env) sendTopic(a *seatml.Action, text string) {
	m.sendWith(a.SendTo, text, &a.Pos, func(ad adaptors.Adaptor) error {
		ts, ok := ad.(adaptors.TopicSender)
		if !ok {
			return errors.New("the adaptor does not publish to topics")
		}
		return ts.SendTopic(a.Topic, text, a.Retain)
	})
}

func (m *env) isIgnoredAdaptor(name string) bool {
	for _, d := range m.prog.Adaptors {
		if d.Name == name {
			return d.Ignored
		}
	}
	return false
}

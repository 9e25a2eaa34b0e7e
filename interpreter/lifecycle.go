package interpreter

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// The lifecycle (docs/lifecycle.md, "The steps, in order") in trace steps:
// New is [lua:open, general, onLoad]; Open is [adaptors:open]; Run enters
// the initial state and, when it ends, runs [exit:S, onInput_onStop,
// motions:stop, motions:ended, adaptors:close, onUnload, lua:close]; Close
// unloads a machine that was never started. A failed step undoes the earlier
// ones in reverse.

// motionStopLimit bounds how long stopping waits for motions to end, in
// engine time (L7); past it their commands are cleared.
const motionStopLimit = 5 * time.Second

// New creates a machine for prog: it builds the Lua state and runs the
// vars, general scripts and onLoad. No adaptor is open yet.
func New(prog *seatml.Program, opts Options) (*Machine, error) {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Clock == nil {
		opts.Clock = RealClock{}
	}
	if opts.ScriptTimeout <= 0 {
		opts.ScriptTimeout = DefaultScriptTimeout
	}
	if opts.QueueLen <= 0 {
		opts.QueueLen = DefaultQueueLen
	}
	if opts.ScriptMemory == 0 {
		opts.ScriptMemory = DefaultScriptMemory
	}
	m := &Machine{
		env: &env{
			prog:    prog,
			opts:    opts,
			log:     opts.Log.With(zap.String("behavior", prog.Name)),
			clock:   opts.Clock,
			binding: binding{adaptors: map[string]adaptors.Adaptor{}, shared: opts.session != nil},
		},
		done:  make(chan struct{}),
		ready: make(chan struct{}),
	}
	var seat *seatmlBehavior
	if prog.Document == nil {
		seat = newSEATML(m.env)
		m.b = seat
	}
	m.q = newEventQueue(opts.QueueLen, m.done)
	m.in = ownQueue{m}
	var trace Observer
	if opts.Trace != nil {
		trace = traceObserver(opts.Trace)
	}
	m.observing = observeBy(opts.Observer, trace, newLogRecords(m.log))
	if opts.Debugger != nil && (prog.Session == "" || opts.session != nil) {
		// A behavior's own machine, not a session host: the debugger
		// joins its observers while it has something to do.
		opts.Debugger.attach(m, []Observer{opts.Observer, trace, newLogRecords(m.log)})
	} else if opts.Debugger != nil {
		opts.Debugger.refuse("a behavior with a session per peer is debugged a session at a time: name one (seat ctl --session PEER; seat ctl sessions lists them)")
	}
	if prog.Session != "" && opts.session == nil {
		// A host runs no conversation: its sessions have the Lua states.
		m.host = &sessionHost{m: m, adaptor: prog.Session, sessions: map[any]*session{}, hungUp: map[any]bool{}, sandboxes: make(chan *lua.LState, sandboxAhead)}
		m.in = m.host
		for _, d := range prog.Adaptors {
			if d.Name == prog.Session && d.Attrs["session"] == "topic" {
				m.host.max, m.host.idle = DefaultMaxTopicSessions, DefaultSessionIdle
				if v, ok := d.Attrs["maxsessions"]; ok {
					m.host.max, _ = strconv.Atoi(v)
				}
				if v, ok := d.Attrs["sessionidle"]; ok {
					n, _ := strconv.Atoi(v)
					m.host.idle = time.Duration(n) * time.Second
				}
			}
			if k, _ := adaptors.LookupKind(d.Type); d.Name == prog.Session && k.Has(adaptors.Page) {
				m.host.web = true
			}
		}
		return m, nil
	}
	m.step("lua:open")
	m.L = opts.sandbox
	if m.L == nil {
		m.L = newSandbox(opts.ScriptMemory)
	}
	m.dog = luadm.NewWatchdog(m.L, opts.ScriptTimeout, opts.ScriptMemory)
	m.dog.Long = m.passBaton
	m.luaWorld.clock = m.clock
	m.dm = luadm.New(m.L)
	m.dm.UseWatchdog(m.dog, opts.ScriptTimeout, opts.ScriptMemory)
	m.dm.Explain = m.explainNil
	m.luaOpen = true
	if prog.Document != nil {
		m.b = newSCXML(m.env, &m.q.own)
		return m, nil
	}
	seat.installAPI()
	m.installEventType()
	m.installGlobals()
	if err := m.setup(); err != nil {
		m.closeLua()
		m.closeM.Do(func() { close(m.done) })
		return nil, err
	}
	return m, nil
}

func (m *Machine) setup() error {
	cc := &callCtx{kind: ctxSetup}
	m.step("general")
	for _, it := range m.prog.Setup {
		if it.IsVar {
			m.L.SetGlobal(it.Name, it.Value)
			continue
		}
		for _, ch := range it.Chunks {
			if _, err := m.call(ch, cc); err != nil {
				return err
			}
		}
	}
	if fn := m.callback("onLoad"); fn != nil {
		m.step("onLoad")
		if err := m.callFunc(fn, "onLoad", cc); err != nil {
			return err
		}
	}
	return nil
}

// callback returns a global Lua function defined by the behavior, or nil.
func (m *env) callback(name string) *lua.LFunction {
	fn, _ := m.L.GetGlobal(name).(*lua.LFunction)
	return fn
}

// runCallback calls a lifecycle callback if defined; an error is logged and
// the sequence goes on (L15).
func (m *env) runCallback(name string, args ...string) {
	fn := m.callback(name)
	if fn == nil {
		return
	}
	step := name
	if len(args) > 0 {
		step += ":" + args[0]
	}
	m.step(step)
	cc := m.ctx(ctxLifecycle)
	lv := make([]lua.LValue, len(args))
	for i, a := range args {
		lv[i] = lua.LString(a)
	}
	if err := m.callFunc(fn, name, cc, lv...); err != nil {
		m.scriptFailed(err, name)
	}
}

func (m *env) closeLua() {
	if m.luaOpen {
		m.step("lua:close")
		m.dog.Close()
		m.L.Close()
		m.luaOpen = false
	}
}

// Open opens the adaptors: servers listen, clients make a first attempt.
// On failure the load is undone: adaptors closed, onUnload, Lua closed (L2).
func (m *Machine) Open(ctx context.Context) error {
	if m.unloaded {
		return errors.New("behavior unloaded")
	}
	m.step("adaptors:open")
	if err := m.openAdaptors(ctx); err != nil {
		m.unload()
		return err
	}
	return nil
}

// Close unloads a machine that was opened but never run (L8):
// adaptors closed, onUnload, Lua closed.
func (m *Machine) Close() {
	if m.unloaded {
		return
	}
	m.unload()
}

func (m *Machine) unload() {
	m.closeAdaptors()
	if m.luaOpen {
		m.runCallback("onUnload")
	}
	m.closeLua()
	m.unloaded = true
	m.closeM.Do(func() { close(m.done) })
	m.drainLeft()
}

// drainLeft empties the queue of a machine that will handle nothing more
// (its done is closed, so nothing is added): the events go to the version
// a reload replaced it with, ahead of what reached that one directly (each
// connection's events reached this one first), else they answer their
// senders.
func (m *Machine) drainLeft() {
	for {
		it, ok := m.q.pop()
		if !ok {
			break
		}
		switch {
		case it.eof && m.next.Load() != nil:
			m.left = append(m.left, it)
		case it.fn != nil || it.eof:
		case it.batch != nil:
			m.leftOver(it.batch)
			adaptors.ReleaseBatch(it.batch)
		default:
			m.leftOver([]adaptors.Event{it.ev})
		}
	}
	if n := m.next.Load(); n != nil && len(m.left) > 0 {
		n.q.prepend(m.left)
	}
	m.left = nil
}

// Dropped counts the events dropped while the behavior was not running.
func (m *Machine) Dropped() uint64 { return m.dropped.Load() }

// Run starts the behavior: it opens the adaptors if Open was not called,
// enters the initial state and handles events, timeouts and ticks until ctx
// ends, standard input ends or a script calls seat.exit. It then stops and
// unloads the behavior (L6). It returns nil for a normal end, an *ExitError
// for seat.exit with a non-zero code.
func (m *Machine) Run(ctx context.Context) error {
	if m.unloaded {
		return errors.New("behavior unloaded")
	}
	return m.in.run(ctx)
}

func (m ownQueue) run(ctx context.Context) error {
	if !m.opened {
		m.running.Store(true) // started at once: early events wait for the initial state
		if err := m.Open(ctx); err != nil {
			return err
		}
	}
	m.running.Store(true)
	m.runCtx = ctx
	if d := m.opts.Debugger; d != nil {
		d.rejoin() // breakpoints set while it was loaded, not started (resync)
	}
	if m.opts.Stopping != nil { // seat stopping does not wait for a script's time limit
		defer context.AfterFunc(m.opts.Stopping, m.dog.Abort)()
	}
	m.runMu.Lock()
	m.startDevices()
	m.b.begin()
	m.flushAdaptors()
	// Sessions keep to their goroutines: ten thousand of them run by a
	// few producers' goroutines measured slower (BenchmarkSessionEvents).
	m.inline.Store(!m.shared)
	m.runMu.Unlock()
	close(m.ready)
	timer := m.clock.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		m.runMu.Lock()
		if m.drain(0); m.over() {
			break // holding runMu: no producer runs the machine again
		}
		due, timed := m.timers.next()
		m.armed = time.Time{}
		if timed {
			m.armed = due
		}
		m.runMu.Unlock()
		// A producer that found the lock held left its item to us.
		if !m.q.empty() {
			continue
		}
		if timed {
			wait := due.Sub(m.clock.Now())
			if wait <= 0 {
				continue
			}
			timer.Reset(wait)
		} else {
			timer.Stop()
		}
		select {
		case <-ctx.Done():
		case <-timer.C():
		case <-m.q.wake:
		}
	}
	m.inline.Store(false)
	m.shutdown()
	m.runMu.Unlock()
	if m.exitCode != nil && *m.exitCode != 0 {
		return &ExitError{Code: *m.exitCode, Cause: m.endCause}
	}
	return nil
}

// shutdown is L6: no event reaches rules once it begins.
func (m *Machine) shutdown() {
	m.running.Store(false)
	if sb, ok := m.b.(*seatmlBehavior); ok && m.carried.Load() != nil && !m.carried.Load().taken {
		takeCarry(sb, m.carried.Load()) // a reload that keeps state: no onexit
	} else {
		m.b.stop()
	}
	m.runCallback("onInput_onStop")
	m.flushAdaptors() // a session's adaptors outlive it: what onexit sent goes now
	m.stopDevices()
	m.unload() // events queued and never handled: drainLeft
	m.log.Info("stopped", zap.String("state", m.stateName()))
}

// answer releases the senders waiting on events that will not be handled.
// leftOver is for events this version will not handle: they go to the
// version a reload replaced it with, if any, else they are answered.
func (m *Machine) leftOver(evs []adaptors.Event) {
	if c := m.carried.Load(); c != nil && m.handedBack.Load() && len(evs) > 0 {
		// A session kept across a reload: its new version, made once
		// its host has stopped, handles them.
		c.left = append(c.left, item{batch: append(adaptors.NewBatch(), evs...), at: m.clock.Now()})
		return
	}
	if m.next.Load() == nil || len(evs) == 0 {
		m.answer(evs)
		return
	}
	m.left = append(m.left, item{batch: append(adaptors.NewBatch(), evs...), at: m.clock.Now()})
}

func (m *Machine) answer(evs []adaptors.Event) {
	for _, ev := range evs {
		if ev.Done != nil {
			ev.Done(false)
		}
	}
}

func (m *Machine) openAdaptors(ctx context.Context) error {
	for _, d := range m.prog.Adaptors {
		a, err := m.openAdaptor(ctx, d)
		if err != nil {
			return err
		}
		if a != nil {
			m.adopt(d, a, nil)
		}
	}
	m.adMu.Lock()
	m.opened = true
	m.adMu.Unlock()
	return nil
}

// openAdaptor builds and opens the adaptor d declares, delivering to m
// through a relay (a reload may hand it to another machine); nil for one
// that is ignored or not in this build.
func (m *Machine) openAdaptor(ctx context.Context, d seatml.AdaptorDecl) (adaptors.Adaptor, error) {
	a, err := m.buildAdaptor(d)
	if a == nil || err != nil {
		return nil, err
	}
	return m.openBuilt(ctx, d, a)
}

// buildAdaptor makes the adaptor d declares, not yet open; nil for one
// that is ignored. The compiler knows every kind (adaptors/all), so a
// loaded program's kinds are all there.
func (m *Machine) buildAdaptor(d seatml.AdaptorDecl) (adaptors.Adaptor, error) {
	if d.Ignored {
		return nil, nil
	}
	f := m.opts.OpenAdaptor
	if f == nil {
		k, ok := adaptors.LookupKind(d.Type)
		if !ok {
			return nil, fmt.Errorf("%s: adaptor %q: unknown kind %q", d.Pos, d.Name, d.Type)
		}
		f = k.New
	}
	a, err := f(m.adaptorConfig(d))
	if err != nil {
		return nil, fmt.Errorf("%s: adaptor %q: %w", d.Pos, d.Name, err)
	}
	return a, nil
}

// openBuilt opens a, the adaptor d declares.
func (m *Machine) openBuilt(ctx context.Context, d seatml.AdaptorDecl, a adaptors.Adaptor) (adaptors.Adaptor, error) {
	r := newRelay(m)
	err := a.Open(ctx, r)
	if errors.Is(err, syscall.EADDRINUSE) {
		addr, _, _ := adaptors.Config{Attrs: d.Attrs}.Address() // as the adaptor read it
		return nil, &AddrInUseError{Pos: d.Pos, Adaptor: d.Name, Addr: addr, Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: adaptor %q: %w", d.Pos, d.Name, err)
	}
	m.adMu.Lock()
	if m.relays == nil {
		m.relays = map[string]*relay{}
	}
	m.relays[d.Name] = r
	m.adMu.Unlock()
	return a, nil
}

// adaptorConfig is what d's factory gets.
func (m *Machine) adaptorConfig(d seatml.AdaptorDecl) adaptors.Config {
	cfg := adaptors.Config{
		Behavior: m.prog.Name, Anonymous: m.prog.Anonymous, Name: d.Name, Type: d.Type, Attrs: d.Attrs, Dir: filepath.Dir(m.prog.File), Log: m.log,
		Stdin: m.opts.Stdin, Stdout: m.opts.Stdout, Tuning: m.opts.Tuning,
		Connections: m.prog.WantsConnections(d.Name),
		Peer:        m.Adaptor,
	}
	if k, _ := adaptors.LookupKind(d.Type); k.Has(adaptors.Grammar) {
		cfg.Keys = m.keysModel(d.Name)
	}
	if m.opts.OpenAdaptor == nil { // a session's stand-ins need neither (and it starts faster)
		cfg.GUI = m.guiModel()
		cfg.BehaviorLog = m.opts.Log.With(zap.String("behavior", m.prog.Name))
		cfg.Log = cfg.BehaviorLog.With(zap.String("adaptor", d.Name))
	}
	return cfg
}

// adopt makes a the open adaptor of d: m sends through it and tells it of
// states and widgets; r, if set, is the relay it delivers through (an
// adaptor handed over by a reload).
func (m *Machine) adopt(d seatml.AdaptorDecl, a adaptors.Adaptor, r *relay) {
	m.adMu.Lock()
	m.adaptors[d.Name] = a
	if r != nil {
		if m.relays == nil {
			m.relays = map[string]*relay{}
		}
		m.relays[d.Name] = r
	}
	m.adMu.Unlock()
	if m.slots == nil {
		m.slots = make([]adaptors.Adaptor, len(m.prog.Adaptors))
	}
	for i := range m.prog.Adaptors {
		if m.prog.Adaptors[i].Name == d.Name {
			m.slots[i] = a
		}
	}
	if f, ok := a.(adaptors.Flusher); ok {
		m.flushers = append(m.flushers, f)
	}
	if o, ok := a.(adaptors.StateObserver); ok {
		m.stateObs = append(m.stateObs, o)
		_, shows := o.(adaptors.ActiveObserver)
		m.showsActive = m.showsActive || shows
	}
	if o, ok := a.(adaptors.GUIObserver); ok {
		m.guiObs = append(m.guiObs, o)
	}
	if o, ok := a.(adaptors.SentWatcher); ok {
		for _, name := range o.Watched() {
			if m.sentObs == nil {
				m.sentObs = map[string][]adaptors.SentWatcher{}
			}
			m.sentObs[name] = append(m.sentObs[name], o)
		}
	}
}

// AddrInUseError is an adaptor that cannot listen because its address is
// taken. Its message ends with how to choose another port; Hint, if set,
// is the command that does it (seat run's --set by default).
type AddrInUseError struct {
	Pos     schema.Pos
	Adaptor string
	Addr    string
	Hint    string
	Err     error
}

func (e *AddrInUseError) Error() string {
	hint := e.Hint
	if hint == "" {
		hint = "--set " + e.Adaptor + ".port=PORT"
	}
	return fmt.Sprintf("%s: adaptor %q: %s is already in use (another seat, or another program, listens there); "+
		"free it, or choose another port with %s (0 picks a free one)", e.Pos, e.Adaptor, e.Addr, hint)
}

func (e *AddrInUseError) Unwrap() error { return e.Err }

func (m *Machine) closeAdaptors() {
	m.adMu.Lock()
	list := m.adaptors
	was := m.opened || len(list) > 0
	kept := m.handed
	m.adaptors = map[string]adaptors.Adaptor{}
	m.relays = nil
	m.opened = false
	m.adMu.Unlock()
	m.slots, m.flushers, m.stateObs, m.guiObs = nil, nil, nil, nil
	m.showsActive, m.shown = false, nil
	if !was {
		return
	}
	m.step("adaptors:close")
	for _, d := range m.prog.Adaptors {
		if a := list[d.Name]; a != nil && !kept[d.Name] {
			if err := a.Close(); err != nil {
				m.log.Warn("closing adaptor", zap.String("adaptor", d.Name), zap.Error(err))
			}
		}
	}
}

// resourceCallback runs onResourceLost or onResourceError for a motion
// event, if the behavior defines it (L11, L13); it reports whether it did.
func (m *env) resourceCallback(ev adaptors.Event) bool {
	kind, name := m.reportResource(ev)
	cb := map[string]string{"lost": "onResourceLost", "error": "onResourceError"}[kind]
	if cb == "" || m.callback(cb) == nil {
		return false
	}
	m.runCallback(cb, name, ev.Text)
	return true
}

// reportResource tells OnResource of a motion that was lost or failed,
// and returns the event key's kind and motion name.
func (m *env) reportResource(ev adaptors.Event) (kind, name string) {
	kind, name, _ = strings.Cut(ev.Key, ":")
	if (kind == "lost" || kind == "error") && m.opts.OnResource != nil {
		m.opts.OnResource(ev.Key, ev.Text)
	}
	return kind, name
}

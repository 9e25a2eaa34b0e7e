// Package manager runs several behaviors in one process over one device
// layer, with Choregraphe's load, start, stop and unload rules
// (docs/lifecycle.md), and serves them on a JSON-over-HTTP control endpoint.
package manager

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// State is a behavior's lifecycle state.
type State string

// Lifecycle states.
const (
	Unloaded State = "unloaded"
	Loaded   State = "loaded"
	Running  State = "running"
	Stopping State = "stopping"
)

// Errors of the manager's operations.
var (
	ErrUnknown        = errors.New("no such behavior")
	ErrDuplicate      = errors.New("a behavior of that name is already loaded")
	ErrAlreadyRunning = errors.New("the behavior is already running")
	ErrNotRunning     = errors.New("the behavior is not running")
	ErrNotLoaded      = errors.New("the behavior is not loaded")
	ErrBusy           = errors.New("the behavior is stopping")
	ErrNoSessions     = errors.New("the behavior does not open sessions")
)

// LoadError is a behavior file that does not pass its checks.
type LoadError struct {
	File        string
	Diagnostics schema.List
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("%s has errors:\n%s", e.File, e.Diagnostics.Error())
}

// Info describes a behavior for the list.
type Info struct {
	Name   string    `json:"name"`
	File   string    `json:"file"`
	State  State     `json:"state"`
	Since  time.Time `json:"since"`
	Reason string    `json:"reason,omitempty"`
	// SEATMLState is the current SEATML state of a running behavior.
	SEATMLState string `json:"seatml_state,omitempty"`
	// Active lists every active state of a running behavior (its
	// configuration, in document order): a flat behavior's one state, a
	// nested behavior's or SCXML document's every active state.
	Active []string `json:"active,omitempty"`
	// Dropped counts events that arrived while the behavior was loaded but
	// not running.
	Dropped uint64 `json:"dropped,omitempty"`
	// Adaptors lists the open adaptors with their connection and rejection
	// counts.
	Adaptors []interpreter.AdaptorInfo `json:"adaptors,omitempty"`
	// Timeout and Tick are when a running behavior's armed timeout and
	// next onexec tick are due.
	Timeout *time.Time `json:"timeout,omitempty"`
	Tick    *time.Time `json:"tick,omitempty"`
	// Sessions counts the sessions of a behavior that opens them
	// (session="peer"); GET /behaviors/NAME/sessions lists them.
	Sessions *interpreter.SessionStats `json:"sessions,omitempty"`
	// Kept, in a reload's answer, says that the new version went on where
	// the old one was; NotKept lists what of its state could not be
	// carried over (a state gone, a global that is a function), or why
	// it started afresh.
	Kept    bool     `json:"kept,omitempty"`
	NotKept []string `json:"not_kept,omitempty"`
	// Debug is what its debugger is doing (seat run --control).
	Debug *interpreter.DebugSummary `json:"debug,omitempty"`
}

// ReloadOptions are a reload's: Set overrides adaptor attributes as seat
// run's --set does, after those of the command line, and is kept for the
// behavior's later reloads; Fresh starts the new version from its initial
// state instead of where the old one was.
type ReloadOptions struct {
	Set   []seatml.Override
	Fresh bool
}

// Options configure a manager.
type Options struct {
	Log *zap.Logger
	// Load is used to compile every behavior.
	Load seatml.LoadOptions
	// Machine is the template of every behavior's machine options; its
	// Devices are shared. Trace and OnResource are set by the manager.
	Machine interpreter.Options
	// Trace, if set, receives each behavior's lifecycle steps: "compile",
	// then the machine's trace.
	Trace func(behavior, step string)
	// Observe, if set, gives each machine its observer as it is created
	// (seat run --record, the monitor); a reload gets a new one.
	Observe func(prog *seatml.Program) interpreter.Observer
	// Debug gives each behavior a debugger (seat run --control): its
	// breakpoints stay across reloads (Debugger).
	Debug bool
}

// Manager holds the behaviors of one process.
//
// Its lock guards the list and each entry's lifecycle fields, and nothing
// that holds it calls out: creating a machine (its general scripts and
// onLoad), opening and closing adaptors, observers and unloading all run
// with the entry reserved (busy) and the lock released, so the control
// API, the monitor and the other behaviors never wait on a script or a
// connect. Machine getters used under it (Info) take only leaf locks.
type Manager struct {
	opts Options
	log  *zap.Logger

	mu      sync.Mutex
	entries []*entry // in load order
}

type entry struct {
	name, file string
	prog       *seatml.Program   // the version loaded or running
	overrides  []seatml.Override // --set of seat ctl reload, kept for later reloads
	replacing  bool              // a reload is stopping the old version
	state      State
	since      time.Time
	reason     string
	m          *interpreter.Machine
	cancel     context.CancelFunc
	done       chan struct{} // closed when Run returns
	runErr     error
	// busy is set while a load or an unload runs without mg.mu, and
	// closed when it is over; other operations on the entry wait or
	// refuse meanwhile.
	busy chan struct{}
	// dbg is the behavior's debugger (Options.Debug), every version's.
	dbg *interpreter.Debugger
}

// New returns an empty manager.
func New(opts Options) *Manager {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	return &Manager{opts: opts, log: opts.Log}
}

// lookup finds a behavior; the caller holds mg.mu.
func (mg *Manager) lookup(name string) (*entry, error) {
	if e := mg.find(name); e != nil {
		return e, nil
	}
	names := make([]string, len(mg.entries))
	for i, e := range mg.entries {
		names[i] = e.name
	}
	return nil, fmt.Errorf("%w: %q%s", ErrUnknown, name, schema.DidYouMean(name, names, "%s"))
}

// lockEntry locks mg.mu and finds a behavior; the lock is held on success
// only.
// It waits while a load or unload of the behavior is under way.
func (mg *Manager) lockEntry(name string) (*entry, error) {
	mg.mu.Lock()
	for {
		e, err := mg.lookup(name)
		if err != nil {
			mg.mu.Unlock()
			return nil, err
		}
		if e.busy == nil {
			return e, nil
		}
		busy := e.busy
		mg.mu.Unlock()
		<-busy
		mg.mu.Lock()
	}
}

// reserve marks e busy; the caller holds mg.mu and calls the returned
// function, again under mg.mu, when the operation is over.
func (e *entry) reserve() (release func()) {
	busy := make(chan struct{})
	e.busy = busy
	return func() {
		e.busy = nil
		close(busy)
	}
}

func (mg *Manager) find(name string) *entry {
	for _, e := range mg.entries {
		if e.name == name {
			return e
		}
	}
	return nil
}

func (mg *Manager) trace(name, step string) {
	if mg.opts.Trace != nil {
		mg.opts.Trace(name, step)
	}
}

func (e *entry) set(s State, reason string) {
	e.state, e.since = s, time.Now()
	if reason != "" {
		e.reason = reason
	}
}

func (e *entry) info() Info {
	i := Info{Name: e.name, File: e.file, State: e.state, Since: e.since, Reason: e.reason}
	if e.m != nil {
		if e.state == Running || e.state == Stopping {
			i.SEATMLState = e.m.CurrentState()
			i.Active = e.m.ActiveStates() // one state too: a client reads the configuration the same way for every behavior
			to, tick := e.m.Timers()
			if !to.IsZero() {
				i.Timeout = &to
			}
			if !tick.IsZero() {
				i.Tick = &tick
			}
		}
		i.Dropped = e.m.Dropped()
		i.Adaptors = e.m.Adaptors()
		if e.m.IsHost() {
			c := e.m.SessionCounts()
			i.Sessions = &c
		}
	}
	if e.dbg != nil {
		d := e.dbg.Summary()
		i.Debug = &d
	}
	return i
}

// compile checks a behavior file; nothing is opened or run.
func (mg *Manager) compile(file string) (*seatml.Program, error) {
	prog, diags := seatml.Load(file, mg.opts.Load)
	if prog == nil {
		return nil, &LoadError{File: file, Diagnostics: diags}
	}
	for _, d := range diags {
		mg.log.Warn(d.Error())
	}
	return prog, nil
}

// Load compiles a behavior, creates its Lua state, runs its general scripts
// and onLoad, and opens its adaptors (L1). A failure leaves nothing behind
// (L2) and the other behaviors untouched.
func (mg *Manager) Load(file string) (Info, error) {
	file = filepath.Clean(file)
	mg.trace(file, "compile")
	prog, err := mg.compile(file)
	if err != nil {
		return Info{}, err
	}
	return mg.LoadProgram(prog)
}

// LoadProgram is Load for a behavior already compiled and checked.
func (mg *Manager) LoadProgram(prog *seatml.Program) (Info, error) {
	e, err := mg.load(prog, true)
	defer mg.mu.Unlock()
	if e == nil {
		return Info{}, err
	}
	return e.info(), err
}

// StartProgram loads and starts a compiled behavior in one step (L4 from
// unloaded): its adaptors open with events already queued for it.
func (mg *Manager) StartProgram(prog *seatml.Program) (Info, error) {
	e, err := mg.load(prog, false)
	defer mg.mu.Unlock()
	if err != nil {
		if e == nil {
			return Info{}, err
		}
		return e.info(), err
	}
	return mg.startLocked(e)
}

// load creates a behavior's machine, and with open opens its adaptors now
// (a load), else Run will (a start). Its general scripts and onLoad run,
// and its adaptors open, with the entry reserved and mg.mu released. It
// returns with mg.mu held, and the entry unless the name is taken by a
// behavior being loaded or unloaded.
func (mg *Manager) load(prog *seatml.Program, open bool) (*entry, error) {
	mg.mu.Lock()
	e := mg.find(prog.Name)
	switch {
	case e != nil && e.busy != nil:
		return nil, fmt.Errorf("load %q: %w", prog.Name, ErrBusy)
	case e != nil && e.state != Unloaded:
		return e, fmt.Errorf("%w: %q (from %s)", ErrDuplicate, prog.Name, e.file)
	case e == nil:
		e = &entry{name: prog.Name}
		mg.entries = append(mg.entries, e)
	}
	e.file = prog.File
	release := e.reserve()
	defer release()
	mg.mu.Unlock()

	name := prog.Name
	m, err := interpreter.New(prog, mg.machineOptions(e, prog))
	if err == nil && open {
		err = m.Open(context.Background()) // a failed Open unloads m
	}

	mg.mu.Lock()
	if err != nil {
		e.set(Unloaded, "load failed: "+err.Error())
		return e, fmt.Errorf("load %s: %w", prog.File, err)
	}
	e.m, e.prog = m, prog
	e.set(Loaded, "")
	e.reason = ""
	mg.log.Info("behavior loaded", zap.String("behavior", name), zap.String("file", prog.File))
	return e, nil
}

// machineOptions are the options of e's machine for prog.
func (mg *Manager) machineOptions(e *entry, prog *seatml.Program) interpreter.Options {
	opts := mg.opts.Machine
	name := prog.Name
	if mg.opts.Trace != nil { // a trace costs formatting on every rule fired
		opts.Trace = func(step string) { mg.trace(name, step) }
	}
	if mg.opts.Observe != nil {
		opts.Observer = interpreter.Observers(opts.Observer, mg.opts.Observe(prog))
	}
	if mg.opts.Debug {
		if e.dbg == nil {
			e.dbg = interpreter.NewDebugger(mg.log)
		}
		opts.Debugger = e.dbg
	}
	opts.OnResource = func(key, text string) {
		mg.mu.Lock()
		e.reason = key + ": " + text
		mg.mu.Unlock()
	}
	return opts
}

// Debugger returns a behavior's debugger (Options.Debug).
func (mg *Manager) Debugger(name string) (*interpreter.Debugger, error) {
	mg.mu.Lock()
	defer mg.mu.Unlock()
	e, err := mg.lookup(name)
	if err != nil {
		return nil, err
	}
	if e.dbg == nil {
		return nil, fmt.Errorf("%q has no debugger: seat run --control gives each behavior one", name)
	}
	return e.dbg, nil
}

// SessionDebugger returns the debugger of a session of a behavior with a
// session per peer: the peer's, by its address (Sessions lists them).
func (mg *Manager) SessionDebugger(name, peer string) (*interpreter.Debugger, error) {
	mg.mu.Lock()
	e, err := mg.lookup(name)
	mg.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if e.m == nil || !e.m.IsHost() {
		return nil, fmt.Errorf("%w: %q has no adaptor with session=\"peer\", or is not loaded", ErrNoSessions, name)
	}
	return interpreter.SessionDebugger(e.m, peer)
}

// Start runs a behavior: it is loaded again from its file if unloaded, then
// enters its initial state (L4). Starting a running behavior is an error.
func (mg *Manager) Start(name string) (Info, error) {
	e, err := mg.lockEntry(name)
	if err != nil {
		return Info{}, err
	}
	switch e.state {
	case Running:
		defer mg.mu.Unlock()
		return e.info(), fmt.Errorf("start %q: %w", name, ErrAlreadyRunning)
	case Stopping:
		defer mg.mu.Unlock()
		return e.info(), fmt.Errorf("start %q: %w", name, ErrBusy)
	case Unloaded:
		file := e.file
		mg.mu.Unlock()
		mg.trace(name, "compile")
		prog, err := mg.compile(file)
		if err != nil {
			return mg.infoOf(e), err
		}
		le, err := mg.load(prog, false)
		if err != nil {
			info := e.info()
			mg.mu.Unlock()
			return info, err
		}
		e = le
	}
	defer mg.mu.Unlock()
	return mg.startLocked(e)
}

// startLocked runs the machine and waits until its initial state is
// entered, or its start failed.
func (mg *Manager) startLocked(e *entry) (Info, error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	e.cancel, e.done = cancel, done
	m := e.m
	ready := m.Ready()
	go func() {
		err := m.Run(ctx)
		started := false
		select {
		case <-ready:
			started = true
		default:
		}
		mg.mu.Lock()
		e.runErr = err
		reason := "stopped"
		var ee *interpreter.ExitError
		switch {
		case errors.As(err, &ee):
			reason = ee.Error()
		case err != nil:
			reason = "failed: " + err.Error()
		case m.EndCause() != "":
			reason = m.EndCause() // seat.exit(0), a final state
		case e.state == Running:
			reason = "ended"
		}
		replacing := e.replacing
		e.m = nil
		e.set(Unloaded, reason)
		mg.mu.Unlock()
		switch {
		case replacing:
			mg.log.Info("old version stopped", zap.String("behavior", e.name))
		case err != nil && !started:
			// The start's caller reports the error: said once.
			mg.log.Info("behavior unloaded", zap.String("behavior", e.name), zap.String("reason", "start failed"))
		default:
			mg.log.Info("behavior unloaded", zap.String("behavior", e.name), zap.String("reason", reason))
		}
		close(done) // last: nothing of this goroutine outlives a waiter
	}()
	e.set(Running, "")
	mg.mu.Unlock()
	select {
	case <-ready:
	case <-done:
	}
	mg.mu.Lock()
	if e.state == Unloaded && e.runErr != nil {
		return e.info(), fmt.Errorf("start %q: %w", e.name, e.runErr)
	}
	return e.info(), nil
}

// Stop stops a running behavior (L6) and waits until it is unloaded.
func (mg *Manager) Stop(name string) (Info, error) {
	e, err := mg.lockEntry(name)
	if err != nil {
		return Info{}, err
	}
	if e.state != Running {
		defer mg.mu.Unlock()
		return e.info(), fmt.Errorf("stop %q: %w", name, ErrNotRunning)
	}
	mg.halt(e)
	defer mg.mu.Unlock()
	e.reason = "stopped"
	return e.info(), nil
}

// halt stops e's running machine and waits until its Run has returned;
// mg.mu is held on entry and on return, not in between.
func (mg *Manager) halt(e *entry) {
	e.set(Stopping, "")
	cancel, done := e.cancel, e.done
	mg.mu.Unlock()
	cancel()
	<-done
	mg.mu.Lock()
}

// Unload unloads a loaded behavior (L8: adaptors, onUnload, Lua) or stops a
// running one.
func (mg *Manager) Unload(name string) (Info, error) {
	e, err := mg.lockEntry(name)
	if err != nil {
		return Info{}, err
	}
	switch e.state {
	case Running:
		mg.mu.Unlock()
		return mg.Stop(name)
	case Loaded:
		// onUnload runs and the adaptors close without mg.mu.
		m := e.m
		release := e.reserve()
		mg.mu.Unlock()
		m.Close()
		mg.mu.Lock()
		release()
		e.m = nil
		e.set(Unloaded, "unloaded")
		defer mg.mu.Unlock()
		return e.info(), nil
	}
	defer mg.mu.Unlock()
	return e.info(), fmt.Errorf("unload %q: %w", name, ErrNotLoaded)
}

// Reload loads the behavior's file again: see ReloadWith.
func (mg *Manager) Reload(name string) (Info, error) { return mg.ReloadWith(name, ReloadOptions{}) }

// ReloadWith replaces a behavior with its file as it is now, all or
// nothing (docs/lifecycle.md, "Reload"): the file is checked, the new
// version created and its adaptors opened or taken over while the old one
// runs; only then does the old one stop, and the new one start if the old
// one was running. Any failure before that leaves the old version running,
// untouched. A running SEATML behavior goes on where it was (its states,
// stack, timers and plain Lua globals: docs/lifecycle.md, "Reload that
// keeps state") unless opts.Fresh.
func (mg *Manager) ReloadWith(name string, opts ReloadOptions) (Info, error) {
	set := opts.Set
	e, err := mg.lockEntry(name)
	if err != nil {
		return Info{}, err
	}
	if e.state == Stopping {
		defer mg.mu.Unlock()
		return e.info(), fmt.Errorf("reload %q: %w", name, ErrBusy)
	}
	file, was, old, oldProg := e.file, e.state, e.m, e.prog
	sets := mergeSets(e.overrides, set)
	release := e.reserve()
	mg.mu.Unlock()
	defer func() {
		mg.mu.Lock()
		release()
		mg.mu.Unlock()
	}()
	mg.trace(name, "compile")
	load := mg.opts.Load
	load.Set = append(slices.Clip(load.Set), sets...)
	prog, diags := seatml.Load(file, load)
	if prog == nil {
		return mg.infoOf(e), &LoadError{File: file, Diagnostics: diags}
	}
	for _, d := range diags {
		mg.log.Warn(d.Error())
	}
	if prog.Name != name {
		return mg.infoOf(e), fmt.Errorf("reload %q: %s now names its behavior %q", name, file, prog.Name)
	}
	if err := unknownSet(prog, set); err != nil {
		return mg.infoOf(e), fmt.Errorf("reload %q: %w", name, err)
	}
	if was == Unloaded || old == nil {
		m, err := interpreter.New(prog, mg.machineOptions(e, prog))
		if err == nil {
			err = m.Open(context.Background())
		}
		if err != nil {
			return mg.infoOf(e), reloadError(name, err)
		}
		mg.mu.Lock()
		e.m, e.prog, e.overrides, e.file = m, prog, sets, prog.File
		e.set(Loaded, "")
		e.reason = ""
		mg.mu.Unlock()
		mg.log.Info("behavior loaded", zap.String("behavior", name), zap.String("file", prog.File))
		return mg.infoOf(e), nil
	}

	// The new version beside the old one.
	m, err := interpreter.New(prog, mg.machineOptions(e, prog))
	if err != nil {
		return mg.infoOf(e), reloadError(name, err)
	}
	rep, err := m.OpenBeside(context.Background(), old, was == Running)
	if err != nil {
		return mg.infoOf(e), reloadError(name, err)
	}
	var notKept []string
	if was == Running && !opts.Fresh {
		if err := rep.KeepState(); err != nil {
			notKept = append(notKept, err.Error())
			mg.log.Warn("reload: not carried over", zap.String("behavior", name), zap.String("what", err.Error()))
		}
	}
	mg.log.Info("new version ready; stopping the old one", zap.String("behavior", name), zap.Strings("kept", rep.Taken()))
	mg.stopForReload(e, rep, was)
	if err := rep.Finish(context.Background()); err != nil {
		// Rare: an adaptor reopened on an address the old version let go
		// failed (another program took the address in between). A new
		// copy of the old version takes everything back.
		err = hinted(name, err)
		mg.log.Error("reload failed after the old version stopped; starting the old version again", zap.String("behavior", name), zap.Error(err))
		if rerr := mg.rollBack(e, m, oldProg, was); rerr != nil {
			mg.log.Error("the old version could not start again", zap.String("behavior", name), zap.Error(rerr))
			mg.mu.Lock()
			e.set(Unloaded, "reload failed: "+err.Error())
			mg.mu.Unlock()
			return mg.infoOf(e), fmt.Errorf("reload %q: %w; the old version could not start again either (%v): the behavior is unloaded", name, err, rerr)
		}
		return mg.infoOf(e), fmt.Errorf("reload %q: %w; the old version was started again, from its initial state", name, err)
	}
	mg.mu.Lock()
	e.prog, e.overrides = prog, sets
	mg.mu.Unlock()
	info, err := mg.install(e, m, was)
	if err == nil && was == Running && !opts.Fresh {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		report, kept := rep.Kept(ctx)
		cancel()
		if kept {
			info = mg.infoOf(e) // where it went on
		}
		info.Kept, info.NotKept = kept, append(notKept, report...)
	}
	return info, err
}

// stopForReload hands the taken-over adaptors to the new version and stops
// (was Running) or unloads the old one.
func (mg *Manager) stopForReload(e *entry, rep *interpreter.Replacement, was State) {
	mg.mu.Lock()
	old := e.m
	rep.Switch(was == Running)
	if was == Running {
		defer mg.mu.Unlock()
		e.replacing = true
		mg.halt(e)
		e.replacing = false
		return
	}
	mg.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// install makes m the behavior's machine, started if the old one ran.
func (mg *Manager) install(e *entry, m *interpreter.Machine, was State) (Info, error) {
	mg.mu.Lock()
	e.m = m
	e.set(Loaded, "")
	e.reason = ""
	mg.log.Info("behavior loaded", zap.String("behavior", e.name), zap.String("file", e.file))
	if was != Running {
		defer mg.mu.Unlock()
		return e.info(), nil
	}
	info, err := mg.startLocked(e)
	mg.mu.Unlock()
	return info, err
}

// rollBack gives what the failed new version m holds to a new copy of the
// old version, and starts it if the old one ran.
func (mg *Manager) rollBack(e *entry, m *interpreter.Machine, oldProg *seatml.Program, was State) error {
	back, err := interpreter.New(oldProg, mg.machineOptions(e, oldProg))
	if err != nil {
		m.Close()
		return err
	}
	rep, err := back.OpenBeside(context.Background(), m, was == Running)
	if err != nil {
		m.Close()
		return err
	}
	rep.Switch(was == Running)
	m.Close() // what was queued for m goes to back
	// m.Close closes only what it did not hand over.
	if err := rep.Finish(context.Background()); err != nil {
		back.Close()
		return err
	}
	_, err = mg.install(e, back, was)
	return err
}

// reloadError is the error of a reload that failed before the old version
// was touched, with the hint for seat ctl.
func reloadError(name string, err error) error {
	return fmt.Errorf("reload %q: %w; the running version is unchanged", name, hinted(name, err))
}

// hinted gives a port-in-use error the seat ctl command that moves it.
func hinted(name string, err error) error {
	var inUse *interpreter.AddrInUseError
	if errors.As(err, &inUse) {
		inUse.Hint = "seat ctl reload " + name + " --set " + inUse.Adaptor + ".port=PORT"
	}
	return err
}

// mergeSets returns old with each of add replacing the override of the
// same adaptor attribute.
func mergeSets(old, add []seatml.Override) []seatml.Override {
	out := slices.Clone(old)
	for _, o := range add {
		i := slices.IndexFunc(out, func(x seatml.Override) bool { return x.Adaptor == o.Adaptor && x.Attr == o.Attr })
		if i >= 0 {
			out[i] = o
		} else {
			out = append(out, o)
		}
	}
	return out
}

// unknownSet reports an override naming an adaptor the program does not
// declare.
func unknownSet(prog *seatml.Program, set []seatml.Override) error {
	for _, o := range set {
		if !slices.ContainsFunc(prog.Adaptors, func(d seatml.AdaptorDecl) bool { return d.Name == o.Adaptor }) {
			names := make([]string, len(prog.Adaptors))
			for i, d := range prog.Adaptors {
				names[i] = d.Name
			}
			return fmt.Errorf("--set %s: %s declares no adaptor %q (its adaptors: %s)", o, prog.File, o.Adaptor, strings.Join(names, ", "))
		}
	}
	return nil
}

// infoOf is e.info() for a caller that does not hold mg.mu.
func (mg *Manager) infoOf(e *entry) Info {
	mg.mu.Lock()
	defer mg.mu.Unlock()
	return e.info()
}

// Info returns one behavior's description.
func (mg *Manager) Info(name string) (Info, error) {
	mg.mu.Lock()
	defer mg.mu.Unlock()
	e, err := mg.lookup(name)
	if err != nil {
		return Info{}, err
	}
	return e.info(), nil
}

// List describes every behavior, in load order.
func (mg *Manager) List() []Info {
	mg.mu.Lock()
	defer mg.mu.Unlock()
	out := make([]Info, 0, len(mg.entries))
	for _, e := range mg.entries {
		out = append(out, e.info())
	}
	return out
}

// Machine returns a behavior's machine while it is loaded or running.
func (mg *Manager) Machine(name string) *interpreter.Machine {
	mg.mu.Lock()
	defer mg.mu.Unlock()
	if e := mg.find(name); e != nil {
		return e.m
	}
	return nil
}

// Sessions lists the sessions of a behavior that opens them.
func (mg *Manager) Sessions(name string) ([]interpreter.SessionInfo, error) {
	mg.mu.Lock()
	e, err := mg.lookup(name)
	mg.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if e.m == nil || !e.m.IsHost() {
		return nil, fmt.Errorf("%w: %q has no adaptor with session=\"peer\", or is not loaded", ErrNoSessions, name)
	}
	list := e.m.Sessions()
	if list == nil {
		list = []interpreter.SessionInfo{}
	}
	return list, nil
}

// StopAll stops running behaviors and unloads loaded ones, in reverse load
// order, through the same path as Stop.
func (mg *Manager) StopAll() {
	mg.mu.Lock()
	names := make([]string, 0, len(mg.entries))
	for i := len(mg.entries) - 1; i >= 0; i-- {
		names = append(names, mg.entries[i].name)
	}
	mg.mu.Unlock()
	for _, n := range names {
		_, _ = mg.Unload(n)
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Wait blocks until no behavior is running or ctx ends, and returns the
// exit code of the last behavior that ended with seat.exit(code != 0), or 0.
func (mg *Manager) Wait(ctx context.Context) int {
	for {
		mg.mu.Lock()
		var waits []chan struct{}
		code := 0
		for _, e := range mg.entries {
			// An unloaded behavior's goroutine logs why after the state
			// changes, then closes done: wait for it too, so that nothing
			// is written after Wait returns.
			if e.state == Running || e.state == Stopping || e.done != nil && !closed(e.done) {
				waits = append(waits, e.done)
			}
			if e.busy != nil { // a reload (seat run --watch) between its old version and its new
				waits = append(waits, e.busy)
			}
			var ee *interpreter.ExitError
			if errors.As(e.runErr, &ee) {
				code = ee.Code
			}
		}
		mg.mu.Unlock()
		if len(waits) == 0 {
			return code
		}
		select {
		case <-waits[0]:
		case <-ctx.Done():
			return code
		}
	}
}

package interpreter

// The debugger (docs/tools.md, "The debugger"): breakpoints, pause, step and
// continue, and looking at and poking a running SEATML behavior. It is an
// observer that watches only while it has something to do (a breakpoint,
// a pause or a step asked for): with none, the machine builds no record
// for it. It stops the behavior inside Observe, on the goroutine that runs
// the machine, and serves what is asked of it there until it is told to
// go on: the machine's Lua state and timers are touched only by that
// goroutine, as always. Meanwhile input queues (producers that find the
// machine held leave their items to it), no timer fires, and on
// continue every armed timer is moved by the time the pause took, so
// each fires with the time it had left.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/scxml"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// Breakpoint kinds.
const (
	BreakState   = "state"   // entering the state Name
	BreakLeave   = "leave"   // leaving the state Name
	BreakRule    = "rule"    // a rule or widget at Line (of File, if given) fires
	BreakMessage = "message" // a message to the adaptor Name (whose text matches Pattern, if given)
	BreakEvent   = "event"   // an event (of the adaptor Name, if given) whose text matches Pattern
	BreakWhen    = "when"    // the Lua condition Cond holds, before an event or timer is handled
)

// Breakpoint is where a behavior stops.
type Breakpoint struct {
	ID      int    `json:"id"`
	Kind    string `json:"kind"`
	Name    string `json:"name,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Cond    string `json:"cond,omitempty"`
	// Once: removed when hit (run to a state).
	Once bool `json:"once,omitempty"`
	// Hits counts the times it stopped the behavior.
	Hits int `json:"hits"`

	re   *regexp.Regexp
	code *luadm.Code
}

func (b *Breakpoint) String() string {
	switch b.Kind {
	case BreakRule:
		if b.File != "" {
			return fmt.Sprintf("rule at %s:%d", b.File, b.Line)
		}
		return fmt.Sprintf("rule at line %d", b.Line)
	case BreakMessage:
		if b.Pattern != "" {
			return fmt.Sprintf("message to %s matching %q", b.Name, b.Pattern)
		}
		return "message to " + b.Name
	case BreakEvent:
		if b.Name != "" {
			return fmt.Sprintf("event from %s matching %q", b.Name, b.Pattern)
		}
		return fmt.Sprintf("event matching %q", b.Pattern)
	case BreakWhen:
		return "when " + b.Cond
	case BreakLeave:
		return "leaving " + b.Name
	}
	return "entering " + b.Name
}

// What a step waits for.
const (
	stepNone  = iota
	stepEvent // the next event or timer
	stepMicro // the next record: a state entered or left, a rule fired, a message sent, an event
)

// Debugger breaks, steps and pokes one behavior. Its methods may be
// called from any goroutine; Options.Debugger attaches it to a machine,
// and to the next version on a reload (its breakpoints stay).
type Debugger struct {
	log *zap.Logger

	mu      sync.Mutex
	m       *Machine
	base    []Observer // the machine's observers without it
	joined  bool       // it is one of the machine's observers
	bps     []*Breakpoint
	nextID  int
	step    int
	pauseAt bool // pause at the next record, or between events
	paused  bool
	why     string
	at      Record
	since   time.Time
	// cmds carries what is asked while paused to the paused goroutine;
	// resume ends the pause, and over is closed when it has ended.
	cmds   chan func()
	resume chan struct{}
	over   chan struct{}
	// pausing is closed when a pause begins (made again after it).
	pausing chan struct{}

	watching atomic.Bool
	// refused says why the behavior cannot be debugged (a host of
	// sessions, whose sessions each have a debugger); nil when it can.
	refused atomic.Pointer[string]
}

// NewDebugger returns a debugger with no breakpoint.
func NewDebugger(log *zap.Logger) *Debugger {
	if log == nil {
		log = zap.NewNop()
	}
	return &Debugger{log: log, cmds: make(chan func()), pausing: make(chan struct{})}
}

// refuse says why the debugger has no machine to debug (New).
func (d *Debugger) refuse(why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.m = nil
	d.refused.Store(&why)
}

// attach makes m the machine it debugs (New); base are m's other
// observers, which it joins while it watches.
func (d *Debugger) attach(m *Machine, base []Observer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.m, d.base = m, base
	d.log = m.log
	d.refused.Store(nil)
	d.joined = false
	if d.watching.Load() { // a new version: the breakpoints stay
		m.observing = observeBy(append(base, d)...)
		d.joined = true
	}
}

// rejoin makes the machine's observers its base ones and, while it
// watches, itself: with nothing to do it costs the machine nothing. It
// runs on the machine's goroutine.
func (d *Debugger) rejoin() {
	d.mu.Lock()
	defer d.mu.Unlock()
	watching := d.watching.Load()
	if d.m == nil || watching == d.joined {
		return
	}
	list := d.base
	if watching {
		list = append(append([]Observer(nil), d.base...), d)
	}
	d.m.observing = observeBy(list...)
	d.joined = watching
}

// Watching reports whether it has something to do (Watcher).
func (d *Debugger) Watching() bool { return d.watching.Load() }

// Kinds are the records it looks at.
func (d *Debugger) Kinds() KindSet {
	return kIn | kConnect | kDisconnect | kOut | kFire | kState | kExit | kTimer | kRaise
}

// rewatch sets Watching from what it has to do; d.mu is held. The
// machine's observers follow at rejoin.
func (d *Debugger) rewatch() {
	d.watching.Store(len(d.bps) > 0 || d.step != stepNone || d.pauseAt)
}

// resync has the machine's goroutine rejoin, and waits for it: a
// breakpoint set is in force when Break returns.
func (d *Debugger) resync() error {
	d.mu.Lock()
	m := d.m
	d.mu.Unlock()
	if m != nil && !m.running.Load() {
		return nil // loaded, not started: it joins as it starts (Run)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return d.run(ctx, d.rejoin)
}

// Observe stops the behavior when r hits a breakpoint or ends a step.
// It runs on the goroutine that runs the machine.
func (d *Debugger) Observe(r Record) {
	d.mu.Lock()
	why := d.hit(r)
	d.mu.Unlock()
	if why != "" {
		d.pauseHere(r, why)
	}
}

// boundary kinds start the handling of an event or a timer.
func boundary(k RecordKind) bool {
	return k == RecIn || k == RecTimer || k == RecRaise || k == RecConnect || k == RecDisconnect
}

// hit says why r stops the behavior, or "". d.mu is held.
func (d *Debugger) hit(r Record) string {
	switch {
	case d.pauseAt:
		return "pause asked"
	case d.step == stepEvent && boundary(r.Kind):
		return "stepped to the next event"
	case d.step == stepMicro && r.Kind != RecStep:
		return "stepped"
	}
	for i, b := range d.bps {
		if !b.matches(d, r) {
			continue
		}
		b.Hits++
		if b.Once {
			d.bps = append(d.bps[:i], d.bps[i+1:]...)
			d.rewatch()
		}
		return fmt.Sprintf("breakpoint %d: %s", b.ID, b)
	}
	return ""
}

// matches reports whether r hits b. d.mu is held.
func (b *Breakpoint) matches(d *Debugger, r Record) bool {
	switch b.Kind {
	case BreakState:
		return r.Kind == RecState && r.State == b.Name
	case BreakLeave:
		return r.Kind == RecExit && r.State == b.Name
	case BreakRule:
		return r.Kind == RecFire && r.At.Line == b.Line && (b.File == "" || filepath.Base(r.At.File) == filepath.Base(b.File))
	case BreakMessage:
		return r.Kind == RecOut && r.Source == b.Name && (b.re == nil || b.re.MatchString(r.Text))
	case BreakEvent:
		return r.Kind == RecIn && (b.Name == "" || r.Source == b.Name) && b.re.MatchString(r.Text)
	case BreakWhen:
		return boundary(r.Kind) && d.holds(b)
	}
	return false
}

// holds evaluates a when breakpoint's condition. d.mu is held; it runs
// on the machine's goroutine, between events.
func (d *Debugger) holds(b *Breakpoint) bool {
	if d.m == nil || b.code == nil || !d.m.luaOpen {
		return false
	}
	v, err := d.m.call(b.code, d.m.ctx(ctxLifecycle))
	if err != nil {
		d.log.Warn("debugger: breakpoint condition failed", zap.Int("breakpoint", b.ID), zap.Error(err))
		return false
	}
	return lua.LVAsBool(v)
}

// pauseHere stops the behavior until it is told to go on, serving what
// is asked meanwhile; then every armed timer is moved by the pause.
func (d *Debugger) pauseHere(r Record, why string) {
	d.mu.Lock()
	m := d.m
	d.paused, d.why, d.at = true, why, r
	d.step, d.pauseAt = stepNone, false
	d.resume, d.over = make(chan struct{}), make(chan struct{})
	resume, over := d.resume, d.over
	close(d.pausing)
	d.since = m.clock.Now()
	d.rewatch()
	d.mu.Unlock()
	d.log.Info("debugger: paused", zap.String("why", why), zap.String("at", describe(r)))
	ctx := m.runCtx
	if ctx == nil {
		ctx = context.Background()
	}
	if m.dog != nil { // stopped inside a script (seat.send): the pause is not its time
		m.dog.Hold()
		defer m.dog.Release()
	}
	m.flushAdaptors() // what was sent before the pause goes out now, not after it
	m.passBaton()     // a reader running the machine hands its reading on: input queues meanwhile
wait:
	for {
		select {
		case f := <-d.cmds:
			f()
		case <-resume:
			break wait
		case <-ctx.Done():
			break wait // the behavior is stopping
		case <-m.done:
			break wait
		}
	}
	held := m.clock.Now().Sub(d.since)
	shiftTimers(m, held)
	if m.wants(kPaused) { // a replay leaves the pause's time out, as the timers did
		m.observe(Record{Kind: RecPaused, Key: why, Text: strconv.FormatFloat(held.Seconds(), 'f', -1, 64)})
	}
	d.mu.Lock()
	d.paused = false
	d.pausing = make(chan struct{})
	d.mu.Unlock()
	d.rejoin() // it may have nothing left to do
	close(over)
	d.log.Info("debugger: going on", zap.Duration("paused", held))
}

// describe is a record as the debugger shows where it stopped.
func describe(r Record) string {
	switch r.Kind {
	case RecIn:
		return "event " + r.Source + ": " + r.Text
	case RecOut:
		return "message to " + r.Source + ": " + r.Text
	case RecFire:
		return "rule at " + r.At.String()
	case RecState:
		return "entering " + r.State
	case RecExit:
		return "leaving " + r.State
	case RecTimer:
		return r.Timer + " in " + r.State
	case RecRaise:
		return "internal event " + r.Key
	case "":
		return "between events"
	}
	return string(r.Kind) + " " + r.Source + " " + r.Text
}

// shiftTimers moves every armed timer of m by d, and what a SEATML
// behavior counts its onexec periods from: the clock is held while the
// behavior is paused.
func shiftTimers(m *Machine, d time.Duration) {
	if d <= 0 {
		return
	}
	for _, t := range m.timers.ts {
		t.at = t.at.Add(d)
	}
	if b, ok := m.b.(*seatmlBehavior); ok {
		b.enteredAt = b.enteredAt.Add(d)
		b.nextTick = b.nextTick.Add(d)
		for i := range b.since {
			b.since[i] = b.since[i].Add(d)
		}
		if b.general.armed() || len(b.counting) > 0 {
			b.mirrorTimeout()
		}
		b.publishTick()
	}
}

// hasRuleAt reports whether a rule or widget of prog starts at line of
// file (any of its files when file is "").
func hasRuleAt(prog *seatml.Program, file string, line int) bool {
	at := func(p schema.Pos) bool {
		return p.Line == line && (file == "" || filepath.Base(p.File) == filepath.Base(file))
	}
	for _, r := range prog.Rules {
		if r != nil && at(r.Pos) {
			return true
		}
	}
	for _, s := range prog.States {
		for _, w := range s.Widgets {
			if at(w.Pos) {
				return true
			}
		}
	}
	return false
}

// notRunning says why there is no machine to work on.
func (d *Debugger) notRunning() error {
	if why := d.refused.Load(); why != nil {
		return errors.New(*why)
	}
	return errors.New("the behavior is not running")
}

// ErrNotPaused is what a step or a continue of a running behavior gets.
var ErrNotPaused = errors.New("the behavior is not paused")

// run runs f on the machine's goroutine, once, and waits for it: on
// the paused one if the behavior is paused, else between events; if it
// pauses before f's turn comes, on the paused one.
func (d *Debugger) run(ctx context.Context, f func()) error {
	d.mu.Lock()
	m := d.m
	d.mu.Unlock()
	if m == nil {
		return d.notRunning()
	}
	var once sync.Once
	done := make(chan struct{})
	g := func() { once.Do(func() { f(); close(done) }) }
	queued := false
	for {
		d.mu.Lock()
		paused, pausing, over := d.paused, d.pausing, d.over
		d.mu.Unlock()
		if paused {
			select {
			case d.cmds <- g:
				<-done
				return nil
			case <-done:
				return nil
			case <-over: // it went on meanwhile
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if !queued {
			if err := m.enqueue(ctx, item{fn: g}); err != nil {
				return err
			}
			queued = true
		}
		select {
		case <-done:
			return nil
		case <-pausing: // paused before its turn: the paused goroutine runs it
		case <-ctx.Done():
			return ctx.Err()
		case <-m.done:
			return errStopped
		}
	}
}

// Break adds a breakpoint and returns it with its number.
func (d *Debugger) Break(b Breakpoint) (Breakpoint, error) {
	switch b.Kind {
	case BreakState, BreakLeave:
		if b.Name == "" {
			return b, errors.New("a state breakpoint needs the state's name")
		}
	case BreakRule:
		if b.Line <= 0 {
			return b, errors.New("a rule breakpoint needs a line (FILE:LINE or LINE)")
		}
	case BreakMessage:
		if b.Name == "" {
			return b, errors.New("a message breakpoint needs the adaptor's name")
		}
	case BreakEvent:
		if b.Pattern == "" {
			b.Pattern = "."
		}
	case BreakWhen:
		if strings.TrimSpace(b.Cond) == "" {
			return b, errors.New("a when breakpoint needs a Lua condition")
		}
		b.code = luadm.CompileExpr(b.Cond, schema.Pos{File: "breakpoint", Line: 1, Col: 1}, "cond")
		if err := b.code.Err(); err != nil {
			return b, fmt.Errorf("the condition does not compile: %w", err)
		}
	default:
		return b, fmt.Errorf("unknown breakpoint kind %q: state, leave, rule, message, event or when", b.Kind)
	}
	if b.Pattern != "" && (b.Kind == BreakMessage || b.Kind == BreakEvent) {
		re, err := regexp.Compile(b.Pattern)
		if err != nil {
			return b, fmt.Errorf("the pattern does not compile: %w", err)
		}
		b.re = re
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if (b.Kind == BreakState || b.Kind == BreakLeave) && d.m != nil && d.m.prog.State(b.Name) == nil {
		return b, fmt.Errorf("the behavior has no state %q", b.Name)
	}
	if b.Kind == BreakRule && d.m != nil && !hasRuleAt(d.m.prog, b.File, b.Line) {
		where := fmt.Sprintf("line %d", b.Line)
		if b.File != "" {
			where = fmt.Sprintf("%s:%d", b.File, b.Line)
		}
		return b, fmt.Errorf("no rule or widget of the behavior starts at %s (a rule's line is its <rule> tag's)", where)
	}
	d.nextID++
	b.ID = d.nextID
	d.bps = append(d.bps, &b)
	d.rewatch()
	running := d.m != nil
	d.mu.Unlock()
	d.log.Info("debugger: breakpoint set", zap.Int("breakpoint", b.ID), zap.String("where", b.String()))
	if running {
		if err := d.resync(); err != nil && !errors.Is(err, errStopped) {
			return b, err
		}
	}
	d.mu.Lock()
	return b, nil
}

// Clear removes a breakpoint, or all of them with id 0.
func (d *Debugger) Clear(id int) error {
	d.mu.Lock()
	found := id == 0
	if id == 0 {
		d.bps = nil
	}
	for i, b := range d.bps {
		if b.ID == id {
			d.bps = append(d.bps[:i], d.bps[i+1:]...)
			found = true
			break
		}
	}
	d.rewatch()
	running, paused := d.m != nil, d.paused
	d.mu.Unlock()
	if !found {
		return fmt.Errorf("no breakpoint %d", id)
	}
	if running && !paused { // a paused one rejoins as it goes on
		if err := d.resync(); err != nil && !errors.Is(err, errStopped) {
			return err
		}
	}
	return nil
}

// Pause stops the behavior at the next thing it does, or at once if it
// is idle.
func (d *Debugger) Pause() error { return d.PauseFor("pause asked") }

// PauseFor is Pause, saying why (seat replay --until: the step it
// stopped at).
func (d *Debugger) PauseFor(why string) error {
	d.mu.Lock()
	m, paused := d.m, d.paused
	if m == nil {
		d.mu.Unlock()
		return d.notRunning()
	}
	if paused {
		d.mu.Unlock()
		return nil
	}
	d.pauseAt = true
	d.rewatch()
	d.mu.Unlock()
	// It stops before the next item of its queue (at once if idle), or
	// at the next thing it does if it joined its observers before that.
	m.q.prepend([]item{{fn: func() {
		d.mu.Lock()
		still := d.pauseAt
		d.mu.Unlock()
		if still {
			d.pauseHere(Record{}, why)
		}
	}}})
	return nil
}

// WaitPaused waits until the behavior is paused, or ctx ends; it
// reports whether it is paused (a step's answer says where it stopped).
func (d *Debugger) WaitPaused(ctx context.Context) bool {
	for {
		d.mu.Lock()
		paused, pausing, over, m := d.paused, d.pausing, d.over, d.m
		d.mu.Unlock()
		if paused {
			return true
		}
		if m == nil {
			return false
		}
		select {
		case <-pausing: // closed by the pause that is ending: wait for its end
			select {
			case <-over:
			case <-ctx.Done():
				return false
			}
			continue
		default:
		}
		select {
		case <-pausing:
		case <-m.done:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// Continue lets a paused behavior go on, to its next breakpoint.
func (d *Debugger) Continue() error { return d.goOn(stepNone) }

// Step lets a paused behavior go on to the next event or timer, or with
// micro, to the next thing it does (a state entered or left, a rule
// fired, a message sent).
func (d *Debugger) Step(micro bool) error {
	if micro {
		return d.goOn(stepMicro)
	}
	return d.goOn(stepEvent)
}

// Until lets a paused (or running) behavior go on until it enters state.
func (d *Debugger) Until(state string) error {
	if _, err := d.Break(Breakpoint{Kind: BreakState, Name: state, Once: true}); err != nil {
		return err
	}
	d.mu.Lock()
	paused := d.paused
	d.mu.Unlock()
	if !paused {
		return nil
	}
	return d.goOn(stepNone)
}

func (d *Debugger) goOn(step int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.paused {
		return ErrNotPaused
	}
	d.step = step
	d.rewatch()
	close(d.resume)
	d.paused = false
	return nil
}

// DebugSummary is what a debugger is doing, known without asking the
// machine: the monitor's status shows it every half second.
type DebugSummary struct {
	Paused bool   `json:"paused"`
	Why    string `json:"why,omitempty"`
	At     string `json:"at,omitempty"`
	// Refused says why the behavior cannot be debugged (a host of
	// sessions).
	Refused     string       `json:"refused,omitempty"`
	Breakpoints []Breakpoint `json:"breakpoints,omitempty"`
}

// Summary says whether the behavior is paused, where, and its
// breakpoints.
func (d *Debugger) Summary() DebugSummary {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.summaryLocked()
}

// summaryLocked is Summary; d.mu is held.
func (d *Debugger) summaryLocked() DebugSummary {
	var s DebugSummary
	if why := d.refused.Load(); why != nil {
		s.Refused = *why
	}
	s.Paused = d.paused
	if d.paused { // why it stopped last is gone by once it goes on
		s.Why, s.At = d.why, describe(d.at)
	}
	for _, b := range d.bps {
		s.Breakpoints = append(s.Breakpoints, *b)
	}
	return s
}

// DebugState is what the debugger shows of a behavior.
type DebugState struct {
	// DebugSummary: whether it is paused, why and where (the event,
	// rule, state or message), and the breakpoints.
	DebugSummary
	State   string         `json:"state,omitempty"`
	Active  []string       `json:"active,omitempty"`
	Stack   []string       `json:"stack,omitempty"`
	Event   string         `json:"event,omitempty"`
	Queue   []string       `json:"queue,omitempty"`
	Timers  []DebugTimer   `json:"timers,omitempty"`
	Globals map[string]any `json:"globals,omitempty"`
}

// DebugTimer is an armed timer and the time it has left (held while the
// behavior is paused).
type DebugTimer struct {
	What string        `json:"what"`
	In   time.Duration `json:"in"`
}

// Show returns what the behavior is doing: where it stopped, its states,
// its queue, its timers and its Lua globals (tables expanded).
func (d *Debugger) Show(ctx context.Context) (DebugState, error) {
	var s DebugState
	err := d.run(ctx, func() {
		d.mu.Lock()
		m := d.m
		s.DebugSummary = d.summaryLocked()
		between := d.paused && d.at.Kind == ""
		now := m.clock.Now()
		if d.paused {
			now = d.since
		}
		d.mu.Unlock()
		showMachine(m, &s, now)
		if between {
			s.Event = "" // the last one handled is done with
		}
	})
	return s, err
}

// Snapshot is what the debugger would show of m now, not paused: its
// states, stack, queue, timers and Lua globals. It runs on m's goroutine
// (a replay's timeline takes one after each step).
func Snapshot(m *Machine) DebugState {
	var s DebugState
	showMachine(m, &s, m.clock.Now())
	return s
}

// showMachine fills s from m, on its goroutine; now is the clock as the
// timers count it.
func showMachine(m *Machine, s *DebugState, now time.Time) {
	if m.cur != nil {
		s.State = m.cur.Name
	}
	if m.prog.Document != nil {
		s.Active = m.ActiveStates() // the whole configuration (activeNames is an SCXML document's current state alone)
	} else if m.activeNames != nil {
		s.Active = m.activeNames()
	}
	if b, ok := m.b.(*seatmlBehavior); ok {
		for _, f := range b.stack {
			s.Stack = append(s.Stack, f.leaf.Name)
		}
		for _, t := range m.timers.ts {
			s.Timers = append(s.Timers, DebugTimer{What: timerName(b, t), In: t.at.Sub(now)})
		}
	} else {
		for _, t := range m.timers.ts { // an SCXML document's delayed events
			if d, ok := t.ref.(*scxml.Delayed); ok && t.id == timerDelayed {
				s.Timers = append(s.Timers, DebugTimer{What: "delayed event " + d.Name(), In: t.at.Sub(now)})
			}
		}
	}
	sort.Slice(s.Timers, func(i, j int) bool { return s.Timers[i].In < s.Timers[j].In })
	if ev := m.evBuf; s.Paused && (ev.Source != "" || ev.Text != "") { // idle, none is being handled
		s.Event = ev.Source + ": " + ev.Text
	}
	s.Queue = m.q.describe(50)
	if m.luaOpen {
		s.Globals = map[string]any{}
		names := make([]string, 0, len(m.globalSets)+1)
		for name := range m.globalSets {
			names = append(names, name)
		}
		if m.selfMade {
			names = append(names, "self")
		}
		if doc := m.prog.Document; doc != nil { // an SCXML document's datamodel
			names = append(names, doc.DataIDs()...)
		}
		for _, name := range names {
			v := m.L.G.Global.RawGetString(name)
			if v == lua.LNil {
				continue
			}
			s.Globals[name] = jsonOf(v, 0)
		}
	}
}

// timerName says what a SEATML behavior's timer is for.
func timerName(b *seatmlBehavior, t *timer) string {
	switch {
	case t.id == timerGeneral:
		return "timeout"
	case t.id == timerTick:
		return "onexec"
	case t.id >= 0 && t.id < len(b.states) && b.states[t.id].s != nil:
		return "timeout of " + b.states[t.id].s.Name
	}
	return "timer " + strconv.Itoa(t.id)
}

// jsonOf is a Lua value as JSON shows it: a table with keys 1..n is an
// array, other tables objects; a function or userdata is its type in
// angle brackets ("<function>").
func jsonOf(v lua.LValue, depth int) any {
	switch x := v.(type) {
	case lua.LBool:
		return bool(x)
	case lua.LNumber:
		return float64(x)
	case lua.LString:
		return string(x)
	case *lua.LTable:
		if depth > 8 {
			return "table (deeper than 8)"
		}
		if n := x.Len(); n > 0 {
			arr := make([]any, 0, n)
			for i := 1; i <= n; i++ {
				arr = append(arr, jsonOf(x.RawGetInt(i), depth+1))
			}
			return arr
		}
		obj := map[string]any{}
		x.ForEach(func(k, v lua.LValue) { obj[k.String()] = jsonOf(v, depth+1) })
		return obj
	case *lua.LNilType:
		return nil
	}
	return "<" + v.Type().String() + ">" // not data: it cannot be set, nor carried over a reload
}

// Set gives a Lua global (or a field of one: self.name, visitor.tags)
// the value value, as JSON writes it ("\"山田\"", 3, {"a": 1}).
func (d *Debugger) Set(ctx context.Context, path, value string) error {
	if err := CheckSet(path, value); err != nil { // said at once, without waiting for the behavior
		return err
	}
	var ferr error
	err := d.run(ctx, func() {
		d.mu.Lock()
		m := d.m
		d.mu.Unlock()
		ferr = SetGlobal(m, path, value)
	})
	if err != nil {
		return err
	}
	return ferr
}

// CheckSet says what is wrong with setting the Lua variable path (name,
// or name.field) to the JSON value, or nil.
func CheckSet(path, value string) error {
	_, err := parseSet(path, value)
	return err
}

// parseSet reads a set's value, checking its path.
func parseSet(path, value string) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		return nil, fmt.Errorf("the value is not JSON (a string is quoted: '\"山田\"'): %w", err)
	}
	for _, p := range strings.Split(path, ".") {
		if !identifier.MatchString(p) {
			return nil, fmt.Errorf("%q is not a Lua variable (name, or name.field)", path)
		}
	}
	return v, nil
}

// SetGlobal gives m's Lua global path (name, or name.field.field) the
// JSON value value, logs it and records it (RecSet), so that a replay
// sets it again. It runs on m's goroutine (the debugger's set, a
// transcript's @set).
func SetGlobal(m *Machine, path, value string) error {
	v, err := parseSet(path, value)
	if err != nil {
		return err
	}
	parts := strings.Split(path, ".")
	if !m.luaOpen {
		return errors.New("the behavior has no Lua state")
	}
	if eventGlobal(parts[0]) >= 0 {
		return fmt.Errorf("%s is set by each event", parts[0])
	}
	if m.prog.Document != nil && strings.HasPrefix(parts[0], "_") {
		return fmt.Errorf("%s is a system variable of the SCXML document (_event, _sessionid, _name, _ioprocessors, _x)", parts[0])
	}
	lv := toLua(m.L, v)
	if len(parts) == 1 {
		m.L.G.Global.RawSetString(parts[0], lv)
		m.noteGlobalSet(m.L, parts[0], lv == lua.LNil)
	} else {
		t, ok := m.L.GetGlobal(parts[0]).(*lua.LTable)
		for _, p := range parts[1 : len(parts)-1] {
			if !ok {
				break
			}
			t, ok = t.RawGetString(p).(*lua.LTable)
		}
		if !ok {
			return fmt.Errorf("%s is not a table", strings.Join(parts[:len(parts)-1], "."))
		}
		t.RawSetString(parts[len(parts)-1], lv)
	}
	var compact bytes.Buffer
	json.Compact(&compact, []byte(value))
	m.log.Info("debugger: set", zap.String("variable", path), zap.String("value", compact.String()))
	if m.wants(kSet) {
		m.observe(Record{Kind: RecSet, Key: path, Text: compact.String()})
	}
	return nil
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Send delivers text as an event of the adaptor, as if it had arrived:
// queued behind what is waiting, handled once the behavior goes on.
func (d *Debugger) Send(ctx context.Context, adaptor, text string) error {
	ev := adaptors.Event{Source: adaptor, Text: text}
	if adaptor == "gui" {
		ev.ID = text
	}
	return d.send(ctx, ev)
}

// SendMessage delivers a structured message (plain values: a ROS
// message, an OpenRTM value) as an event of the adaptor, as the adaptor
// gives one that arrives: rtc_in_data and event.data in scripts, and its
// JSON as the text.
func (d *Debugger) SendMessage(ctx context.Context, adaptor string, data any) error {
	if adaptor == "gui" {
		return errors.New("a widget takes text, not a structured message")
	}
	return d.send(ctx, adaptors.Event{Source: adaptor, Data: data, Text: adaptors.JSON(data)})
}

func (d *Debugger) send(ctx context.Context, ev adaptors.Event) error {
	d.mu.Lock()
	m := d.m
	d.mu.Unlock()
	if m == nil {
		return d.notRunning()
	}
	known := ev.Source == "gui" && m.prog.Document == nil // a document has no widgets
	for _, a := range m.prog.Adaptors {
		known = known || a.Name == ev.Source
	}
	if !known {
		return fmt.Errorf("the behavior has no adaptor %q", ev.Source)
	}
	m.log.Info("debugger: event sent", zap.String("adaptor", ev.Source), zap.String("text", ev.Text), zap.Bool("message", ev.Data != nil))
	ev.Time = m.clock.Now()
	return m.enqueue(ctx, item{ev: ev, at: ev.Time})
}

var _ Watcher = (*Debugger)(nil)

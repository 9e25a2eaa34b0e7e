package statechart

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Options are what an Instance tells its runtime and observers.
type Options struct {
	// OnEvent is called with each event the instance takes from a queue,
	// before it selects transitions: the datamodel binds _event here.
	OnEvent func(ev *Event)
	// OnEnter and OnExit are told of each state entered and exited:
	// OnEnter once it is active, before its OnEntry content (which sees
	// it as the state entered); OnExit after its OnExit content. They are given the
	// instance: a front end sharing one Options value among its instances
	// finds its own in Instance.Ext.
	OnEnter, OnExit func(in *Instance, s *State)
	// OnTransition is told of each transition taken, before its content.
	OnTransition func(t *Transition)
	// OnError is told of each error raised as an event.
	OnError func(ev *Event, err error)
	// Limit, if set, is asked after each microstep and each internal
	// event of a macrostep whether to go on: an error stops the macrostep
	// as a runaway one is stopped (raised as error.execution wrapped in a
	// *RunawayError, the instance ended). A runtime bounds a macrostep's
	// time with it, which maxMicrosteps cannot do when each step waits on
	// a slow script.
	Limit func() error
	// KeepInternal leaves raised events on the internal queue for the
	// front end, which takes them with NextInternal and handles them with
	// its own matching (SEATML's rules of source "event"); the engine then
	// settles only eventless transitions.
	KeepInternal bool
	// OnDone is called once when the instance has ended: final is the
	// top-level final state reached (nil when cancelled) and data its
	// done data.
	OnDone func(final *State, data any)
}

// maxMicrosteps bounds the microsteps of one macrostep: a chart whose
// eventless transitions or raised events never settle is stopped.
const maxMicrosteps = 100000

// ErrRunaway is raised (as error.execution, in a *RunawayError) when a
// macrostep does not settle within maxMicrosteps microsteps.
var ErrRunaway = errors.New("the machine did not settle: too many microsteps in one macrostep")

// RunawayError is the error a macrostep that did not settle is stopped
// with: Err is ErrRunaway after maxMicrosteps microsteps, or what
// Options.Limit returned. It says where the macrostep was, for the front
// end to place in its file: the last transition taken, the event it took
// (nil for an eventless one) and the state it was in.
type RunawayError struct {
	Err   error
	Steps int // the microsteps the macrostep took
	// Transition is the last transition taken, nil if none was; Event
	// the event it took, nil when it was eventless.
	Transition *Transition
	Event      *Event
	// State is the active atomic state the macrostep was in when it was
	// stopped (the first, in document order, in a parallel state).
	State *State
}

// Unwrap returns Err: errors.Is(err, ErrRunaway) holds for the step
// bound.
func (e *RunawayError) Unwrap() error { return e.Err }

// Error says what stopped the macrostep and where it was, by ids: a front
// end that knows the transitions' places says more (Transition.Ext).
func (e *RunawayError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if errors.Is(e.Err, ErrRunaway) {
		fmt.Fprintf(&b, " (%d)", maxMicrosteps)
	} else {
		fmt.Fprintf(&b, "; %d microstep", e.Steps)
		if e.Steps != 1 {
			b.WriteString("s")
		}
	}
	switch {
	case e.Transition == nil:
		b.WriteString(", none took a transition")
		if e.State != nil {
			fmt.Fprintf(&b, ", in state %q", e.State.ID)
		}
		return b.String()
	case e.Event != nil:
		fmt.Fprintf(&b, ": the last took a transition of %q on the event %q", e.Transition.Source.ID, e.Event.Name)
	default:
		fmt.Fprintf(&b, ": the last took an eventless transition of %q", e.Transition.Source.ID)
	}
	if e.State != nil {
		fmt.Fprintf(&b, ", into state %q", e.State.ID)
	}
	return b.String()
}

// Instance runs a Chart. It is not safe for concurrent use: the runtime
// serializes Start, Handle and Cancel.
type Instance struct {
	// Ext is the runtime's own: the session the instance runs in, which
	// the front end's actions reach through it.
	Ext any

	chart *Chart
	opts  Options

	active  []bool // by state index
	config  []*State
	history map[*State][]*State
	entered []bool // the state's Init has run
	invoked map[*State][]invocation
	toInvok []bool // statesToInvoke, by index (states with invocations only)
	toStart int    // how many are set

	internal []*Event
	// steps counts the microsteps of the macrostep under way; lastT and
	// lastEv are its last transition and the event it took (nil:
	// eventless), which a runaway's error names.
	steps   int
	lastT   *Transition
	lastEv  *Event
	running bool
	started bool
	final   *State
	nextID  int

	// scratch, reused across microsteps
	one       [1]*Transition // Take's
	enabled   []*Transition
	kept      []*Transition // removeConflicts' result
	toExit    []bool
	toEnter   []bool
	defEntry  []bool
	defHist   map[*State]Block
	atomics   []*State
	targets   []*State // domain's effective targets
	exiting   []*State
	enterList []*State // the states marked in toEnter
	eff       []*State // enterStates' effective targets
}

type invocation struct {
	inv *Invoke
	id  string
}

// New returns an instance of the chart, not started. It allocates little
// (a front end may start one per conversation): the per-state flags share
// one array, and the maps of history and invocations are made when first
// needed.
func New(c *Chart, opts Options) *Instance {
	n := len(c.States)
	flags := make([]bool, 6*n)
	return &Instance{
		chart: c, opts: opts,
		active: flags[:n:n], entered: flags[n : 2*n : 2*n], toInvok: flags[2*n : 3*n : 3*n],
		toExit: flags[3*n : 4*n : 4*n], toEnter: flags[4*n : 5*n : 5*n], defEntry: flags[5*n:],
	}
}

// Running reports whether the instance has started and not ended.
func (in *Instance) Running() bool { return in.running }

// Final returns the top-level final state the instance ended in, or nil.
func (in *Instance) Final() *State { return in.final }

// In reports whether the state with the id is active (SCXML's In()).
func (in *Instance) In(id string) bool {
	s := in.chart.ids[id]
	return s != nil && in.active[s.index]
}

// Active reports whether s is active.
func (in *Instance) Active(s *State) bool { return in.active[s.index] }

// Configuration returns the active states in document order. The slice is
// the instance's: copy it to keep it.
func (in *Instance) Configuration() []*State { return in.config }

// Microsteps is how many microsteps the macrostep under way has taken:
// a front end that logs each state entered can tell a runaway's from a
// macrostep's few.
func (in *Instance) Microsteps() int { return in.steps }

// Raise puts an event on the internal queue.
func (in *Instance) Raise(ev *Event) {
	if ev.Type == External {
		ev.Type = Internal
	}
	in.internal = append(in.internal, ev)
}

// RaiseError raises an error event for err: its *Error's event name, or
// error.execution.
func (in *Instance) RaiseError(err error) {
	ev := &Event{Name: "error.execution", Type: Platform, Data: err.Error()}
	var e *Error
	if errors.As(err, &e) {
		if e.Event != "" {
			ev.Name = e.Event
		}
		ev.SendID = e.SendID
	}
	if in.opts.OnError != nil {
		in.opts.OnError(ev, err)
	}
	in.internal = append(in.internal, ev)
}

// Start runs the chart's Setup, enters the initial configuration and runs
// to the first stable configuration.
func (in *Instance) Start() {
	if !in.setUp() {
		return
	}
	root := in.chart.Root // the document: never in the configuration
	switch {
	case root.Initial == nil:
	case root.Initial.flat: // a top-level atomic state: nothing to compute
		in.enterFlat(root.Initial.Targets[0])
	default:
		in.enterStates([]*Transition{root.Initial})
	}
	in.settle()
}

// setUp runs the chart's Setup and the document's Init, once: false if
// the instance had started already.
func (in *Instance) setUp() bool {
	if in.started {
		return false
	}
	in.started, in.running = true, true
	in.steps, in.lastT, in.lastEv = 0, nil, nil
	for _, b := range in.chart.Setup {
		in.exec(b)
	}
	root := in.chart.Root
	in.entered[root.index] = true
	in.exec(root.Init)
	return true
}

// StartAt starts the instance in the configuration that a transition
// from the document to targets enters (the targets, their ancestors, and
// the default entry of what they leave open) instead of the initial one,
// with the history states' records given: a run carried over from
// another instance of a chart like this one (a reload that keeps its
// state). The runtime's OnEnter sees every state entered; which of them
// were active before is the runtime's to know. With no targets it is
// Start.
func (in *Instance) StartAt(targets []*State, history map[*State][]*State) {
	if len(targets) == 0 {
		in.Start()
		return
	}
	if !in.setUp() {
		return
	}
	root := in.chart.Root
	for h, states := range history {
		if in.history == nil {
			in.history = map[*State][]*State{}
		}
		in.history[h] = append([]*State(nil), states...)
	}
	in.enterStates([]*Transition{in.chart.Transition(root, targets...)})
	in.settle()
}

// History is what each history state recorded (read only).
func (in *Instance) History() map[*State][]*State { return in.history }

// Handle processes one external event: a macrostep. It does nothing once
// the instance has ended. (Keeping a cancelled invocation's later events
// out is the runtime's work: it knows which child sent them.)
func (in *Instance) Handle(ev *Event) {
	if !in.running {
		return
	}
	in.steps, in.lastT, in.lastEv = 0, nil, ev
	if in.opts.OnEvent != nil {
		in.opts.OnEvent(ev)
	}
	for _, s := range in.config {
		if len(in.invoked) == 0 {
			break // no invocation: nothing to finalize or forward
		}
		for _, iv := range in.invoked[s] {
			if iv.id == ev.InvokeID {
				in.exec(iv.inv.Finalize)
			}
			if iv.inv.Autoforward && iv.inv.Forward != nil && !isDoneInvoke(ev) {
				iv.inv.Forward(in, iv.id, ev)
			}
		}
	}
	if ev.InvokeID != "" && isDoneInvoke(ev) {
		for s := range in.invoked {
			in.dropInvocation(s, ev.InvokeID)
		}
	}
	if ts := in.selectTransitions(ev); len(ts) > 0 {
		in.microstep(ts)
	}
	in.settle()
}

func isDoneInvoke(ev *Event) bool {
	return len(ev.Name) > len("done.invoke.") && ev.Name[:len("done.invoke.")] == "done.invoke."
}

// Take runs a transition the front end selected itself (see
// Chart.Transition), as a macrostep: its microstep from the current
// configuration, then eventless transitions and raised events until the
// configuration is stable. It does nothing once the instance has ended.
func (in *Instance) Take(t *Transition) {
	if !in.running {
		return
	}
	in.steps, in.lastT, in.lastEv = 0, t, nil
	if in.flatFrom(t) {
		in.flatStep(t)
	} else {
		in.one[0] = t
		in.microstep(in.one[:])
		in.one[0] = nil
	}
	if !in.running || in.chart.eventless || len(in.internal) > 0 || in.toStart > 0 {
		in.settle()
	}
}

// StepBare takes t if it is a flat step between two states with no
// content of their own (every SEATML state) that leaves nothing for the
// engine to settle, and returns the state left and the state entered;
// the hooks are not told: the caller does their work itself, in order
// (the exit, then the entry). It reports false, doing nothing, for any
// other transition: Take it.
func (in *Instance) StepBare(t *Transition) (from, to *State, ok bool) {
	if !in.running || !in.flatFrom(t) || in.chart.eventless || len(in.internal) > 0 || in.toStart > 0 {
		return nil, nil, false
	}
	from, to = in.config[0], t.Targets[0]
	if !from.bare || !to.bare || len(t.Actions) > 0 || in.opts.OnTransition != nil || !in.entered[to.index] {
		return nil, nil, false
	}
	in.active[from.index] = false
	in.config[0] = to
	in.active[to.index] = true
	return from, to, true
}

// flatFrom reports whether t, taken now, is a flat step: t is flat and
// the configuration one top-level state.
func (in *Instance) flatFrom(t *Transition) bool {
	return t.flat && len(in.config) == 1 && in.config[0].Parent == in.chart.Root
}

// HasInternal reports whether the internal queue holds an event.
func (in *Instance) HasInternal() bool { return len(in.internal) > 0 }

// InternalLen returns how many events wait on the internal queue.
func (in *Instance) InternalLen() int { return len(in.internal) }

// NextInternal takes the next event from the internal queue, or returns
// nil: for a front end with Options.KeepInternal.
func (in *Instance) NextInternal() *Event {
	if len(in.internal) == 0 {
		return nil
	}
	ev := in.internal[0]
	in.internal[0] = nil
	in.internal = in.internal[1:]
	return ev
}

// Settle processes the events raised between macrosteps (an error a
// delayed send met when it fired) and the eventless transitions they
// enable, as the end of a macrostep would.
func (in *Instance) Settle() {
	if in.running && len(in.internal) > 0 {
		in.steps, in.lastT, in.lastEv = 0, nil, nil
		in.settle()
	}
}

// Cancel ends the instance as if it were cancelled: its active states are
// exited, and OnDone is told of no final state.
func (in *Instance) Cancel() {
	if in.running {
		in.running = false
		in.exitInterpreter()
	}
}

// settle runs microsteps until the configuration is stable (no eventless
// transition enabled, the internal queue empty), starting invocations,
// and ends the instance when it reached a top-level final state.
func (in *Instance) settle() {
	if in.running && !in.chart.eventless && (len(in.internal) == 0 || in.opts.KeepInternal) && in.toStart == 0 {
		return // nothing can be enabled: no eventless transition, no event
	}
	for in.running {
		for in.running {
			ts := in.selectTransitions(nil)
			if len(ts) == 0 {
				if len(in.internal) == 0 || in.opts.KeepInternal {
					break
				}
				ev := in.internal[0]
				in.internal[0] = nil
				in.internal = in.internal[1:]
				if in.opts.OnEvent != nil {
					in.opts.OnEvent(ev)
				}
				ts = in.selectTransitions(ev)
				if len(ts) > 0 {
					in.lastEv = ev
				}
			} else {
				in.lastEv = nil
			}
			if len(ts) > 0 {
				in.microstep(ts)
			}
			err := error(nil)
			if in.steps++; in.steps > maxMicrosteps {
				err = ErrRunaway
			} else if in.opts.Limit != nil {
				err = in.opts.Limit()
			}
			if err != nil {
				in.stopRunaway(err)
			}
		}
		if !in.running {
			break
		}
		for _, s := range in.chart.States {
			if in.toStart == 0 {
				break
			}
			if !in.toInvok[s.index] {
				continue
			}
			in.toInvok[s.index] = false
			in.toStart--
			for _, inv := range s.Invokes {
				in.invoke(s, inv)
			}
		}
		if len(in.internal) == 0 || in.opts.KeepInternal {
			break
		}
	}
	if !in.running {
		in.exitInterpreter()
	}
}

// stopRunaway stops a macrostep that did not settle, raising err in a
// *RunawayError that says where it was.
func (in *Instance) stopRunaway(err error) {
	in.internal = in.internal[:0]
	re := &RunawayError{Err: err, Steps: in.steps, Transition: in.lastT}
	if in.lastT != nil {
		re.Event = in.lastEv
	}
	for _, s := range in.config {
		if s.Atomic() {
			re.State = s
			break
		}
	}
	in.RaiseError(re)
	in.running = false
}

func (in *Instance) invoke(s *State, inv *Invoke) {
	id := inv.ID
	if id == "" {
		in.nextID++
		id = s.ID + "." + strconv.Itoa(in.nextID)
	}
	if inv.Start == nil {
		return
	}
	if in.invoked == nil {
		in.invoked = map[*State][]invocation{}
	}
	in.invoked[s] = append(in.invoked[s], invocation{inv, id})
	if err := inv.Start(in, id); err != nil {
		in.dropInvocation(s, id)
		in.RaiseError(err)
	}
}

func (in *Instance) dropInvocation(s *State, id string) {
	l := in.invoked[s]
	for i, iv := range l {
		if iv.id == id {
			in.invoked[s] = append(l[:i:i], l[i+1:]...)
			return
		}
	}
}

func (in *Instance) exitInterpreter() {
	var data any // the final state's done data
	for i := len(in.config) - 1; i >= 0; i-- {
		s := in.config[i]
		in.exit(s)
		if s.Kind == Final && s.Parent == in.chart.Root && in.final == nil {
			in.final = s
			data = in.evalDoneData(s)
		}
	}
	in.config = in.config[:0]
	if in.opts.OnDone != nil {
		in.opts.OnDone(in.final, data)
	}
}

// exit exits s: its OnExit content, its invocations cancelled, the
// runtime told. The caller takes it out of the configuration list.
func (in *Instance) exit(s *State) {
	for _, b := range s.OnExit {
		in.exec(b)
	}
	in.cancelInvokes(s)
	in.active[s.index] = false
	if in.opts.OnExit != nil {
		in.opts.OnExit(in, s)
	}
}

func (in *Instance) cancelInvokes(s *State) {
	if len(s.Invokes) == 0 {
		return // only a state with invocations has any running
	}
	for _, iv := range in.invoked[s] {
		if iv.inv.Cancel != nil {
			iv.inv.Cancel(in, iv.id)
		}
	}
	delete(in.invoked, s)
}

func (in *Instance) exec(b Block) {
	for _, a := range b {
		if err := a(in); err != nil {
			in.RaiseError(err)
			return
		}
	}
}

func (in *Instance) evalDoneData(s *State) any {
	if s.DoneData == nil {
		return nil
	}
	d, err := s.DoneData(in)
	if err != nil {
		in.RaiseError(err)
		return nil
	}
	return d
}

func (in *Instance) condition(t *Transition) bool {
	if t.Cond == nil {
		return true
	}
	ok, err := t.Cond(in)
	if err != nil {
		in.RaiseError(err)
		return false
	}
	return ok
}

func (t *Transition) takes(ev *Event) bool {
	if t.Match != nil {
		return t.Match(ev)
	}
	for _, d := range t.Events {
		if Matches(d, ev.Name) {
			return true
		}
	}
	return false
}

// atomicStates returns the active atomic states in document order.
func (in *Instance) atomicStates() []*State {
	in.atomics = in.atomics[:0]
	for _, s := range in.config {
		if s.Atomic() {
			in.atomics = append(in.atomics, s)
		}
	}
	return in.atomics
}

// selectTransitions selects, for each active atomic state in document
// order, the first transition of it or its nearest ancestor that takes ev
// (eventless ones when ev is nil) and whose condition holds; then removes
// conflicts.
func (in *Instance) selectTransitions(ev *Event) []*Transition {
	in.enabled = in.enabled[:0]
	for _, s := range in.atomicStates() {
	search:
		for a := s; a != nil; a = a.Parent {
			for _, t := range a.Transitions {
				if t.Eventless() == (ev == nil) && (ev == nil || t.takes(ev)) && in.condition(t) {
					in.enabled = appendUnique(in.enabled, t)
					break search
				}
			}
		}
	}
	return in.removeConflicts(in.enabled)
}

func appendUnique(l []*Transition, t *Transition) []*Transition {
	for _, x := range l {
		if x == t {
			return l
		}
	}
	return append(l, t)
}

// removeConflicts keeps, of transitions whose exit sets intersect, the one
// whose source is deeper, else the first in document order of atomic
// states.
func (in *Instance) removeConflicts(ts []*Transition) []*Transition {
	if len(ts) < 2 {
		return ts
	}
	kept := in.kept[:0]
	for _, t1 := range ts {
		preempted := false
		for _, t2 := range kept {
			if in.exitSetsIntersect(t1, t2) && !t1.Source.Descends(t2.Source) {
				preempted = true
				break
			}
		}
		if preempted {
			continue
		}
		// t1 replaces the transitions it conflicts with: their sources
		// are its ancestors.
		n := 0
		for _, t2 := range kept {
			if !in.exitSetsIntersect(t1, t2) {
				kept[n] = t2
				n++
			}
		}
		kept = append(kept[:n], t1)
	}
	in.kept = kept
	return kept
}

func (in *Instance) exitSetsIntersect(t1, t2 *Transition) bool {
	if len(t1.Targets) == 0 || len(t2.Targets) == 0 {
		return false
	}
	d1, d2 := in.domain(t1), in.domain(t2)
	for _, s := range in.config {
		if s.Descends(d1) && s.Descends(d2) {
			return true
		}
	}
	return false
}

// effectiveTargets are the transition's targets with history states
// replaced by what they remember, or by their defaults.
func (in *Instance) effectiveTargets(t *Transition, out []*State) []*State {
	for _, s := range t.Targets {
		if s.IsHistory() {
			if h, ok := in.history[s]; ok {
				for _, x := range h {
					out = appendState(out, x)
				}
			} else {
				out = in.effectiveTargets(s.Initial, out)
			}
		} else {
			out = appendState(out, s)
		}
	}
	return out
}

func appendState(l []*State, s *State) []*State {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

// domain is the transition's domain: the state whose descendants it exits
// and enters; nil for a targetless transition. It is computed once, when
// the chart is built, unless a target is a history state.
func (in *Instance) domain(t *Transition) *State {
	if !t.dynamic {
		return t.domain
	}
	in.targets = in.effectiveTargets(t, in.targets[:0])
	return staticDomain(t, in.targets)
}

// staticDomain is the domain of t for these effective targets.
func staticDomain(t *Transition, targets []*State) *State {
	if len(targets) == 0 {
		return nil
	}
	if t.Internal && t.Source.Compound() && allDescend(targets, t.Source) {
		return t.Source
	}
	return lcca(t.Source, targets)
}

// lcca is the least compound ancestor of head and the states in tail:
// the root when no other is, and for the root's own initial transition.
func lcca(head *State, tail []*State) *State {
	a := head.Parent
	if a == nil {
		return head
	}
	for ; a.Parent != nil; a = a.Parent {
		if a.Compound() && allDescend(tail, a) {
			return a
		}
	}
	return a
}

// allDescend reports whether every state of l is a proper descendant of a.
func allDescend(l []*State, a *State) bool {
	for _, s := range l {
		if !s.Descends(a) {
			return false
		}
	}
	return true
}

func (in *Instance) microstep(ts []*Transition) {
	in.lastT = ts[0]
	if len(ts) == 1 && in.flatFrom(ts[0]) {
		in.flatStep(ts[0])
		return
	}
	in.exitStates(ts)
	for _, t := range ts {
		if in.opts.OnTransition != nil {
			in.opts.OnTransition(t)
		}
		in.exec(t.Actions)
	}
	in.enterStates(ts)
}

func (in *Instance) exitStates(ts []*Transition) {
	any := false
	for _, t := range ts {
		if len(t.Targets) == 0 {
			continue
		}
		d := in.domain(t)
		for _, s := range in.config {
			if s.Descends(d) {
				in.toExit[s.index] = true
				any = true
			}
		}
	}
	if !any {
		return
	}
	// Exit order: reverse document order.
	exiting := in.exiting[:0]
	for i := len(in.config) - 1; i >= 0; i-- {
		s := in.config[i]
		if in.toExit[s.index] {
			in.toExit[s.index] = false
			if in.toInvok[s.index] {
				in.toInvok[s.index] = false
				in.toStart--
			}
			exiting = append(exiting, s)
		}
	}
	for _, s := range exiting {
		for _, h := range s.history {
			var rec []*State
			for _, s0 := range in.config {
				if h.Kind == DeepHistory && s0.Atomic() && s0.Descends(s) || h.Kind == ShallowHistory && s0.Parent == s {
					rec = append(rec, s0)
				}
			}
			if in.history == nil {
				in.history = map[*State][]*State{}
			}
			in.history[h] = rec
		}
	}
	for _, s := range exiting {
		in.exit(s)
	}
	in.exiting = exiting[:0]
	n := 0
	for _, s := range in.config {
		if in.active[s.index] {
			in.config[n] = s
			n++
		}
	}
	clear(in.config[n:])
	in.config = in.config[:n]
}

// flatStep is the microstep of a flat transition from a configuration of
// one top-level atomic state: what exitStates and enterStates would do,
// without their sets (an atomic state has no history to record and no
// descendants to enter).
func (in *Instance) flatStep(t *Transition) {
	from, to := in.config[0], t.Targets[0]
	if in.toInvok[from.index] {
		in.toInvok[from.index] = false
		in.toStart--
	}
	// exit(from), written out: a call less on every flat step.
	for _, b := range from.OnExit {
		in.exec(b)
	}
	if len(from.Invokes) > 0 {
		in.cancelInvokes(from)
	}
	in.active[from.index] = false
	if in.opts.OnExit != nil {
		in.opts.OnExit(in, from)
	}
	in.config[0] = nil
	in.config = in.config[:0]
	if in.opts.OnTransition != nil {
		in.opts.OnTransition(t)
	}
	if len(t.Actions) > 0 {
		in.exec(t.Actions)
	}
	in.enterFlat(to)
}

// enterFlat enters a top-level atomic state into an empty configuration.
func (in *Instance) enterFlat(to *State) {
	in.active[to.index] = true
	if len(to.Invokes) > 0 && !in.toInvok[to.index] {
		in.toInvok[to.index] = true
		in.toStart++
	}
	in.config = append(in.config, to)
	if !in.entered[to.index] {
		in.entered[to.index] = true
		in.exec(to.Init)
	}
	if in.opts.OnEnter != nil {
		in.opts.OnEnter(in, to)
	}
	for _, b := range to.OnEntry {
		in.exec(b)
	}
	if to.Kind == Final {
		in.running = false // a top-level final state
	}
}

// insertConfig adds s to the configuration list, in document order.
func (in *Instance) insertConfig(s *State) {
	i := len(in.config)
	for i > 0 && in.config[i-1].index > s.index {
		i--
	}
	in.config = append(in.config, nil)
	copy(in.config[i+1:], in.config[i:])
	in.config[i] = s
}

func (in *Instance) enterStates(ts []*Transition) {
	clear(in.defHist) // Appendix D: defaultHistoryContent is per call
	for _, t := range ts {
		for _, s := range t.Targets {
			in.addDescendants(s)
		}
		d := in.domain(t)
		eff := t.Targets
		if t.dynamic {
			in.eff = in.effectiveTargets(t, in.eff[:0])
			eff = in.eff
		}
		for _, s := range eff {
			in.addAncestors(s, d)
		}
	}
	// Entry order: document order (the list is short: insertion sort).
	entering := in.enterList
	for i := 1; i < len(entering); i++ {
		for j := i; j > 0 && entering[j-1].index > entering[j].index; j-- {
			entering[j-1], entering[j] = entering[j], entering[j-1]
		}
	}
	for _, s := range entering {
		in.toEnter[s.index] = false
	}
	defer func() { clear(entering); in.enterList = entering[:0] }()
	for _, s := range entering {
		in.active[s.index] = true
		if len(s.Invokes) > 0 && !in.toInvok[s.index] {
			in.toInvok[s.index] = true
			in.toStart++
		}
		in.insertConfig(s)
		if !in.entered[s.index] {
			in.entered[s.index] = true
			in.exec(s.Init)
		}
		if in.opts.OnEnter != nil {
			in.opts.OnEnter(in, s)
		}
		for _, b := range s.OnEntry {
			in.exec(b)
		}
		if in.defEntry[s.index] {
			in.defEntry[s.index] = false
			if s.Initial != nil {
				in.exec(s.Initial.Actions)
			}
		}
		if b, ok := in.defHist[s]; ok {
			delete(in.defHist, s)
			in.exec(b)
		}
		if s.Kind != Final {
			continue
		}
		parent := s.Parent
		if parent == in.chart.Root {
			in.running = false
			continue
		}
		in.Raise(&Event{Name: "done.state." + parent.ID, Type: Internal, Data: in.evalDoneData(s)})
		if gp := parent.Parent; gp != nil && gp.Kind == Parallel {
			all := true
			for _, c := range gp.kids {
				if !in.inFinal(c) {
					all = false
					break
				}
			}
			if all {
				in.Raise(&Event{Name: "done.state." + gp.ID, Type: Internal})
			}
		}
	}
}

// inFinal reports whether s is in a final configuration: a compound state
// whose active child is final, or a parallel state whose regions all are.
func (in *Instance) inFinal(s *State) bool {
	if s.Compound() {
		for _, c := range s.kids {
			if c.Kind == Final && in.active[c.index] {
				return true
			}
		}
		return false
	}
	if s.Kind == Parallel {
		for _, c := range s.kids {
			if !in.inFinal(c) {
				return false
			}
		}
		return true
	}
	return false
}

func (in *Instance) addDescendants(s *State) {
	if s.IsHistory() {
		if h, ok := in.history[s]; ok {
			for _, x := range h {
				in.addDescendants(x)
			}
			for _, x := range h {
				in.addAncestors(x, s.Parent)
			}
			return
		}
		if in.defHist == nil {
			in.defHist = map[*State]Block{}
		}
		in.defHist[s.Parent] = s.Initial.Actions
		for _, x := range s.Initial.Targets {
			in.addDescendants(x)
		}
		for _, x := range s.Initial.Targets {
			in.addAncestors(x, s.Parent)
		}
		return
	}
	in.markEntry(s)
	if s.Compound() {
		in.defEntry[s.index] = true
		for _, x := range s.Initial.Targets {
			in.addDescendants(x)
		}
		for _, x := range s.Initial.Targets {
			in.addAncestors(x, s)
		}
	} else if s.Kind == Parallel {
		in.addRegions(s)
	}
}

// addRegions adds the regions of a parallel state that have no state to
// enter yet.
func (in *Instance) addRegions(p *State) {
	for _, c := range p.kids {
		if !in.entering(c) {
			in.addDescendants(c)
		}
	}
}

// entering reports whether some descendant of c is to be entered.
func (in *Instance) entering(c *State) bool {
	for _, s := range in.chart.States[c.index+1:] {
		if !s.Descends(c) {
			break
		}
		if in.toEnter[s.index] {
			return true
		}
	}
	return false
}

// markEntry adds s to the states to enter.
func (in *Instance) markEntry(s *State) {
	if !in.toEnter[s.index] {
		in.toEnter[s.index] = true
		in.enterList = append(in.enterList, s)
	}
}

func (in *Instance) addAncestors(s, upTo *State) {
	for a := s.Parent; a != nil && a != upTo; a = a.Parent {
		in.markEntry(a)
		if a.Kind == Parallel {
			in.addRegions(a)
		}
	}
}

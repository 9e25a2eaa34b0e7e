// Package statechart is seat's statechart engine: the W3C SCXML
// interpretation algorithm (SCXML 1.0, Appendix D) over a tree of states
// built by a front end. It knows nothing of XML, Lua or adaptors: SEATML
// and SCXML documents compile onto a Chart, executable content and
// conditions are Go functions the front end supplies, and the runtime
// around an Instance feeds it external events, keeps its timers and
// starts the children its invocations ask for.
package statechart

import (
	"fmt"
	"strings"
)

// Kind is what a state is.
type Kind uint8

const (
	// Basic is a <state>: atomic without child states, compound with them.
	Basic Kind = iota
	Parallel
	Final
	ShallowHistory
	DeepHistory
)

// Action is one piece of executable content. An error stops the block it
// is in and is raised as an internal event: error.execution, or the name
// an *Error carries.
type Action func(in *Instance) error

// Block is executable content run as one unit: an <onentry>, an <onexit>,
// a transition's content, a <finalize>.
type Block []Action

// Error is an error with the name of the event it raises.
type Error struct {
	Event  string // "error.execution" when empty
	SendID string // the <send> that failed, if any
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// State is a node of the chart: a <state>, <parallel>, <final> or
// <history>, or the chart's root (the <scxml> element).
type State struct {
	ID       string
	Kind     Kind
	Parent   *State
	Children []*State // in document order, history states included
	// Initial is a compound state's initial transition; nil means its
	// first child state. A history state's default transition is Initial.
	Initial     *Transition
	Transitions []*Transition // in document order
	OnEntry     []Block
	OnExit      []Block
	Invokes     []*Invoke
	// Init runs on the state's first entry, before its OnEntry: a front
	// end with late data binding initializes the state's data here.
	Init Block
	// DoneData, for a final state, computes the data of the done event.
	// An error raises error.execution and the event has no data.
	DoneData func(in *Instance) (any, error)
	// Ext is the front end's own: SEATML's state, a source position.
	Ext any

	index   int      // document order
	kids    []*State // child states without history states
	history []*State
	// bare: no content, invocation or first-entry block, and not final:
	// entering or exiting it runs only the OnEnter/OnExit hooks (every
	// SEATML state). Build computes it: change a state before Build.
	bare bool
}

// Atomic reports whether the state has no child states.
func (s *State) Atomic() bool { return s.Kind != Parallel && len(s.kids) == 0 && !s.IsHistory() }

// Compound reports whether s is a <state> with child states (or the root).
func (s *State) Compound() bool { return s.Kind == Basic && len(s.kids) > 0 }

// IsHistory reports whether s is a history pseudo-state.
func (s *State) IsHistory() bool { return s.Kind.IsHistory() }

// IsHistory reports whether the kind is a history pseudo-state's.
func (k Kind) IsHistory() bool { return k == ShallowHistory || k == DeepHistory }

// Descends reports whether s is a proper descendant of a.
func (s *State) Descends(a *State) bool {
	for p := s.Parent; p != nil; p = p.Parent {
		if p == a {
			return true
		}
	}
	return false
}

// Transition is a <transition>, an <initial>'s transition or a history
// state's default.
type Transition struct {
	Source *State
	// Events are the event descriptors; none makes the transition
	// eventless (unless Match is set).
	Events []string
	// Match, if set, decides which events the transition takes instead of
	// Events (SEATML's keys).
	Match func(ev *Event) bool
	// Cond, if set, must hold. An error is raised as error.execution and
	// the transition is not taken.
	Cond     func(in *Instance) (bool, error)
	Targets  []*State
	Internal bool
	Actions  Block
	Ext      any

	// domain is the transition's domain when it does not depend on
	// history (no target is a history state); dynamic says it does.
	domain  *State
	dynamic bool
	// flat: one atomic target, a child of the root, and the root as the
	// domain: from a configuration of one top-level atomic state, the
	// microstep exits that state and enters the target (flat SEATML's
	// every transition), which the engine does without computing sets.
	flat bool
}

// Eventless reports whether the transition is taken without an event.
func (t *Transition) Eventless() bool { return len(t.Events) == 0 && t.Match == nil }

// Invoke is an <invoke>. The runtime does the work; the engine decides
// when.
type Invoke struct {
	// ID is the invoke id given in the document; empty: the engine makes
	// one, "stateid.N".
	ID          string
	Autoforward bool
	Finalize    Block
	// Start starts the invocation under the id. An error raises
	// error.execution (or the *Error's event) and nothing is started.
	Start func(in *Instance, id string) error
	// Cancel stops it when its state is exited.
	Cancel func(in *Instance, id string)
	// Forward sends it an external event (autoforward).
	Forward func(in *Instance, id string, ev *Event)
}

// Chart is a compiled statechart: immutable once built, shared by every
// Instance running it.
type Chart struct {
	Root   *State
	States []*State // in document order, Root first
	// Setup runs when an instance starts, before the initial states are
	// entered: data initialization and the top-level script. Each block
	// runs on its own: an error stops only the block it is in.
	Setup []Block
	ids   map[string]*State
	// eventless: some state has an eventless transition, which settling
	// must look for; a chart without one (flat SEATML) settles at once
	// when no event is raised.
	eventless bool
}

// Build numbers the states of the tree under root and checks it. The
// front end builds the tree (Parent links included) and calls Build once.
func Build(root *State) (*Chart, error) {
	c := &Chart{Root: root, ids: map[string]*State{}}
	if err := c.walk(root); err != nil {
		return nil, err
	}
	for _, s := range c.States {
		ts := s.Transitions
		if s.Initial != nil {
			ts = append(ts[:len(ts):len(ts)], s.Initial)
		}
		for _, t := range ts {
			if err := legal(t); err != nil {
				return nil, err
			}
			c.prepare(t)
		}
		for _, t := range s.Transitions {
			c.eventless = c.eventless || t.Eventless()
		}
	}
	for _, s := range c.States {
		if s.IsHistory() {
			if s.Parent == nil {
				return nil, &BuildError{s, fmt.Sprintf("history state %q has no parent state", s.ID)}
			}
			if s.Initial == nil {
				return nil, &BuildError{s, fmt.Sprintf("history state %q has no default transition", s.ID)}
			}
		}
	}
	return c, nil
}

// prepare computes what a transition's microsteps need: its domain when
// no target is a history state, and whether it is flat.
func (c *Chart) prepare(t *Transition) {
	for _, x := range t.Targets {
		if x.IsHistory() {
			t.dynamic = true
		}
	}
	if !t.dynamic && len(t.Targets) > 0 {
		t.domain = staticDomain(t, t.Targets)
	}
	t.flat = !t.dynamic && len(t.Targets) == 1 && t.Targets[0].Atomic() &&
		t.Targets[0].Parent == c.Root && t.domain == c.Root
}

// Transition returns a transition from source to the targets that is not
// in the chart: one a front end selects itself and runs with
// Instance.Take (SEATML's statetransition, whose rule picked it). source
// may be the root: the transition then leaves whatever is active.
func (c *Chart) Transition(source *State, targets ...*State) *Transition {
	t := &Transition{Source: source, Targets: targets}
	c.prepare(t)
	return t
}

func (c *Chart) walk(s *State) error {
	s.index = len(c.States)
	s.bare = len(s.OnEntry) == 0 && len(s.OnExit) == 0 && len(s.Invokes) == 0 && len(s.Init) == 0 && s.Kind != Final
	c.States = append(c.States, s)
	if s.ID != "" {
		if _, dup := c.ids[s.ID]; dup {
			return &BuildError{s, fmt.Sprintf("state id %q is used twice", s.ID)}
		}
		c.ids[s.ID] = s
	}
	s.kids, s.history = s.kids[:0], s.history[:0]
	if s.Initial != nil {
		s.Initial.Source = s
	}
	for _, t := range s.Transitions {
		t.Source = s
	}
	for _, ch := range s.Children {
		if ch.Parent != s {
			return &BuildError{ch, fmt.Sprintf("state %q: child %q has another parent", s.ID, ch.ID)}
		}
		if ch.IsHistory() {
			s.history = append(s.history, ch)
		} else {
			s.kids = append(s.kids, ch)
		}
		if err := c.walk(ch); err != nil {
			return err
		}
	}
	if s.Compound() && s.Initial == nil {
		s.Initial = &Transition{Source: s, Targets: []*State{s.kids[0]}}
	}
	if s.Initial != nil {
		owner := s
		if s.IsHistory() {
			owner = s.Parent
		}
		for _, t := range s.Initial.Targets {
			if !t.Descends(owner) {
				return &BuildError{s, fmt.Sprintf("state %q: initial state %q is not its descendant", s.ID, t.ID)}
			}
		}
	}
	return nil
}

// legal checks that a transition's targets can be active together: no
// target inside another, and any two in different regions of a parallel
// state (a history state stands for its parent).
func legal(t *Transition) error {
	at := func(x *State) *State {
		if x.IsHistory() {
			return x.Parent
		}
		return x
	}
	from := fmt.Sprintf("state %q", t.Source.ID)
	if t.Source.Parent == nil {
		from = "the initial transition"
	}
	for i, a := range t.Targets {
		for _, b := range t.Targets[i+1:] {
			x, y := at(a), at(b)
			switch {
			case x == y:
				return &BuildError{t.Source, fmt.Sprintf("%s: a transition's targets %q and %q enter the same state", from, a.ID, b.ID)}
			case x.Descends(y) || y.Descends(x):
				return &BuildError{t.Source, fmt.Sprintf("%s: a transition's targets %q and %q cannot be active together: one is inside the other", from, a.ID, b.ID)}
			}
			p := x.Parent
			for !y.Descends(p) {
				p = p.Parent
			}
			if p.Kind != Parallel {
				return &BuildError{t.Source, fmt.Sprintf("%s: a transition's targets %q and %q cannot be active together: both are inside %s, which is not a <parallel>", from, a.ID, b.ID, name(p))}
			}
		}
	}
	return nil
}

func name(s *State) string {
	if s.Parent == nil {
		return "the document"
	}
	return fmt.Sprintf("%q", s.ID)
}

// Reachable tells, by state, whether some run can enter it: from the
// initial configuration, through the targets that each entered state's
// transitions name (targets(s); targets(nil) are those open in every
// state, as SEATML's general rules), entering a target as a transition
// does: its ancestors, the other regions of the parallel states around
// it, and its own initial descendants. A history state resumes states
// entered before, so it adds only its default.
func (c *Chart) Reachable(targets func(s *State) []*State) []bool {
	seen := make([]bool, len(c.States)) // entered, at least as an ancestor
	down := make([]bool, len(c.States)) // entered with its initial descendants
	var queue []*State
	mark := func(s *State) {
		if !seen[s.index] {
			seen[s.index] = true
			queue = append(queue, s)
		}
	}
	var enter func(t, top *State)
	var enterDown func(s *State)
	enterDown = func(s *State) {
		if down[s.index] {
			return
		}
		down[s.index] = true
		mark(s)
		if s.Kind == Parallel {
			for _, k := range s.kids {
				enterDown(k)
			}
		} else if s.Initial != nil {
			owner := s // a history's default enters states of its parent
			if s.IsHistory() {
				owner = s.Parent
			}
			for _, t := range s.Initial.Targets {
				enter(t, owner)
			}
		}
	}
	// enter enters t and the states around it up to top (nil: all).
	enter = func(t, top *State) {
		for a, child := t.Parent, t; a != top; a, child = a.Parent, a {
			mark(a)
			if a.Kind == Parallel {
				for _, k := range a.kids {
					if k != child {
						enterDown(k)
					}
				}
			}
		}
		enterDown(t)
	}
	if c.Root.Initial != nil {
		for _, t := range c.Root.Initial.Targets {
			enter(t, nil)
		}
	}
	for _, t := range targets(nil) {
		enter(t, nil)
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, t := range targets(s) {
			enter(t, nil)
		}
	}
	return seen
}

// Index is the state's place in Chart.States (document order).
func (s *State) Index() int { return s.index }

// A BuildError is a chart that cannot run; State is the state at fault,
// which a front end places in its file.
type BuildError struct {
	State *State
	Msg   string
}

func (e *BuildError) Error() string { return e.Msg }

// State returns the state with the id, or nil.
func (c *Chart) State(id string) *State { return c.ids[id] }

// EventType is an event's _event.type.
type EventType uint8

const (
	External EventType = iota
	Internal
	Platform
)

func (t EventType) String() string {
	switch t {
	case Internal:
		return "internal"
	case Platform:
		return "platform"
	}
	return "external"
}

// Event is an SCXML event.
type Event struct {
	Name       string
	Type       EventType
	SendID     string
	Origin     string
	OriginType string
	InvokeID   string
	Data       any
}

// Matches reports whether an event name matches a descriptor: "*"
// matches every name, and a descriptor matches the names it is a prefix
// of at a dot boundary ("done.state" matches "done.state.s1"; a trailing
// ".*" or "." is ignored).
func Matches(descriptor, name string) bool {
	if descriptor == "*" {
		return true
	}
	d := strings.TrimSuffix(strings.TrimSuffix(descriptor, "*"), ".")
	if !strings.HasPrefix(name, d) {
		return false
	}
	return len(name) == len(d) || name[len(d)] == '.'
}

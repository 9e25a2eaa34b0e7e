package interpreter

// Entering and leaving states: the engine enters and exits the behavior's
// states; these hooks run their lists and keep the bookkeeping.

import (
	"strings"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/statechart"
)

// begin enters the initial state and carries out the transitions
// its onentry list asks for.
func (m *seatmlBehavior) begin() {
	if c := m.carried.Load(); c != nil && c.taken {
		beginFrom(m, c)
		return
	}
	m.starting = true
	m.sc.Start()
	m.starting = false
	if m.prog.Nested {
		m.syncCur()
	}
	m.settle(m.takePending())
	m.drainInternal()
}

// enteredHook and exitedHook are the engine's OnEnter and OnExit: plain
// functions, so that a session's instance costs no closures.
func enteredHook(in *statechart.Instance, n *statechart.State) { in.Ext.(*seatmlBehavior).entered(n) }
func exitedHook(in *statechart.Instance, n *statechart.State)  { in.Ext.(*seatmlBehavior).exited(n) }

// enteredFlatHook is OnEnter for a behavior without nesting, whose states
// are all top-level leaves (every flat SEATML file): the same as entered
// without the questions only nesting asks, on every flat transition.
func enteredFlatHook(in *statechart.Instance, n *statechart.State) {
	in.Ext.(*seatmlBehavior).enteredFlat(n.Ext.(*seatml.State))
}

// enteredFlat is entered for a flat behavior's state.
func (m *seatmlBehavior) enteredFlat(s *seatml.State) {
	from := m.cur
	m.cur = s
	if !m.starting {
		m.moves++
	}
	m.becameCurrent()
	if m.wants(kState) { // the log, the recorder, the monitor: no record made for none
		r := Record{Kind: RecState, State: s.Name, Peer: m.sessionPeer()}
		if !m.starting {
			r.From = from.Name
		}
		m.observe(r)
	}
	if len(s.OnEntry) > 0 && !m.kept[s] {
		m.request(m.runList(s.OnEntry, m.ctx(ctxLifecycle)))
	}
}

// becameCurrent is the bookkeeping of the state that has just become the
// current one: observers told, its timeout armed, its onexec ticks.
func (m *seatmlBehavior) becameCurrent() {
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

// entered is the engine telling the machine of a nested behavior that it
// entered a state: the machine's own bookkeeping, then the state's
// onentry list, whose transition request settle carries out once the
// engine's step is over. (A flat behavior's states go through
// enteredFlat.)
func (m *seatmlBehavior) entered(n *statechart.State) {
	s := n.Ext.(*seatml.State)
	m.cur = s // a state around the leaf to come is current while its onentry runs
	if !m.starting {
		m.moves++
	}
	m.leftLeaves.entering()
	m.active[n.Index()].Store(true)
	m.touched[n.Index()] = m.turn
	if s.Timeout != nil {
		m.startStateTimer(s) // its own countdown
	}
	if len(s.OnExec) > 0 {
		m.since[n.Index()] = m.clock.Now() // its first onexec waits a period from here
	}
	if n.Atomic() { // a leaf: its timers (observers are told once the step is over: syncCur; onexec counts from since)
		m.armTimeout()
		if m.starting {
			m.nextTick = m.clock.Now().Add(m.period())
		}
		m.publishTick()
	}
	if m.wants(kState) {
		m.observe(Record{Kind: RecState, State: s.Name, From: m.leftLeaves.from(seatmlName), Peer: m.sessionPeer()})
	}
	if len(s.OnEntry) > 0 && !m.kept[s] {
		prev := m.src
		m.src = s // its transition leaves from it, not from the event's state
		m.request(m.runList(s.OnEntry, m.ctx(ctxLifecycle)))
		m.src = prev
	}
	if n.Kind == statechart.Final && n.Parent == m.prog.Chart.Root && m.exitCode == nil {
		// A top-level final state ends the behavior, as a finished run.
		m.log.Info("finished", zap.String("final", s.Name))
		m.exit(0, "finished in the final state "+s.Name)
	}
}

// exited is the engine telling the machine that it exits a state: the
// state's onexit list runs, where no transition may be asked for.
func (m *seatmlBehavior) exited(n *statechart.State) {
	s := n.Ext.(*seatml.State)
	m.leftLeaves.exited(n)
	if m.active != nil {
		m.active[n.Index()].Store(false)
		m.touched[n.Index()] = m.turn
	}
	if s.Timeout != nil && m.prog.Nested {
		m.stopStateTimer(s)
	}
	if m.wants(kExit) {
		m.observe(Record{Kind: RecExit, State: s.Name, Peer: m.sessionPeer()})
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
// the active leaf of the state whose list asked for it (from: the
// region's, in a parallel state; general's leaves from the behavior
// itself), exiting and entering only the states between the two, as
// SCXML's transition from that leaf would. One region's transitions so
// leave the other regions alone, whatever list asks for them.
func (m *seatmlBehavior) transitionTo(from, target *seatml.State) *statechart.Transition {
	from = m.activeLeaf(from, target)
	key := [2]*seatml.State{from, target}
	t := m.trans[key]
	if t == nil {
		src := m.prog.Chart.Root // a general rule's: from the behavior itself
		if from != generalSource {
			src = from.Node
		}
		t = m.prog.Chart.Transition(src, target.Node)
		if m.trans == nil {
			m.trans = map[[2]*seatml.State]*statechart.Transition{}
		}
		m.trans[key] = t
	}
	return t
}

// activeLeaf returns the active leaf of state s that a transition to
// target leaves from: s itself if it is one, else, of the active leaves
// inside s, the one nearest the target (in the target's region, when s
// holds a parallel state: a <parallel>'s onentry passing to a state of
// its second region moves that region, not the whole parallel state),
// the first in document order among equals. General's stays general's;
// none, or a state no longer active, leaves from the current state.
func (m *seatmlBehavior) activeLeaf(s, target *seatml.State) *seatml.State {
	switch {
	case s == generalSource:
		return s
	case s == nil || !m.sc.Active(s.Node):
		return m.cur
	case s.Node.Atomic():
		return s
	}
	var best *statechart.State
	bestDepth := -1
	for _, n := range m.sc.Configuration() {
		if !n.Atomic() || !n.Descends(s.Node) {
			continue
		}
		if d := sharedDepth(n, target.Node); d > bestDepth {
			best, bestDepth = n, d
		}
	}
	if best == nil {
		return m.cur
	}
	return best.Ext.(*seatml.State)
}

// sharedDepth is the depth of the innermost state that a and b are both
// in (themselves included).
func sharedDepth(a, b *statechart.State) int {
	for p := a; p != nil; p = p.Parent {
		if p == b || b.Descends(p) {
			d := 0
			for q := p.Parent; q != nil; q = q.Parent {
				d++
			}
			return d
		}
	}
	return -1
}

// scopes returns the scopes whose lists apply now, inner first: the
// active state, the states around it, general; in a parallel state, each
// region's in document order. In a nested behavior, ownerBuf then holds
// the state of each (generalSource for general's).
func (m *seatmlBehavior) scopes() []*seatml.Scope {
	m.scopeBuf = m.scopeBuf[:0]
	if !m.prog.Nested {
		m.scopeBuf = append(m.scopeBuf, &m.cur.Scope)
	} else {
		m.ownerBuf = m.ownerBuf[:0]
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
				m.ownerBuf = append(m.ownerBuf, s)
			}
		}
		m.ownerBuf = append(m.ownerBuf, generalSource)
	}
	m.scopeBuf = append(m.scopeBuf, m.prog.General) // kept: no allocation next time
	return m.scopeBuf
}

// request keeps the transition an onentry list asks for. Of those asked
// for in one step, the last of each region wins (a state's onentry
// asking after its parent's, the child's), and each region's is carried
// out in turn: the regions of a parallel state entered together may each
// pass on.
func (m *seatmlBehavior) request(r request) {
	if !r.ok {
		return
	}
	for i, p := range m.pending {
		if sameRegion(p.from, r.from) {
			m.pending[i] = r
			return
		}
	}
	m.pending = append(m.pending, r)
}

// sameRegion reports whether two onentry lists' states are in one region:
// one is the other or around it (flat behaviors have no states here).
func sameRegion(a, b *seatml.State) bool {
	return a == nil || b == nil || a == b || a.Node.Descends(b.Node) || b.Node.Descends(a.Node)
}

// syncCur makes the current state the first active leaf once a step is
// over (entry left it at the last state entered) and tells the observers
// if it changed: once per step, not for each region's leaf on the way.
func (m *seatmlBehavior) syncCur() {
	for _, n := range m.sc.Configuration() {
		if n.Atomic() {
			m.cur = n.Ext.(*seatml.State)
			switch {
			case m.curState.Load() != m.cur:
				m.notifyState()
			case m.showsActive && m.configMoved():
				m.notifyActive() // another region moved: only the pages that show it
			}
			return
		}
	}
}

// touchedNow reports whether state s was entered or exited in the
// current turn (nested behaviors): moved by what is being handled, it
// does not handle it.
func (m *seatmlBehavior) touchedNow(s *seatml.State) bool {
	return m.touched[s.Node.Index()] == m.turn
}

func (m *seatmlBehavior) takePending() request {
	if len(m.pending) == 0 {
		return request{}
	}
	r := m.pending[0]
	m.pending = append(m.pending[:0], m.pending[1:]...)
	return r
}

// settle carries out a transition request and those that follow from
// onentry lists (§7).
func (m *seatmlBehavior) settle(req request) {
steps:
	for n := 0; req.ok && m.exitCode == nil; n++ {
		if n >= maxChain {
			m.log.Error("transition chain cut", zap.Int("limit", maxChain), zap.String("state", m.cur.Name))
			break steps
		}
		if f := req.from; m.prog.Nested && f != nil && f != generalSource && !m.sc.Active(f.Node) {
			req = m.takePending() // its region was left by the transition before it
			continue
		}
		var t *statechart.Transition
		switch req.fn {
		case seatml.TransPush:
			if len(m.stack) >= maxStack {
				m.log.Warn("state stack full; dropping its oldest entry", zap.Int("limit", maxStack))
				m.stack = m.stack[1:]
			}
			f := frame{leaf: m.cur}
			if m.prog.Nested { // the whole configuration: its active leaves
				f.leaves = m.appendLeaves(nil)
			}
			m.stack = append(m.stack, f)
		case seatml.TransPop:
			if len(m.stack) == 0 {
				m.log.Warn("pop on an empty state stack; staying", zap.String("state", m.cur.Name))
				break steps
			}
			f := m.stack[len(m.stack)-1]
			m.stack = m.stack[:len(m.stack)-1]
			t = f.leaf.Into
			if len(f.leaves) > 1 {
				targets := make([]*statechart.State, len(f.leaves))
				for i, s := range f.leaves {
					targets[i] = s.Node
				}
				t = m.prog.Chart.Transition(m.prog.Chart.Root, targets...)
			}
		}
		if t == nil {
			t = req.target.Into // flat: leave the state, enter the target
			if m.prog.Nested {
				t = m.transitionTo(req.from, req.target)
			}
		}
		if from, to, ok := m.stepBare(t); ok { // flat SEATML: the hooks' work, without calling through them
			if m.exitHooked {
				m.exited(from)
			}
			m.enteredFlat(to.Ext.(*seatml.State))
		} else {
			m.sc.Take(t) // exited, then entered, run the lists
		}
		if m.prog.Nested {
			m.syncCur()
		}
		req = m.takePending()
	}
	if len(m.pending) > 0 {
		m.pending = m.pending[:0] // what a cut chain or an exit left
	}
}

// stepBare is the engine's StepBare for a flat behavior (a nested one's
// states are entered through entered, not enteredFlat).
func (m *seatmlBehavior) stepBare(t *statechart.Transition) (from, to *statechart.State, ok bool) {
	if m.prog.Nested {
		return nil, nil, false
	}
	return m.sc.StepBare(t)
}

// notifyState tells the observers the current state; those that show
// every active state (adaptors.ActiveObserver) get those too.
func (m *env) notifyState() {
	m.curState.Store(m.cur)
	m.tellObservers(true)
}

// notifyActive tells the observers that show every active state the
// active states, the current state unchanged.
func (m *env) notifyActive() { m.tellObservers(false) }

// tellObservers gives the ActiveObservers the current and the active
// states, and the others the current state when it changed.
func (m *env) tellObservers(changed bool) {
	var active []string
	for _, o := range m.stateObs {
		if ao, ok := o.(adaptors.ActiveObserver); ok {
			if active == nil {
				active = m.activeNames()
			}
			ao.ActiveChanged(m.cur.Name, active)
		} else if changed {
			o.StateChanged(m.cur.Name)
		}
	}
}

// leftLeaves is what a nested behavior's "state" records give as from:
// the leaves the microstep exited before entering the state (one, or
// those of the regions it left, in exit order). A microstep exits before
// it enters, so the first exit after an entry begins a new list; the
// initial configuration, entered with no exit, has no from.
type leftLeaves struct {
	states  []*statechart.State
	entered bool // the list is the current microstep's, and entry has begun
}

// exited notes a state the engine exits.
func (l *leftLeaves) exited(n *statechart.State) {
	if l.entered {
		clear(l.states)
		l.states, l.entered = l.states[:0], false
	}
	if n.Atomic() {
		l.states = append(l.states, n)
	}
}

// entering notes that the microstep now enters states.
func (l *leftLeaves) entering() { l.entered = true }

// from is what a "state" record gives as from: the leaves left, by name
// (one, or those of the regions left, in exit order); "" when no leaf
// was left.
func (l *leftLeaves) from(name func(*statechart.State) string) string {
	switch len(l.states) {
	case 0:
		return ""
	case 1:
		return name(l.states[0])
	}
	names := make([]string, len(l.states))
	for i, n := range l.states {
		names[i] = name(n)
	}
	return strings.Join(names, ", ")
}

// seatmlName names a SEATML behavior's state.
func seatmlName(n *statechart.State) string { return n.Ext.(*seatml.State).Name }

// activeNames returns the names of the active states, outermost first in
// document order (a flat behavior's: the current state), and keeps the
// configuration they were read from in m.shown (configMoved). A new
// slice: observers keep it.
func (m *seatmlBehavior) activeNames() []string {
	if !m.prog.Nested {
		return []string{m.cur.Name}
	}
	cfg := m.sc.Configuration()
	m.shown = append(m.shown[:0], cfg...)
	names := make([]string, 0, len(cfg))
	for _, n := range cfg {
		if s, ok := n.Ext.(*seatml.State); ok {
			names = append(names, s.Name)
		}
	}
	return names
}

// configMoved reports whether the active states are other than those the
// observers that show them were last told of: a region other than the
// current state's moved.
func (m *env) configMoved() bool {
	cfg := m.sc.Configuration()
	if len(cfg) != len(m.shown) {
		return true
	}
	for i, n := range cfg {
		if m.shown[i] != n {
			return true
		}
	}
	return false
}

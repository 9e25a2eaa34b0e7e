package interpreter

// Timers: each active state's ontimeout and the onexec ticks, as timers
// of the machine's one list (timerlist.go).

import (
	"time"

	"github.com/seatml/seat/interpreter/seatml"
)

// seatmlTimers are a SEATML behavior's countdowns and ticks. Each is a
// timer of the machine's list; of those due at once, a state's own
// countdown fires first (inner states first, then in document order: the
// end tags' order), then general's, then the tick.
type seatmlTimers struct {
	// general is general's ontimeout (in a flat behavior, the state's,
	// else general's): the behavior's single deadline.
	general timer
	// visitTimeout is what seat.timeout set for this visit (nil: the
	// ontimeout's).
	visitTimeout *time.Duration
	enteredAt    time.Time // when the current state was entered
	// nextTick is when the next onexec tick is due; tick is armed for it
	// while the state, an active state or general has an onexec.
	nextTick time.Time
	tick     timer
	// states: in a nested behavior, each state's own countdown, by the
	// chart's state index; counting, those of the active states with an
	// ontimeout (armed unless seat.timeout disarmed one for this visit).
	states   []stateTimer
	counting []*stateTimer
}

// The ids of a SEATML behavior's timers other than the states' (whose
// id is the state's index in the chart).
const (
	timerGeneral = -1
	timerTick    = -2
)

// initTimers ranks the behavior's timers (seatmlTimers).
func (m *seatmlBehavior) initTimers() {
	n := len(m.prog.Chart.States)
	m.general = timer{id: timerGeneral, rank: n}
	m.tick = timer{id: timerTick, rank: n + 1}
	if !m.prog.Nested {
		return
	}
	m.states = make([]stateTimer, n)
	rank := 0
	var walk func(s *seatml.State)
	walk = func(s *seatml.State) { // postorder: the end tags' order
		for _, c := range s.Children {
			walk(c)
		}
		i := s.Node.Index()
		m.states[i] = stateTimer{s: s, t: timer{id: i, rank: rank}}
		rank++
	}
	for _, s := range m.prog.States {
		if s.Parent == nil {
			walk(s)
		}
	}
}

func (m *seatmlBehavior) period() time.Duration {
	return time.Duration(float64(time.Second) / m.prog.Rate)
}

// effectiveTimeout is the timeout the single deadline counts: a flat
// behavior's state's ontimeout, else general's; in a nested behavior,
// general's (its states count their own: states).
func (m *seatmlBehavior) effectiveTimeout() *seatml.Timeout {
	if m.prog.Nested {
		return m.prog.General.Timeout
	}
	return m.cur.InnerTimeout
}

func (m *seatmlBehavior) timeoutAfter() (time.Duration, bool) {
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
// (entered); general's counts the silence of the whole behavior while no
// active state counts its own (or seat.timeout set it): it stops when
// one does and starts again when none does, not at every state's entry.
func (m *seatmlBehavior) armTimeout() {
	if !m.prog.Nested {
		m.visitTimeout = nil
		m.resetTimeout()
		return
	}
	if len(m.counting) > 0 && m.visitTimeout == nil {
		if m.general.armed() {
			m.disarm() // the states count their own
		}
		return
	}
	if !m.general.armed() {
		m.resetTimeout()
	}
}

// disarm clears the machine's single deadline.
func (m *seatmlBehavior) disarm() {
	m.timers.stop(&m.general)
	if len(m.counting) > 0 {
		m.mirrorTimeout()
		return
	}
	m.clearTimerAt()
}

// mirrorTimeout publishes for Timers (the monitor's countdown) when the
// soonest timeout is due: the deadline, or in a nested behavior a
// state's own: the first timer of the list that is not the tick. A flat
// behavior's deadline is stored directly (disarm, resetTimeout), without
// this search.
func (m *seatmlBehavior) mirrorTimeout() {
	var n int64
	if t := m.timers.firstBut(timerTick); t != nil {
		n = t.at.UnixNano()
	}
	if m.timerAt.Load() != n {
		m.timerAt.Store(n)
	}
}

// resetTimeout restarts the countdowns a fired rule or handler restarts
// (docs/seatml.md §8, §14). In a flat behavior: the state's, else
// general's. In a nested behavior: those of the state whose list runs
// (src) and of the states around it; general's, which counts while no
// active state has an ontimeout (or seat.timeout set it), for any.
func (m *seatmlBehavior) resetTimeout() {
	if len(m.counting) > 0 {
		m.restartStateTimers(m.src)
		if m.visitTimeout == nil {
			return // general's does not count
		}
	}
	if d, ok := m.timeoutAfter(); ok {
		at := m.clock.Now().Add(d)
		m.timers.set(&m.general, at)
		if len(m.counting) > 0 {
			m.mirrorTimeout()
		} else {
			m.timerAt.Store(at.UnixNano())
		}
	} else if m.general.armed() || len(m.counting) > 0 {
		m.disarm() // (nothing is armed in a behavior without timeouts)
	}
}

// stateTimer is the countdown of a state with an ontimeout, in a nested
// behavior: counting while the state is active, t armed to fire unless
// seat.timeout disarmed it for this visit; after is what it counts (the
// ontimeout's, or seat.timeout's for this visit).
type stateTimer struct {
	s        *seatml.State
	t        timer
	after    time.Duration
	counting bool
}

// startStateTimer starts the countdown of state s, just entered.
func (m *seatmlBehavior) startStateTimer(s *seatml.State) {
	st := &m.states[s.Node.Index()]
	st.after, st.counting = s.Timeout.After, true
	m.timers.set(&st.t, m.clock.Now().Add(st.after))
	m.counting = append(m.counting, st)
	m.mirrorTimeout()
}

// stopStateTimer stops the countdown of state s, if it has one (it is
// being left).
func (m *seatmlBehavior) stopStateTimer(s *seatml.State) {
	st := &m.states[s.Node.Index()]
	if !st.counting {
		return
	}
	st.counting = false
	m.timers.stop(&st.t)
	for i, c := range m.counting {
		if c == st {
			m.counting = append(m.counting[:i], m.counting[i+1:]...)
			break
		}
	}
	m.mirrorTimeout()
}

// stateTimerOf returns the countdown of state s, or nil if it counts
// none.
func (m *seatmlBehavior) stateTimerOf(s *seatml.State) *stateTimer {
	if st := &m.states[s.Node.Index()]; st.counting {
		return st
	}
	return nil
}

// restartStateTimers restarts the countdowns of state s and of the
// states around it (general's list, or none: no state's).
func (m *seatmlBehavior) restartStateTimers(s *seatml.State) {
	if s == generalSource || s == nil {
		return
	}
	now, changed := m.clock.Now(), false
	for _, st := range m.counting {
		if st.after > 0 && (st.s == s || s.Node.Descends(st.s.Node)) {
			m.timers.set(&st.t, now.Add(st.after))
			changed = true
		}
	}
	if changed {
		m.mirrorTimeout()
	}
}

// setTimeout is seat.timeout: this visit's timeout, restarted (d <= 0:
// none). In a nested behavior it is the innermost state's with an
// ontimeout, from the state whose list runs outward; general's when
// none of them has one.
func (m *seatmlBehavior) setTimeout(d time.Duration) {
	if m.inExit {
		return // the state's visit is over: nothing to set
	}
	if len(m.counting) > 0 && m.src != generalSource {
		from := m.src
		if from == nil {
			from = m.cur // no list runs: the current state's
		}
		for s := from; s != nil; s = s.Parent {
			if st := m.stateTimerOf(s); st != nil {
				st.after = d
				if d > 0 {
					m.timers.set(&st.t, m.clock.Now().Add(d))
				} else {
					m.timers.stop(&st.t)
				}
				m.mirrorTimeout()
				return
			}
		}
	}
	m.visitTimeout = &d
	m.resetTimeout()
}

// publishTick arms the tick for the next onexec tick while the state, an
// active state or general has an onexec, and mirrors it for Timers. A
// store costs more than a load: nothing is stored when nothing changed
// (no onexec, the common case).
func (m *seatmlBehavior) publishTick() {
	var n int64
	if m.hasExec() {
		n = m.nextTick.UnixNano()
		if !m.tick.armed() || !m.tick.at.Equal(m.nextTick) {
			m.timers.set(&m.tick, m.nextTick)
		}
	} else if m.tick.armed() {
		m.timers.stop(&m.tick)
	}
	if m.tickAt.Load() != n {
		m.tickAt.Store(n)
	}
}

// clearTimerAt mirrors a disarmed timeout for Timers.
func (m *env) clearTimerAt() {
	if m.timerAt.Load() != 0 {
		m.timerAt.Store(0)
	}
}

func (m *seatmlBehavior) hasExec() bool {
	return len(m.prog.General.OnExec) > 0 || len(m.cur.OnExec) > 0 || (m.prog.Nested && m.configHasExec())
}

// configHasExec reports whether an active state has an onexec list.
func (m *seatmlBehavior) configHasExec() bool {
	for _, n := range m.sc.Configuration() {
		if len(n.Ext.(*seatml.State).OnExec) > 0 {
			return true
		}
	}
	return false
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

// sessionPeer is the peer of a session's machine (whose state a record
// of its state names); "" for other machines.
func (m *env) sessionPeer() string {
	if m.opts.session == nil {
		return ""
	}
	return m.opts.session.Peer()
}

// fire runs timer t: a state's countdown, general's (in a
// flat behavior, the state's) timeout, or the onexec tick; then the
// internal events they raised.
func (m *seatmlBehavior) fire(t *timer) {
	switch t.id {
	case timerGeneral:
		m.runTimeout()
	case timerTick:
		m.runTick()
	default:
		m.runStateTimeout(m.states[t.id].s)
	}
	if m.sc.HasInternal() {
		m.drainInternal()
	}
}

// runTimeout runs the deadline's ontimeout: general's, or in a flat
// behavior the state's; it starts again unless the list moved.
func (m *seatmlBehavior) runTimeout() {
	s, moves := m.cur, m.moves
	m.disarm()
	if m.wants(kTimer) {
		m.observe(Record{Kind: RecTimer, Timer: "timeout", State: s.Name})
	}
	if m.prog.Nested {
		m.src = generalSource // general's: its transition leaves from the behavior, it restarts only itself
	}
	if t := m.effectiveTimeout(); t != nil {
		m.settle(m.runList(t.Actions, m.ctx(ctxPeriodic)))
	}
	if m.moves == moves {
		m.resetTimeout()
	}
	m.src = nil
}

// runTick runs the onexec lists due at a tick, and sets the next tick.
func (m *seatmlBehavior) runTick() {
	if !m.hasExec() { // the states with an onexec were left since it was armed
		m.publishTick()
		return
	}
	now := m.clock.Now()
	m.nextTick = m.nextTick.Add(m.period())
	if !m.nextTick.After(now) {
		m.nextTick = now.Add(m.period()) // missed ticks are dropped
	}
	m.publishTick()
	if m.wants(kTimer) {
		m.observe(Record{Kind: RecTimer, Timer: "onexec", State: m.cur.Name})
	}
	// A state's onexec waits one period after entry (it could run at once
	// when the state was entered just before a tick); general's runs at
	// every tick, so that transitions never starve it.
	if !m.prog.Nested {
		if now.Sub(m.enteredAt) >= m.period() {
			m.settle(m.runList(m.cur.OnExec, m.ctx(ctxPeriodic)))
		}
	} else {
		// Every active state's, outer first, each a period after its own
		// entry; a state that this tick's onexec left or entered waits
		// (another region's go on).
		m.turn++
		m.execBuf = append(m.execBuf[:0], m.sc.Configuration()...)
		for _, n := range m.execBuf {
			if m.exitCode != nil {
				break
			}
			s := n.Ext.(*seatml.State)
			if len(s.OnExec) == 0 || m.touchedNow(s) || now.Sub(m.since[n.Index()]) < m.period() {
				continue
			}
			m.src = s
			m.settle(m.runList(s.OnExec, m.ctx(ctxPeriodic)))
		}
	}
	if m.exitCode == nil && len(m.prog.General.OnExec) > 0 {
		if m.prog.Nested {
			m.src = generalSource
		}
		m.settle(m.runList(m.prog.General.OnExec, m.ctx(ctxPeriodic)))
	}
	m.src = nil
}

// runStateTimeout runs a nested behavior's state's ontimeout; its
// countdown starts again unless the state was left.
func (m *seatmlBehavior) runStateTimeout(s *seatml.State) {
	if m.wants(kTimer) {
		m.observe(Record{Kind: RecTimer, Timer: "timeout", State: s.Name})
	}
	if st := m.stateTimerOf(s); st != nil {
		m.timers.set(&st.t, m.clock.Now().Add(st.after))
	}
	m.mirrorTimeout()
	prev := m.src
	m.src = s
	m.settle(m.runList(s.Timeout.Actions, m.ctx(ctxPeriodic)))
	m.src = prev
}

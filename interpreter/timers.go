package interpreter

// Timers: each active state's ontimeout and the onexec ticks, on the
// machine's clock.

import (
	"time"

	"github.com/seatml/seat/interpreter/seatml"
)

// seatmlTimers are a SEATML behavior's countdowns and ticks.
type seatmlTimers struct {
	deadline time.Time // general's (in a flat behavior, the state's) ontimeout; zero when disarmed
	// visitTimeout is what seat.timeout set for this visit (nil: the
	// ontimeout's).
	visitTimeout *time.Duration
	enteredAt    time.Time // when the current state was entered
	nextTick     time.Time
	// stateTimers: in a nested behavior, the countdown of each active
	// state with an ontimeout, in the order ties fire.
	stateTimers []stateTimer
}

func (m *seatmlBehavior) period() time.Duration {
	return time.Duration(float64(time.Second) / m.prog.Rate)
}

// effectiveTimeout is the timeout the single deadline counts: a flat
// behavior's state's ontimeout, else general's; in a nested behavior,
// general's (its states count their own: stateTimers).
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
	if len(m.stateTimers) > 0 && m.visitTimeout == nil {
		if !m.deadline.IsZero() {
			m.disarm() // the states count their own
		}
		return
	}
	if m.deadline.IsZero() {
		m.resetTimeout()
	}
}

// disarm clears the machine's single deadline.
func (m *seatmlBehavior) disarm() {
	m.deadline = time.Time{}
	if len(m.stateTimers) > 0 {
		m.mirrorTimeout()
		return
	}
	m.clearTimerAt()
}

// mirrorTimeout publishes for Timers (the monitor's countdown) when the
// soonest timeout is due: the deadline, or in a nested behavior a
// state's own. A flat behavior's deadline is stored directly (disarm,
// resetTimeout), without this search.
func (m *seatmlBehavior) mirrorTimeout() {
	at := m.deadline
	if _, d := m.nextStateTimeout(); !d.IsZero() && (at.IsZero() || d.Before(at)) {
		at = d
	}
	var n int64
	if !at.IsZero() {
		n = at.UnixNano()
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
	if len(m.stateTimers) > 0 {
		m.restartStateTimers(m.src)
		if m.visitTimeout == nil {
			return // general's does not count
		}
	}
	if d, ok := m.timeoutAfter(); ok {
		m.deadline = m.clock.Now().Add(d)
		if len(m.stateTimers) > 0 {
			m.mirrorTimeout()
		} else {
			m.timerAt.Store(m.deadline.UnixNano())
		}
	} else if !m.deadline.IsZero() || len(m.stateTimers) > 0 {
		m.disarm() // (nothing is armed in a behavior without timeouts)
	}
}

// stateTimer is the countdown of an active state with an ontimeout, in
// a nested behavior: due when it fires (zero: seat.timeout disarmed it
// for this visit), after what it counts (the ontimeout's, or seat.timeout's
// for this visit).
type stateTimer struct {
	s     *seatml.State
	due   time.Time
	after time.Duration
}

// firesBefore reports whether a's countdown fires before b's when both
// are due at once: a state inside another before it, else in document
// order (the end tags' order: regions first to last).
func firesBefore(a, b *seatml.State) bool {
	if a.Node.Descends(b.Node) {
		return true
	}
	if b.Node.Descends(a.Node) {
		return false
	}
	return a.Node.Index() < b.Node.Index()
}

// startStateTimer starts the countdown of state s, just entered.
func (m *seatmlBehavior) startStateTimer(s *seatml.State) {
	t := stateTimer{s: s, after: s.Timeout.After}
	t.due = m.clock.Now().Add(t.after)
	i := 0
	for i < len(m.stateTimers) && !firesBefore(s, m.stateTimers[i].s) {
		i++
	}
	m.stateTimers = append(m.stateTimers, stateTimer{})
	copy(m.stateTimers[i+1:], m.stateTimers[i:])
	m.stateTimers[i] = t
	m.mirrorTimeout()
}

// stopStateTimer stops the countdown of state s, if it has one (it is
// being left).
func (m *seatmlBehavior) stopStateTimer(s *seatml.State) {
	for i := range m.stateTimers {
		if m.stateTimers[i].s == s {
			m.stateTimers = append(m.stateTimers[:i], m.stateTimers[i+1:]...)
			m.mirrorTimeout()
			return
		}
	}
}

// stateTimerOf returns the countdown of state s, or nil.
func (m *seatmlBehavior) stateTimerOf(s *seatml.State) *stateTimer {
	for i := range m.stateTimers {
		if m.stateTimers[i].s == s {
			return &m.stateTimers[i]
		}
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
	for i := range m.stateTimers {
		t := &m.stateTimers[i]
		if t.after > 0 && (t.s == s || s.Node.Descends(t.s.Node)) {
			t.due, changed = now.Add(t.after), true
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
	if len(m.stateTimers) > 0 && m.src != generalSource {
		from := m.src
		if from == nil {
			from = m.cur // no list runs: the current state's
		}
		for s := from; s != nil; s = s.Parent {
			if t := m.stateTimerOf(s); t != nil {
				t.after, t.due = d, time.Time{}
				if d > 0 {
					t.due = m.clock.Now().Add(d)
				}
				m.mirrorTimeout()
				return
			}
		}
	}
	m.visitTimeout = &d
	m.resetTimeout()
}

// publishTick mirrors the next tick for Timers. A store costs more than
// a load: nothing is stored when nothing changed (no onexec, the common
// case).
func (m *seatmlBehavior) publishTick() {
	var n int64
	if m.hasExec() {
		n = m.nextTick.UnixNano()
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

// nextWake returns when the next timer is due: the timeout or, if the
// state or general has an onexec, the next tick.
func (m *seatmlBehavior) nextWake() (time.Time, bool) {
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
	return m.b.nextWake()
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
		due, ok := m.b.nextWake()
		if !ok || due.After(until) {
			break
		}
		if d := due.Sub(clock.Now()); d > 0 {
			clock.Advance(d)
		}
		m.b.fire(due)
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
func (m *env) sessionPeer() string {
	if m.opts.session == nil {
		return ""
	}
	return m.opts.session.Peer()
}

// fire runs the timer that is due at at: the timeout if its deadline
// has come (it wins a tie with a tick), else the onexec tick; then the
// internal events they raised.
func (m *seatmlBehavior) fire(at time.Time) {
	m.runTimerOnce(at)
	if m.sc.HasInternal() {
		m.drainInternal()
	}
}

func (m *seatmlBehavior) runTimerOnce(at time.Time) {
	if s, due := m.nextStateTimeout(); s != nil && !due.After(at) && (m.deadline.IsZero() || !due.After(m.deadline)) { // a state's wins a tie with general's
		m.runStateTimeout(s)
		return
	}
	if !m.deadline.IsZero() && !m.deadline.After(at) {
		s, moves := m.cur, m.moves
		m.disarm()
		if m.tracing() {
			m.trace("timeout:" + s.Name)
		}
		if m.watching() {
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

// nextStateTimeout returns the state whose own timeout is due first,
// among the active states of a nested behavior with an ontimeout, and
// when; of those due at once, the first in firing order.
func (m *seatmlBehavior) nextStateTimeout() (*seatml.State, time.Time) {
	var first *seatml.State
	var at time.Time
	for i := range m.stateTimers {
		t := &m.stateTimers[i]
		if !t.due.IsZero() && (first == nil || t.due.Before(at)) {
			first, at = t.s, t.due
		}
	}
	return first, at
}

// runStateTimeout runs a nested behavior's state's ontimeout; its
// countdown starts again unless the state was left.
func (m *seatmlBehavior) runStateTimeout(s *seatml.State) {
	if m.tracing() {
		m.trace("timeout:" + s.Name)
	}
	if m.watching() {
		m.observe(Record{Kind: RecTimer, Timer: "timeout", State: s.Name})
	}
	if t := m.stateTimerOf(s); t != nil {
		t.due = m.clock.Now().Add(t.after)
	}
	m.mirrorTimeout()
	prev := m.src
	m.src = s
	m.settle(m.runList(s.Timeout.Actions, m.ctx(ctxPeriodic)))
	m.src = prev
}

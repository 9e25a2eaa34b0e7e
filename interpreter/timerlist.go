package interpreter

import "time"

// timer is an entry of a machine's timer list: one of its behavior's
// countdowns, ticks or delayed events. The behavior keeps its timers in
// its own structs, so arming one allocates nothing; the host fires the
// first one due and hands it back to the behavior (behavior.fire), which
// tells them apart by id.
type timer struct {
	at time.Time
	// rank orders timers due at once: the lower first; seq, set when
	// the timer is armed, orders those of one rank (the first armed
	// first).
	rank int
	seq  uint64
	id   int
	ref  any // the behavior's thing the timer is for, if its id does not say
	pos  int // index in the list + 1; 0: not armed
	// yield: input that arrived by the time the timer is due goes first
	// (an SCXML session's next slice of its own work); else the timer
	// fires before input that arrived at its time or after.
	yield bool
}

// firesBefore reports whether t fires before input that arrived at at.
func (t *timer) firesBefore(at time.Time) bool {
	if t.yield {
		return at.After(t.at)
	}
	return !at.Before(t.at)
}

// armed reports whether t is in its list.
func (t *timer) armed() bool { return t.pos != 0 }

// before reports whether t fires before u.
func (t *timer) before(u *timer) bool {
	if !t.at.Equal(u.at) {
		return t.at.Before(u.at)
	}
	if t.rank != u.rank {
		return t.rank < u.rank
	}
	return t.seq < u.seq
}

// timerList is a machine's timers, in the order they fire: by time, then
// rank, then the order they were armed in. A behavior has a few (a
// countdown per active state with an ontimeout, a tick) or, in an SCXML
// document, up to scxml.MaxDelayed delayed events: a sorted slice.
type timerList struct {
	ts  []*timer
	seq uint64
}

// set arms t to fire at at, moving it if it was armed.
func (l *timerList) set(t *timer, at time.Time) {
	l.seq++
	t.at, t.seq = at, l.seq
	i := t.pos - 1
	if t.pos == 0 {
		l.ts = append(l.ts, t)
		i = len(l.ts) - 1
	}
	for i > 0 && t.before(l.ts[i-1]) {
		l.ts[i] = l.ts[i-1]
		l.ts[i].pos = i + 1
		i--
	}
	for i < len(l.ts)-1 && l.ts[i+1].before(t) {
		l.ts[i] = l.ts[i+1]
		l.ts[i].pos = i + 1
		i++
	}
	l.ts[i], t.pos = t, i+1
}

// stop disarms t.
func (l *timerList) stop(t *timer) {
	if t.pos == 0 {
		return
	}
	i := t.pos - 1
	copy(l.ts[i:], l.ts[i+1:])
	l.ts[len(l.ts)-1] = nil
	l.ts = l.ts[:len(l.ts)-1]
	for ; i < len(l.ts); i++ {
		l.ts[i].pos = i + 1
	}
	t.pos = 0
}

// first returns the timer that fires first, or nil.
func (l *timerList) first() *timer {
	if len(l.ts) == 0 {
		return nil
	}
	return l.ts[0]
}

// next returns when the first timer is due.
func (l *timerList) next() (time.Time, bool) {
	if len(l.ts) == 0 {
		return time.Time{}, false
	}
	return l.ts[0].at, true
}

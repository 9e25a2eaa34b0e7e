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
	if c := t.at.Compare(u.at); c != 0 {
		return c < 0
	}
	if t.rank != u.rank {
		return t.rank < u.rank
	}
	return t.seq < u.seq
}

// timerList is a machine's timers, in the order they fire: by time, then
// rank, then the order they were armed in. A behavior has a few (a
// countdown per active state with an ontimeout, a tick) or, in an SCXML
// document, up to scxml.MaxDelayed delayed events: a binary heap, so
// that arming, moving and stopping one costs O(log n), and the first is
// at its root.
type timerList struct {
	ts  []*timer
	seq uint64
	// yielding counts the armed timers that yield (work of the
	// behavior's own: runOwnWork).
	yielding int
}

// set arms t to fire at at, moving it if it was armed.
func (l *timerList) set(t *timer, at time.Time) {
	l.seq++
	t.at, t.seq = at, l.seq
	if t.pos == 0 {
		if t.yield {
			l.yielding++
		}
		l.ts = append(l.ts, t)
		t.pos = len(l.ts)
		l.up(len(l.ts) - 1)
		return
	}
	if i := t.pos - 1; !l.down(i) {
		l.up(i)
	}
}

// stop disarms t.
func (l *timerList) stop(t *timer) {
	if t.pos == 0 {
		return
	}
	if t.yield {
		l.yielding--
	}
	i, last := t.pos-1, len(l.ts)-1
	if i != last {
		l.swap(i, last)
	}
	l.ts[last] = nil
	l.ts = l.ts[:last]
	t.pos = 0
	if i != last && !l.down(i) {
		l.up(i)
	}
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

// firstBut returns the timer that fires first other than those with id
// skip (at most one: the heap's second is a child of its root).
func (l *timerList) firstBut(skip int) *timer {
	switch n := len(l.ts); {
	case n == 0:
		return nil
	case l.ts[0].id != skip:
		return l.ts[0]
	case n == 1:
		return nil
	case n == 2 || l.ts[1].before(l.ts[2]):
		return l.ts[1]
	}
	return l.ts[2]
}

func (l *timerList) swap(i, j int) {
	l.ts[i], l.ts[j] = l.ts[j], l.ts[i]
	l.ts[i].pos, l.ts[j].pos = i+1, j+1
}

// up moves the timer at i towards the root while it fires before its
// parent.
func (l *timerList) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !l.ts[i].before(l.ts[p]) {
			return
		}
		l.swap(i, p)
		i = p
	}
}

// down moves the timer at i away from the root while a child fires
// before it; it reports whether it moved.
func (l *timerList) down(i int) bool {
	start, n := i, len(l.ts)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && l.ts[r].before(l.ts[c]) {
			c = r
		}
		if !l.ts[c].before(l.ts[i]) {
			break
		}
		l.swap(i, c)
		i = c
	}
	return i > start
}

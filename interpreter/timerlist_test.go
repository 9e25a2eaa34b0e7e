package interpreter

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestTimerListKeepsFiringOrder arms, moves and stops timers at random
// and checks, after every step, that the list's first is the first of a
// sort of the armed timers by time, rank and arming order, that each
// knows its place, and, at the end, that taking the first again and again
// gives them all in that order.
func TestTimerListKeepsFiringOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := time.Unix(1000, 0)
	for round := range 200 {
		var l timerList
		ts := make([]timer, 1+r.IntN(40))
		for i := range ts {
			ts[i].id, ts[i].rank, ts[i].yield = i, r.IntN(3), r.IntN(4) == 0
		}
		armed := func() []*timer {
			var want []*timer
			for i := range ts {
				if ts[i].armed() {
					want = append(want, &ts[i])
				}
			}
			slices.SortFunc(want, func(a, b *timer) int {
				if a.before(b) {
					return -1
				}
				return 1
			})
			return want
		}
		for step := range 120 {
			tm := &ts[r.IntN(len(ts))]
			if r.IntN(4) == 0 {
				l.stop(tm)
			} else {
				l.set(tm, base.Add(time.Duration(r.IntN(5))*time.Second))
			}
			want := armed()
			if len(l.ts) != len(want) {
				t.Fatalf("round %d step %d: %d in the list, %d armed", round, step, len(l.ts), len(want))
			}
			for i, x := range l.ts {
				if x.pos != i+1 {
					t.Fatalf("round %d step %d: timer %d at %d says pos %d", round, step, x.id, i, x.pos)
				}
			}
			if f := l.first(); len(want) > 0 && f != want[0] || len(want) == 0 && f != nil {
				t.Fatalf("round %d step %d: first is not the earliest", round, step)
			}
			yielding := 0
			for _, x := range want {
				if x.yield {
					yielding++
				}
			}
			if l.yielding != yielding {
				t.Fatalf("round %d step %d: %d yielding counted, %d armed", round, step, l.yielding, yielding)
			}
		}
		want := armed()
		var got []*timer
		for f := l.first(); f != nil; f = l.first() {
			got = append(got, f)
			l.stop(f)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: taken in order %v, want %v", round, ids(got), ids(want))
		}
	}
}

// TestTimerListTiesFireInRankThenArmingOrder: of timers due at once, the
// lower rank first, then the one armed first; moving a timer arms it
// anew (it goes after those of its rank already waiting).
func TestTimerListTiesFireInRankThenArmingOrder(t *testing.T) {
	at := time.Unix(5, 0)
	order := func(l *timerList) []int {
		var ts []*timer
		for f := l.first(); f != nil; f = l.first() {
			ts = append(ts, f)
			l.stop(f)
		}
		for _, x := range ts {
			l.set(x, x.at) // back, in the order taken
		}
		return ids(ts)
	}
	var l timerList
	a, b, c, d := &timer{id: 1, rank: 1}, &timer{id: 2, rank: 1}, &timer{id: 3, rank: 0}, &timer{id: 4, rank: 1}
	l.set(a, at)
	l.set(b, at)
	l.set(c, at)
	l.set(d, at.Add(-time.Second))
	if got, want := order(&l), []int{4, 3, 1, 2}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	l.set(a, at) // armed again: after b
	if got, want := order(&l), []int{4, 3, 2, 1}; !slices.Equal(got, want) {
		t.Fatalf("after re-arming a: %v, want %v", got, want)
	}
	l.stop(d)
	l.stop(d) // stopping a stopped timer does nothing
	if got, want := order(&l), []int{3, 2, 1}; !slices.Equal(got, want) || d.armed() {
		t.Fatalf("after stopping d: %v, want %v (d armed %v)", got, want, d.armed())
	}
	if f := l.firstBut(3); f == nil || f.id != 2 {
		t.Errorf("first but 3: %v, want 2", f)
	}
}

func ids(ts []*timer) []int {
	out := make([]int, len(ts))
	for i, t := range ts {
		out[i] = t.id
	}
	return out
}

// TestTimerYieldsToInputOfItsTime: a timer fires before input that
// arrived at its time or later, unless it yields (an SCXML session's next
// slice), when input that arrived by its time goes first.
func TestTimerYieldsToInputOfItsTime(t *testing.T) {
	at := time.Unix(7, 0)
	for _, c := range []struct {
		yield bool
		input time.Time
		want  bool
	}{
		{false, at.Add(-1), false}, {false, at, true}, {false, at.Add(1), true},
		{true, at.Add(-1), false}, {true, at, false}, {true, at.Add(1), true},
	} {
		tm := &timer{at: at, yield: c.yield}
		if got := tm.firesBefore(c.input); got != c.want {
			t.Errorf("yield %v, input at %v: fires first %v, want %v", c.yield, c.input.Sub(at), got, c.want)
		}
	}
}

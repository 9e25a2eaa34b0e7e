package bench

import (
	"context"
	"testing"
	"time"

	"github.com/looplab/fsm"
	"github.com/qmuntal/stateless"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
)

// pingPong is the two-state ping-pong every implementation runs: the event
// "ping" moves a to b, and b back to a.
const pingPong = `<seatml><general name="pingpong"/>
<state name="a"><rule><key>ping</key><statetransition>b</statetransition></rule></state>
<state name="b"><rule><key>ping</key><statetransition>a</statetransition></rule></state>
</seatml>`

const pingPongLua = `<seatml><general name="pingpong"><script>count = 0</script></general>
<state name="a"><rule><key>ping</key><script>count = count + 1</script><statetransition>b</statetransition></rule></state>
<state name="b"><rule><key>ping</key><script>count = count + 1</script><statetransition>a</statetransition></rule></state>
</seatml>`

func seatPingPong(b *testing.B) {
	m := machine(b, pingPong)
	ev := adaptors.Event{Source: "chat", Text: "ping"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.Dispatch(ev)
	}
	if s := m.Machine().CurrentState(); s != "a" && s != "b" {
		b.Fatalf("state %q", s)
	}
}

// nestedPingPong is the ping-pong in one region of a parallel state,
// inside a state that counts its own silence, beside a region with a
// countdown of its own: the nested event path (a rule of a region's
// leaf, its transition within the region, the countdowns it restarts).
const nestedPingPong = `<seatml><general name="nested"/>
<state name="外"><ontimeout timeout="60"><log>silence</log></ontimeout>
  <parallel name="並行">
    <state name="甲">
      <state name="a"><rule><key>ping</key><statetransition>b</statetransition></rule></state>
      <state name="b"><rule><key>ping</key><statetransition>a</statetransition></rule></state>
    </state>
    <state name="乙"><ontimeout timeout="30"><log>乙</log></ontimeout></state>
  </parallel>
</state>
</seatml>`

// BenchmarkNestedPingPong is BenchmarkPingPong's seat in a nested
// behavior (nestedPingPong).
func BenchmarkNestedPingPong(b *testing.B) {
	m := machine(b, nestedPingPong)
	ev := adaptors.Event{Source: "chat", Text: "ping"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.Dispatch(ev)
	}
	if s := m.Machine().CurrentState(); s != "a" && s != "b" {
		b.Fatalf("state %q", s)
	}
}

func statelessPingPong(b *testing.B) {
	sm := stateless.NewStateMachine("a")
	sm.Configure("a").Permit("ping", "b")
	sm.Configure("b").Permit("ping", "a")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := sm.FireCtx(ctx, "ping"); err != nil {
			b.Fatal(err)
		}
	}
}

func fsmPingPong(b *testing.B) {
	f := fsm.NewFSM("a", fsm.Events{
		{Name: "ping", Src: []string{"a"}, Dst: "b"},
		{Name: "pong", Src: []string{"b"}, Dst: "a"},
	}, fsm.Callbacks{})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ev := "ping"
		if f.Current() == "b" {
			ev = "pong"
		}
		if err := f.Event(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPingPong is a keyed match plus a transition, no Lua, beside the
// same two-state machine in qmuntal/stateless and looplab/fsm.
func BenchmarkPingPong(b *testing.B) {
	b.Run("seat", seatPingPong)
	b.Run("stateless", statelessPingPong)
	b.Run("fsm", fsmPingPong)
}

// BenchmarkPingPongRatio times the three ping-pongs in one benchmark and
// reports seat's time per event as a ratio of each peer's, so every run
// shows it. (testing.Benchmark cannot be nested, so it times them itself.)
func BenchmarkPingPongRatio(b *testing.B) {
	seat := perEvent(b, func(n int) {
		m := machine(b, pingPong)
		ev := adaptors.Event{Source: "chat", Text: "ping"}
		for range n {
			m.Dispatch(ev)
		}
	})
	sl := perEvent(b, func(n int) {
		sm := stateless.NewStateMachine("a")
		sm.Configure("a").Permit("ping", "b")
		sm.Configure("b").Permit("ping", "a")
		ctx := context.Background()
		for range n {
			sm.FireCtx(ctx, "ping")
		}
	})
	fs := perEvent(b, func(n int) {
		f := fsm.NewFSM("a", fsm.Events{{Name: "ping", Src: []string{"a"}, Dst: "b"}, {Name: "pong", Src: []string{"b"}, Dst: "a"}}, fsm.Callbacks{})
		ctx := context.Background()
		for range n {
			ev := "ping"
			if f.Current() == "b" {
				ev = "pong"
			}
			f.Event(ctx, ev)
		}
	})
	for b.Loop() {
	}
	b.ReportMetric(seat, "seat-ns/event")
	b.ReportMetric(seat/sl, "seat/stateless")
	b.ReportMetric(seat/fs, "seat/fsm")
}

// perEvent runs fn with growing n until it takes 200 ms (once, with
// -short) and returns the time per event in ns.
func perEvent(b *testing.B, fn func(n int)) float64 {
	n := 1000
	for {
		start := time.Now()
		fn(n)
		d := time.Since(start)
		if d > 200*time.Millisecond || n >= 1<<26 || testing.Short() {
			return float64(d.Nanoseconds()) / float64(n)
		}
		n *= 4
	}
}

// BenchmarkPingPongLua is the same ping-pong with a small Lua action.
func BenchmarkPingPongLua(b *testing.B) {
	m := machine(b, pingPongLua)
	ev := adaptors.Event{Source: "chat", Text: "ping"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.Dispatch(ev)
	}
}

// scxmlPingPong is the ping-pong as an SCXML document: each line from
// chat is the event chat.line, which moves a to b and b back to a (the
// second with a Lua cond on the line's text).
const scxmlPingPong = `<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" name="pingpong">
<state id="a"><transition event="chat.line" target="b"/></state>
<state id="b"><transition event="chat.line" cond="_event.data.text == 'ping'" target="a"/></state>
</scxml>`

const scxmlPingPongNoCond = `<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" name="pingpong">
<state id="a"><transition event="chat.line" target="b"/></state>
<state id="b"><transition event="chat.line" target="a"/></state>
</scxml>`

// BenchmarkSCXMLPingPong is an SCXML document's event path through the
// runtime: an adaptor's line made an SCXML event, queued, selected and
// taken (one transition per event, every other one with a Lua cond).
func BenchmarkSCXMLPingPong(b *testing.B) { scxmlPingPongOf(b, scxmlPingPong) }

// BenchmarkSCXMLPingPongNoCond is the same without the cond: the SCXML
// counterpart of BenchmarkPingPong's SEATML behavior, no Lua run.
func BenchmarkSCXMLPingPongNoCond(b *testing.B) { scxmlPingPongOf(b, scxmlPingPongNoCond) }

func scxmlPingPongOf(b *testing.B, doc string) {
	prog, diags := seatml.LoadBytes("bench.scxml", []byte(doc), seatml.LoadOptions{})
	if prog == nil {
		b.Fatal(diags)
	}
	m, err := interpreter.New(prog, interpreter.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h := interpreter.NewHand(m, nil)
	h.Begin()
	ev := adaptors.Event{Source: "chat", Text: "ping"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h.Dispatch(ev)
	}
	if s := m.CurrentState(); s != "a" && s != "b" {
		b.Fatalf("state %q", s)
	}
}

const scxmlDelayedSend = `<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" name="delayed">
<state id="a"><transition event="chat.line" target="b"><send event="pong" delay="10ms"/></transition></state>
<state id="b"><transition event="pong" target="a"/></state>
</scxml>`

// BenchmarkSCXMLDelayedSend is an SCXML delayed <send> to the document
// itself: an adaptor's line takes a transition whose <send> sets a 10 ms
// timer, and the timer's event takes the transition back (a fake clock
// moved by Hand.Advance, on the machine's goroutine). Per op: one line, one
// timer, two transitions.
func BenchmarkSCXMLDelayedSend(b *testing.B) {
	prog, diags := seatml.LoadBytes("bench.scxml", []byte(scxmlDelayedSend), seatml.LoadOptions{})
	if prog == nil {
		b.Fatal(diags)
	}
	clock := interpreter.NewFakeClock(time.Unix(0, 0))
	m, stop := serveWith(b, prog, interpreter.Options{Clock: clock})
	defer stop()
	ev := adaptors.Event{Source: "chat", Text: "ping"}
	never := func() bool { return false }
	bad := 0
	h := interpreter.NewHand(m, clock)
	b.ReportAllocs()
	b.ResetTimer()
	err := m.Sync(context.Background(), func() {
		for range b.N {
			h.Dispatch(ev)
			if _, ran := h.Advance(clock.Now().Add(10*time.Millisecond), never); ran != 1 {
				bad++
			}
		}
	})
	b.StopTimer()
	if err != nil || bad > 0 {
		b.Fatalf("%v; %d of %d rounds did not run the delayed send's timer once", err, bad, b.N)
	}
	if s := m.CurrentState(); s != "a" {
		b.Fatalf("state %q, want a", s)
	}
}

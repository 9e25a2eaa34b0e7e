package interpreter

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
)

// reception is a nested behavior: a dialogue of two states inside 接客,
// whose rules apply in both, with a deep history to resume it, beside a
// state for interruptions.
const reception = `<state name="接客" initial="挨拶">
  <onentry>` + `<message sendto="chat">接客 開始</message>` + `</onentry>
  <onexit>` + `<message sendto="chat">接客 中断</message>` + `</onexit>
  <rule><key>止まって</key><statetransition>停止</statetransition></rule>
  <rule><key>天気</key><message sendto="chat">晴れです</message></rule>
  <state name="挨拶">
    <rule><key>こんにちは</key><message sendto="chat">ようこそ</message><statetransition>質問</statetransition></rule>
  </state>
  <state name="質問">
    <rule><key>天気</key><message sendto="chat">今日は晴れ</message></rule>
    <rule><key>最初から</key><statetransition>接客</statetransition></rule>
  </state>
  <history name="続き" type="deep"/>
</state>
<state name="停止">
  <rule><key>続けて</key><statetransition>続き</statetransition></rule>
</state>
`

// TestNestedStates: entry goes through the compound state to its initial
// child; the child's rules come first, then its parent's (a key both
// have fires the child's), then general's; a sibling transition inside
// the compound state does not exit it; leaving it runs its onexit; a
// transition to its history resumes where it was.
func TestNestedStates(t *testing.T) {
	h := start(t, doc(`<rule><key>天気</key><message sendto="chat">一般</message></rule>`, reception))
	want := []string{"lua:open", "general", "adaptors:open", "enter:接客", "send:chat:接客 開始", "enter:挨拶"}
	if diff := cmp.Diff(want, h.take()); diff != "" {
		t.Errorf("start-up (-want +got):\n%s", diff)
	}
	steps := []struct {
		in    string
		want  []string
		state string
	}{
		{"天気", []string{"send:chat:晴れです"}, "挨拶"}, // the parent's rule, not general's
		{"こんにちは", []string{"send:chat:ようこそ", "exit:挨拶", "enter:質問"}, "質問"},
		{"天気", []string{"send:chat:今日は晴れ"}, "質問"}, // the child's first
		{"止まって", []string{"exit:質問", "exit:接客", "send:chat:接客 中断", "enter:停止"}, "停止"},
		{"天気", []string{"send:chat:一般"}, "停止"}, // general's, outside 接客
		{"続けて", []string{"exit:停止", "enter:接客", "send:chat:接客 開始", "enter:質問"}, "質問"},
		{"最初から", []string{"exit:質問", "exit:接客", "send:chat:接客 中断", "enter:接客", "send:chat:接客 開始", "enter:挨拶"}, "挨拶"},
	}
	for _, s := range steps {
		h.event("chat", s.in)
		got := h.take()
		var sends []string
		for _, l := range got {
			if len(l) > 5 && (l[:5] == "send:" || l[:5] == "exit:" || l[:6] == "enter:") {
				sends = append(sends, l)
			}
		}
		if diff := cmp.Diff(s.want, sends); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.in, diff)
		}
		if st := h.state(); st != s.state {
			t.Errorf("after %s: state %q, want %q", s.in, st, s.state)
		}
	}
}

// TestParallelRegions: every region of a parallel state handles the
// event, in document order; a region's transition leaves the others
// alone; a transition out of the parallel state exits every region.
func TestParallelRegions(t *testing.T) {
	h := start(t, doc("", `<parallel name="見守り">
  <state name="電池">
    <state name="満充電"><rule><key>点検</key><message sendto="chat">電池 良好</message></rule>
      <rule><key>電池低下</key><statetransition>低電圧</statetransition></rule></state>
    <state name="低電圧"><rule><key>点検</key><message sendto="chat">電池 低い</message></rule></state>
  </state>
  <state name="頭">
    <state name="静止"><rule><key>点検</key><message sendto="chat">頭 静止</message></rule>
      <rule><key>終了</key><statetransition>終わり</statetransition></rule></state>
  </state>
</parallel>
<state name="終わり"/>`))
	h.take()
	h.event("chat", "点検")
	if diff := cmp.Diff([]string{"send:chat:電池 良好", "send:chat:頭 静止"}, sends(h.take())); diff != "" {
		t.Errorf("both regions (-want +got):\n%s", diff)
	}
	h.event("chat", "電池低下")
	if diff := cmp.Diff([]string{"exit:満充電", "enter:低電圧"}, sends(h.take())); diff != "" {
		t.Errorf("one region's transition (-want +got):\n%s", diff)
	}
	h.event("chat", "点検")
	if diff := cmp.Diff([]string{"send:chat:電池 低い", "send:chat:頭 静止"}, sends(h.take())); diff != "" {
		t.Errorf("after it (-want +got):\n%s", diff)
	}
	h.event("chat", "終了")
	if diff := cmp.Diff([]string{"exit:静止", "exit:頭", "exit:低電圧", "exit:電池", "exit:見守り", "enter:終わり"}, sends(h.take())); diff != "" {
		t.Errorf("leaving the parallel state (-want +got):\n%s", diff)
	}
}

// sends keeps the trace lines of messages, exits and entries.
func sends(lines []string) []string {
	var out []string
	for _, l := range lines {
		for _, p := range []string{"send:", "exit:", "enter:"} {
			if len(l) >= len(p) && l[:len(p)] == p {
				out = append(out, l)
			}
		}
	}
	return out
}

// TestEventPathAllocatesNothing: a keyed match with a data rule beside
// it, and a keyed match plus a transition, allocate nothing per event,
// in a flat behavior and in a nested one (once its transitions are
// known). Before, looking up the scopes for data rules allocated.
func TestEventPathAllocatesNothing(t *testing.T) {
	for name, src := range map[string]string{
		"flat": doc(`<rule source="chat"><cond>false</cond></rule>`,
			`<state name="a"><rule><key>ping</key><statetransition>b</statetransition></rule><rule><key>stay</key><log>here</log></rule></state>
<state name="b"><rule><key>ping</key><statetransition>a</statetransition></rule><rule><key>stay</key><log>here</log></rule></state>`),
		"nested": doc(`<rule source="chat"><cond>false</cond></rule>`,
			`<state name="外"><rule><key>stay</key><log>here</log></rule>
  <state name="a"><rule><key>ping</key><statetransition>b</statetransition></rule></state>
  <state name="b"><rule><key>ping</key><statetransition>a</statetransition></rule></state>
</state>`),
		"nested, with countdowns": doc(`<rule source="chat"><cond>false</cond></rule>`,
			`<state name="外"><ontimeout timeout="60"><log>x</log></ontimeout><rule><key>stay</key><log>here</log></rule>
  <state name="a"><ontimeout timeout="30"><log>x</log></ontimeout><rule><key>ping</key><statetransition>b</statetransition></rule></state>
  <state name="b"><ontimeout timeout="20"><log>x</log></ontimeout><rule><key>ping</key><statetransition>a</statetransition></rule></state>
</state>`),
		"parallel, with countdowns": doc(`<rule source="chat"><cond>false</cond></rule>`,
			`<parallel name="P"><state name="R1"><ontimeout timeout="60"><log>x</log></ontimeout><rule><key>stay</key><log>here</log></rule>
  <state name="a"><ontimeout timeout="30"><log>x</log></ontimeout><rule><key>ping</key><statetransition>b</statetransition></rule></state>
  <state name="b"><ontimeout timeout="20"><log>x</log></ontimeout><rule><key>ping</key><statetransition>a</statetransition></rule></state>
</state><state name="R2"><ontimeout timeout="5"><log>y</log></ontimeout><rule source="chat"><cond>false</cond></rule><rule><key>stay</key><log>here</log></rule></state></parallel>`),
	} {
		prog, diags := seatml.LoadBytes("t.seatml", []byte(src), seatml.LoadOptions{})
		if prog == nil {
			t.Fatal(diags)
		}
		m, err := New(prog, Options{})
		if err != nil {
			t.Fatal(err)
		}
		h := NewHand(m, nil)
		h.Begin()
		ping := adaptors.Event{Source: "chat", Text: "ping"}
		stay := adaptors.Event{Source: "chat", Text: "stay"}
		h.Dispatch(ping) // the nested behavior's transitions, made once
		h.Dispatch(ping)
		if n := testing.AllocsPerRun(200, func() { h.Dispatch(ping); h.Dispatch(stay) }); n != 0 {
			t.Errorf("%s: %v allocations per two events", name, n)
		}
	}
}

// TestNestedOnExec: at a tick, the onexec of every active state runs,
// outer first.
func TestNestedOnExec(t *testing.T) {
	h := start(t, doc(`<onexec>`+msg("一般")+`</onexec>`, `<state name="外"><onexec>`+msg("外")+`</onexec>
  <state name="内"><onexec>`+msg("内")+`</onexec></state>
</state>`))
	h.take()
	h.advance(1500 * time.Millisecond)
	if diff := cmp.Diff([]string{"send:chat:外", "send:chat:内", "send:chat:一般"}, sends(h.take())); diff != "" {
		t.Errorf("a tick (-want +got):\n%s", diff)
	}
}

// TestInternalEvents: rules of source "event" handle internal events once
// the event that raised them is done: one raised with <raise> or
// seat.raise, a compound state's done.state.NAME when its final state is
// entered (a plain key is a prefix, so "done.state" matches it too), and
// error.execution when a script fails, its message in event.text. Rules
// that name no source never see them.
func TestInternalEvents(t *testing.T) {
	h := start(t, doc(`<rule><key>.</key>`+msg("一般の受け皿")+`</rule>
<rule source="event"><key>error.execution</key><script sendto="chat">return "エラー: " .. event.text:sub(1, 9)</script></rule>
<rule source="event"><key>done.state</key><script sendto="chat">return "完了: " .. event.key</script><statetransition>次</statetransition></rule>`,
		`<state name="受付" initial="案内中">
  <rule><key>案内して</key><raise event="案内.開始"/>`+msg("承知しました")+`</rule>
  <rule source="event"><key>案内.開始</key>`+msg("案内を始めます")+`<script>seat.raise("案内.途中")</script></rule>
  <rule source="event"><key>案内.途中</key>`+msg("途中です")+`</rule>
  <rule><key>着いた</key><statetransition>到着</statetransition></rule>
  <rule><key>壊す</key><script>nothing()</script></rule>
  <state name="案内中"/>
  <final name="到着"/>
</state>
<state name="次"/>`))
	h.take()
	h.event("chat", "案内して")
	if diff := cmp.Diff([]string{"send:chat:承知しました", "send:chat:案内を始めます", "send:chat:途中です"}, sends(h.take())); diff != "" {
		t.Errorf("raised events (-want +got):\n%s", diff)
	}
	h.event("chat", "壊す")
	if diff := cmp.Diff([]string{"send:chat:エラー: t.seatml:"}, sends(h.take())); diff != "" {
		t.Errorf("error.execution (-want +got):\n%s", diff)
	}
	h.event("chat", "着いた")
	got := sends(h.take())
	want := []string{"exit:案内中", "enter:到着", "send:chat:完了: done.state.受付", "exit:到着", "exit:受付", "enter:次"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("done.state (-want +got):\n%s", diff)
	}
}

// TestNestedOnEntryTransitions: a compound state's onentry may ask for a
// transition (its child's onentry, asking none, does not drop it); a
// leaf's onentry transition leaves from that leaf, not from the state an
// earlier transition came from; seat.state() in a compound state's
// onentry names it. (A review found each of these wrong.)
func TestNestedOnEntryTransitions(t *testing.T) {
	h := start(t, doc("", `<state name="待機"><rule><key>親へ</key><statetransition>親</statetransition></rule></state>
<state name="親"><onentry><script sendto="chat">return "in " .. seat.state()</script><statetransition>外</statetransition></onentry><state name="子"/></state>
<state name="外"/>`))
	h.take()
	h.event("chat", "親へ")
	if diff := cmp.Diff([]string{"exit:待機", "enter:親", "send:chat:in 親", "enter:子", "exit:子", "exit:親", "enter:外"}, sends(h.take())); diff != "" {
		t.Errorf("a compound state's onentry transition (-want +got):\n%s", diff)
	}
	h2 := start(t, doc("", `<state name="待機"><rule><key>行く</key><statetransition>二</statetransition></rule></state>
<state name="二"><onentry>`+msg("in 二")+`</onentry><onexit>`+msg("out 二")+`</onexit>
  <state name="甲"><onentry>`+msg("in 甲")+`<statetransition>乙</statetransition></onentry><onexit>`+msg("out 甲")+`</onexit></state>
  <state name="乙"><onentry>`+msg("in 乙")+`</onentry></state>
</state>`))
	h2.take()
	h2.event("chat", "行く")
	want := []string{"exit:待機", "enter:二", "send:chat:in 二", "enter:甲", "send:chat:in 甲", "exit:甲", "send:chat:out 甲", "enter:乙", "send:chat:in 乙"}
	if diff := cmp.Diff(want, sends(h2.take())); diff != "" {
		t.Errorf("a leaf's onentry transition to its sibling (-want +got):\n%s", diff)
	}
}

// TestParallelCurrentState: in a parallel state the current state is the
// first region's leaf (seat.state(), the innermost timeout), as §14 says.
func TestParallelCurrentState(t *testing.T) {
	h := start(t, doc("", `<parallel name="並行">
  <state name="電池"><ontimeout timeout="1">`+msg("電池 時間切れ")+`</ontimeout></state>
  <state name="頭"/>
</parallel>`))
	h.take()
	if st := h.state(); st != "電池" {
		t.Errorf("state %q, want 電池 (the first region's)", st)
	}
	h.advance(1500 * time.Millisecond)
	if diff := cmp.Diff([]string{"send:chat:電池 時間切れ"}, sends(h.take())); diff != "" {
		t.Errorf("the first region's timeout (-want +got):\n%s", diff)
	}
}

// TestEachStateTimesOutOnItsOwn: every active state's ontimeout counts
// down on its own: both regions of a parallel state, and a compound state
// around a child with a shorter one; a state's countdown starts again
// after it fires, and a state that is left stops counting.
func TestEachStateTimesOutOnItsOwn(t *testing.T) {
	h := start(t, doc("", `<state name="外"><ontimeout timeout="3">`+msg("外 3秒")+`</ontimeout>
  <parallel name="並行">
    <state name="電池"><ontimeout timeout="1">`+msg("電池 1秒")+`</ontimeout></state>
    <state name="頭"><ontimeout timeout="2">`+msg("頭 2秒")+`<statetransition>終</statetransition></ontimeout></state>
  </parallel>
  <state name="終"/>
</state>`))
	t0 := h.clock.Now()
	// What the monitor counts down: the soonest of the states' own.
	due := func(when string, want time.Duration) {
		t.Helper()
		if got, _ := h.m.Timers(); !got.Equal(t0.Add(want)) {
			t.Errorf("%s: Timers() says the timeout is due at %v, want %v", when, got.Sub(t0), want)
		}
	}
	h.take()
	due("at 0 s", time.Second)
	h.advance(1500 * time.Millisecond)
	if diff := cmp.Diff([]string{"send:chat:電池 1秒"}, sends(h.take())); diff != "" {
		t.Errorf("at 1.5 s (-want +got):\n%s", diff)
	}
	due("at 1.5 s", 2*time.Second)    // 頭's; 電池's starts again: 2.5 s
	h.advance(700 * time.Millisecond) // 2.2 s: 頭 at 2 s leaves the parallel state (電池's next is due at 2.5 s)
	if diff := cmp.Diff([]string{"send:chat:頭 2秒", "exit:頭", "exit:電池", "exit:並行", "enter:終"}, sends(h.take())); diff != "" {
		t.Errorf("at 2.2 s (-want +got):\n%s", diff)
	}
	due("at 2.2 s", 3*time.Second)     // 外's, counting from its entry at 0
	h.advance(1300 * time.Millisecond) // 3.5 s: 外's own countdown, started at 0
	if diff := cmp.Diff([]string{"send:chat:外 3秒"}, sends(h.take())); diff != "" {
		t.Errorf("at 3.5 s (-want +got):\n%s", diff)
	}
	due("at 3.5 s", 6500*time.Millisecond) // it starts again when it ran: the clock moved to 3.5 s at once
}

// TestStartIsTopLevel: a state named start is the initial one only at the
// top level; inside a state it is an ordinary child.
func TestStartIsTopLevel(t *testing.T) {
	h := start(t, doc("", `<state name="待機"/>
<state name="作業"><state name="準備"/><state name="start"/></state>`))
	if st := h.state(); st != "待機" {
		t.Errorf("initial state %q, want 待機", st)
	}
}

// TestUnreachableStates: seat check warns of a state that no
// statetransition, initial state or history leads to: the outermost of a
// group, not the states a parallel state or initial enters, and not one
// a script names in quotes (seat.transition may go there).
func TestUnreachableStates(t *testing.T) {
	_, diags := seatml.LoadBytes("t.seatml", []byte(doc(`<rule><key>休む</key><statetransition>休憩</statetransition></rule>`, `
<state name="待機">
  <rule><key>始め</key><statetransition>見守り</statetransition></rule>
  <rule><key>寄り道</key><script>seat.transition("寄り道")</script></rule>
</state>
<parallel name="見守り"><state name="電池"/><state name="頭" initial="頭2"><state name="頭1"/><state name="頭2"/></state></parallel>
<state name="休憩"/>
<state name="寄り道"/>
<state name="離れ"><state name="奥"/></state>
<state name="孤島"/>
`)), seatml.LoadOptions{})
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%d:%d: %s", d.Pos.Line, d.Pos.Col, d.Msg))
	}
	want := []string{
		`12:69: state "頭1" is never entered: no statetransition, initial state or history leads to it`,
		`15:1: state "離れ" is never entered: no statetransition, initial state or history leads to it`,
		`16:1: state "孤島" is never entered: no statetransition, initial state or history leads to it`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

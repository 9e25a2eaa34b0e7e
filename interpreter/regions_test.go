package interpreter

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/adaptors"
)

// regionDoc is a parallel state of two regions: 対話 (moved to 用件 by a
// rule) and 見守り, whose state 平常 moves to 警戒 by what is given.
func regionDoc(general, normal string) string {
	return doc(general, `<parallel name="稼働">
  <state name="対話">
    <state name="待機"><rule><key>こんにちは</key><statetransition>用件</statetransition></rule></state>
    <state name="用件"><onentry>`+msg("用件 入")+`</onentry><onexit>`+msg("用件 出")+`</onexit></state>
  </state>
  <state name="見守り">
    <state name="平常">`+normal+`</state>
    <state name="警戒"><onentry>`+msg("警戒 入")+`</onentry></state>
  </state>
</parallel>`)
}

// TestRegionMovesLeaveOtherRegions: a region that moves by itself (its
// ontimeout, an onexec calling seat.transition, an onentry passing on,
// a key-less data rule, an ondisconnect, seat.transition in a rule's
// script) exits and enters its own states only: the other region stays
// where a rule moved it, its onexit and onentry do not run again. Before,
// each of these went from the first region's leaf and reset it to 待機.
func TestRegionMovesLeaveOtherRegions(t *testing.T) {
	cases := []struct {
		name, general, normal string
		move                  func(h *harness)
	}{
		{"ontimeout", "", `<ontimeout timeout="2"><statetransition>警戒</statetransition></ontimeout>`,
			func(h *harness) { h.advance(3 * time.Second) }},
		{"onexec seat.transition", "", `<onexec><script>seat.transition("警戒")</script></onexec>`,
			func(h *harness) { h.advance(2500 * time.Millisecond) }},
		{"onentry passing on", "", `<rule><key>点検</key><statetransition>点検中</statetransition></rule></state>
    <state name="点検中"><onentry><statetransition>警戒</statetransition></onentry>`,
			func(h *harness) { h.event("other", "点検") }},
		{"key-less data rule", "", `<rule source="other"><cond>event.text == "異常"</cond><statetransition>警戒</statetransition></rule>`,
			func(h *harness) { h.event("other", "異常") }},
		{"ondisconnect", "", `<ondisconnect source="other"><statetransition>警戒</statetransition></ondisconnect>`,
			func(h *harness) {
				h.t.Helper()
				if err := h.m.Deliver(context.Background(), adaptors.Event{Source: "other", Kind: adaptors.Disconnected}); err != nil {
					h.t.Fatal(err)
				}
				h.sync()
			}},
		{"seat.transition in a rule", "", `<rule source="other"><key>異常</key><script>seat.transition("警戒")</script></rule>`,
			func(h *harness) { h.event("other", "異常") }},
		{"an inner state's rule, from the region's compound state", "", `<rule source="other"><key>異常</key><statetransition>警戒</statetransition></rule>`,
			func(h *harness) { h.event("other", "異常") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := start(t, regionDoc(c.general, c.normal))
			h.event("chat", "こんにちは")
			h.take()
			c.move(h)
			want := []string{"exit:平常", "enter:警戒", "send:chat:警戒 入"}
			if c.name == "onentry passing on" {
				want = []string{"exit:平常", "enter:点検中", "exit:点検中", "enter:警戒", "send:chat:警戒 入"}
			}
			if diff := cmp.Diff(want, sends(h.take())); diff != "" {
				t.Errorf("見守り moving (-want +got):\n%s", diff)
			}
			if got := activeNames(h); !cmp.Equal(got, []string{"稼働", "対話", "用件", "見守り", "警戒"}) {
				t.Errorf("active states %v: 対話 should still be in 用件", got)
			}
		})
	}
}

// activeNames lists the active states in document order.
func activeNames(h *harness) []string {
	h.t.Helper()
	var names []string
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.m.Sync(ctx, func() { names = h.m.ActiveStates() }); err != nil {
		h.t.Fatal(err)
	}
	return names
}

// TestRegionTimersAreTheirOwn: a rule of one region restarts that
// region's countdowns, not another's; seat.timeout in a region sets that
// region's state's timeout; a transition in one region leaves another
// region's seat.timeout alone. Before, each went to the first region's
// innermost timeout (resetStateTimeout walked up from its leaf).
func TestRegionTimersAreTheirOwn(t *testing.T) {
	src := doc("", `<parallel name="並行">
  <state name="甲"><ontimeout timeout="10">`+msg("甲 時間切れ")+`</ontimeout>
    <rule><key>甲 延長</key><script>seat.timeout(30)</script></rule>
  </state>
  <state name="乙">
    <state name="乙1"><ontimeout timeout="5">`+msg("乙 時間切れ")+`</ontimeout>
      <rule><key>乙 話す</key><log>乙</log></rule>
      <rule><key>乙 短縮</key><script>seat.timeout(1)</script></rule>
      <rule><key>乙 進む</key><statetransition>乙2</statetransition></rule>
    </state>
    <state name="乙2"/>
  </state>
</parallel>`)
	t.Run("a rule restarts its own region's countdown only", func(t *testing.T) {
		h := start(t, src)
		h.take()
		h.advance(4 * time.Second)
		h.event("chat", "乙 話す") // 乙1's countdown: due at 9 s now; 甲's still at 10 s
		h.advance(5500 * time.Millisecond)
		if diff := cmp.Diff([]string{"send:chat:乙 時間切れ"}, sends(h.take())); diff != "" {
			t.Errorf("at 9.5 s (-want +got):\n%s", diff)
		}
		h.advance(time.Second)
		if diff := cmp.Diff([]string{"send:chat:甲 時間切れ"}, sends(h.take())); diff != "" {
			t.Errorf("at 10.5 s, 甲's own 10 s (-want +got):\n%s", diff)
		}
	})
	t.Run("seat.timeout sets its own region's timeout", func(t *testing.T) {
		h := start(t, src)
		h.take()
		h.event("chat", "乙 短縮") // 乙1: 1 s from now; 甲 keeps 10 s
		h.advance(1500 * time.Millisecond)
		if diff := cmp.Diff([]string{"send:chat:乙 時間切れ"}, sends(h.take())); diff != "" {
			t.Errorf("at 1.5 s (-want +got):\n%s", diff)
		}
		h.advance(7 * time.Second)
		if diff := cmp.Diff([]string{"send:chat:乙 時間切れ"}, sends(h.take())[:1]); diff != "" {
			t.Errorf("at 8.5 s, 乙1's 1 s again (-want +got):\n%s", diff)
		}
		h.advance(2 * time.Second)
		got := sends(h.take())
		if !cmp.Equal(got[len(got)-1:], []string{"send:chat:甲 時間切れ"}) {
			t.Errorf("at 10.5 s: %v, want 甲's own 10 s to fire", got)
		}
	})
	t.Run("another region's transition keeps seat.timeout", func(t *testing.T) {
		h := start(t, src)
		h.take()
		h.event("chat", "甲 延長") // 甲: 30 s
		h.event("chat", "乙 進む")
		h.take()
		h.advance(20 * time.Second)
		if got := sends(h.take()); len(got) != 0 {
			t.Errorf("at 20 s: %v; 甲's timeout is 30 s for this visit", got)
		}
		h.advance(11 * time.Second)
		if diff := cmp.Diff([]string{"send:chat:甲 時間切れ"}, sends(h.take())); diff != "" {
			t.Errorf("at 31 s (-want +got):\n%s", diff)
		}
	})
}

// TestTimeoutTiesInDocumentOrder: timeouts due at the same instant fire
// in document order (regions first to last; a state inside another
// before it), every time. Before, a Go map's order decided.
func TestTimeoutTiesInDocumentOrder(t *testing.T) {
	src := doc("", `<parallel name="並行">
  <state name="甲"><ontimeout timeout="5">`+msg("甲")+`</ontimeout></state>
  <state name="乙"><ontimeout timeout="5">`+msg("乙")+`</ontimeout>
    <state name="乙内"><ontimeout timeout="5">`+msg("乙内")+`</ontimeout></state>
  </state>
  <state name="丙"><ontimeout timeout="5">`+msg("丙")+`</ontimeout></state>
</parallel>`)
	for range 20 {
		h := start(t, src)
		h.take()
		h.runTimers(h.clock.Now().Add(5 * time.Second))
		if diff := cmp.Diff([]string{"send:chat:甲", "send:chat:乙内", "send:chat:乙", "send:chat:丙"}, sends(h.take())); diff != "" {
			t.Fatalf("at 5 s (-want +got):\n%s", diff)
		}
		h.stop()
	}
}

// TestCompoundTimeoutMeansSilence: a compound state's ontimeout counts
// the silence in it and in every state inside it, whether or not a child
// has an ontimeout of its own: a rule of the child or of the compound
// state restarts it. The table of what restarts which countdown
// (docs/seatml.md §14): a rule or handler of a state restarts that
// state's and those of the states around it; not those of states inside
// it, nor another region's; general's rules restart general's only.
func TestCompoundTimeoutMeansSilence(t *testing.T) {
	src := doc(`<rule source="other"><key>様子</key><log>様子</log></rule>`, `<state name="会話"><ontimeout timeout="10">`+msg("会話 終了")+`<statetransition>待機</statetransition></ontimeout>
  <rule><key>天気</key><log>晴れ</log></rule>
  <state name="用件"><ontimeout timeout="5">`+msg("用件 催促")+`</ontimeout>
    <rule><key>はい</key><log>はい</log></rule>
  </state>
</state>
<state name="待機"/>`)
	type step struct {
		at     time.Duration // since the start
		input  string        // chat's line; "" for none
		source string
		want   []string // messages sent once the clock is there
	}
	for name, steps := range map[string][]step{
		"the child's rule restarts both": {
			{4 * time.Second, "はい", "chat", nil},
			{8 * time.Second, "はい", "chat", nil},
			{12 * time.Second, "はい", "chat", nil},
			{16500 * time.Millisecond, "", "", nil},
			{17500 * time.Millisecond, "", "", []string{"用件 催促"}},
			{22500 * time.Millisecond, "", "", []string{"用件 催促", "会話 終了"}}, // a tie: the inner first
		},
		"the compound state's rule restarts its own, not the child's": {
			{4 * time.Second, "天気", "chat", nil},
			{5500 * time.Millisecond, "", "", []string{"用件 催促"}},
			{8 * time.Second, "天気", "chat", nil},
			{12 * time.Second, "天気", "chat", []string{"用件 催促"}},
			{17 * time.Second, "", "", []string{"用件 催促"}},
			{22500 * time.Millisecond, "", "", []string{"用件 催促", "会話 終了"}},
		},
		"general's rule restarts neither": {
			{4 * time.Second, "様子", "other", nil},
			{5500 * time.Millisecond, "", "", []string{"用件 催促"}},
			{10500 * time.Millisecond, "", "", []string{"用件 催促", "会話 終了"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := start(t, src)
			t0 := h.clock.Now()
			h.take()
			for _, s := range steps {
				h.runTimers(t0.Add(s.at))
				if s.input != "" {
					h.event(s.source, s.input)
				}
				var got []string
				for _, l := range h.sends() {
					got = append(got, strings.TrimPrefix(l, "chat:"))
				}
				if diff := cmp.Diff(s.want, got); diff != "" {
					t.Errorf("at %v (-want +got):\n%s", s.at, diff)
				}
			}
		})
	}
}

// runTimers runs the timers due up to until, each at its time, as seat
// test's clock does: a countdown restarted when a timer fired counts
// from that timer's instant, so that ties are exact.
func (h *harness) runTimers(until time.Time) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.m.Sync(ctx, func() { NewHand(h.m, h.clock).Advance(until, func() bool { return false }) }); err != nil {
		h.t.Fatal(err)
	}
}

// TestGeneralTimeoutLeavesStatesAlone: general's countdown (general's
// ontimeout, or seat.timeout from a state with no ontimeout around it)
// firing restarts general's only, not the countdowns of the first
// region's leaf and the states around it, whose own timeout then never
// came. (A review found it at the change that made regions' timers
// their own; without regions it was wrong before too: 外's list ran
// every 3 s.)
func TestGeneralTimeoutLeavesStatesAlone(t *testing.T) {
	for name, c := range map[string]struct{ general, states, input string }{
		"regions": {"", `<parallel name="並行">
  <state name="甲"><ontimeout timeout="10">` + msg("甲 時間切れ") + `</ontimeout></state>
  <state name="乙"><state name="乙1"><rule><key>乙 短縮</key><script>seat.timeout(3)</script></rule></state></state>
</parallel>`, "乙 短縮"},
		"regions, general's ontimeout": {`<ontimeout timeout="100">` + msg("全体") + `</ontimeout>`, `<parallel name="並行">
  <state name="甲"><ontimeout timeout="10">` + msg("甲 時間切れ") + `</ontimeout></state>
  <state name="乙"><state name="乙1"><rule><key>乙 短縮</key><script>seat.timeout(3)</script></rule></state></state>
</parallel>`, "乙 短縮"},
		"a general rule": {`<rule><key>全体 短縮</key><script>seat.timeout(3)</script></rule>`, `<state name="外"><ontimeout timeout="10">` + msg("甲 時間切れ") + `</ontimeout>
  <state name="内"/>
</state>`, "全体 短縮"},
	} {
		t.Run(name, func(t *testing.T) {
			h := start(t, doc(c.general, c.states))
			t0 := h.clock.Now()
			h.take()
			h.event("chat", c.input)
			h.runTimers(t0.Add(10500 * time.Millisecond))
			n := 0
			for _, s := range h.sends() {
				if s == "chat:甲 時間切れ" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("at 10.5 s the state's own 10 s timeout fired %d times, want once", n)
			}
		})
	}
}

// TestGeneralTimeoutIsSilence: in a nested behavior general's ontimeout
// counts the silence of the whole behavior while no state counts its
// own: a region that moves by its onexec does not restart it, nor do
// other states' entries clear a seat.timeout that set it.
func TestGeneralTimeoutIsSilence(t *testing.T) {
	t.Run("onexec moves", func(t *testing.T) {
		h := start(t, doc(`<ontimeout timeout="5">`+msg("全体")+`</ontimeout>`, `<parallel name="P">
  <state name="甲"/>
  <state name="乙"><state name="乙1"><onexec><statetransition>乙2</statetransition></onexec></state><state name="乙2"><onexec><statetransition>乙1</statetransition></onexec></state></state>
</parallel>`))
		t0 := h.clock.Now()
		h.take()
		h.runTimers(t0.Add(5500 * time.Millisecond))
		if diff := cmp.Diff([]string{"chat:全体"}, h.sends()); diff != "" {
			t.Errorf("at 5.5 s (-want +got):\n%s", diff)
		}
	})
	for name, states := range map[string]string{
		"a compound state's onentry": `<state name="外"><onentry><script>seat.timeout(2)</script></onentry><state name="内"/></state>`,
		"the last region's onentry":  `<parallel name="並行"><state name="甲"/><state name="乙"><onentry><script>seat.timeout(2)</script></onentry></state></parallel>`,
		"another region's timeout moves": `<parallel name="並行"><state name="甲"><onentry><script>seat.timeout(2)</script></onentry></state>
  <state name="乙"><state name="乙1"><onexec><statetransition>乙2</statetransition></onexec></state><state name="乙2"/></state></parallel>`,
	} {
		t.Run("seat.timeout in "+name, func(t *testing.T) {
			h := start(t, doc(`<ontimeout timeout="20">`+msg("全体")+`</ontimeout>`, states))
			t0 := h.clock.Now()
			h.take()
			h.runTimers(t0.Add(2500 * time.Millisecond))
			if diff := cmp.Diff([]string{"chat:全体"}, h.sends()); diff != "" {
				t.Errorf("at 2.5 s (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSeatTimeoutInOnexitDoesNothing: seat.timeout and seat.reset_timer
// in an onexit change nothing (the state's visit is over); before, with
// the state's own countdown already stopped, seat.timeout set its
// parent's.
func TestSeatTimeoutInOnexitDoesNothing(t *testing.T) {
	h := start(t, doc("", `<state name="親"><ontimeout timeout="100">`+msg("親 時間切れ")+`</ontimeout>
  <state name="子1"><ontimeout timeout="50"/><onexit><script>seat.timeout(1)</script></onexit>
    <rule><key>進む</key><statetransition>子2</statetransition></rule></state>
  <state name="子2"/>
</state>`))
	t0 := h.clock.Now()
	h.take()
	h.event("chat", "進む")
	h.take()
	h.runTimers(t0.Add(2 * time.Second))
	if got := h.sends(); len(got) != 0 {
		t.Errorf("at 2 s: %q; 親's is 100 s", got)
	}
}

// TestRegionsPassOnTogether: when the regions of a parallel state are
// entered together and each one's onentry asks for a transition, each is
// carried out (before, only the last one asked for was), at the start
// and when a rule enters the parallel state.
func TestRegionsPassOnTogether(t *testing.T) {
	parallel := `<parallel name="並行">
  <state name="甲"><state name="甲0"><onentry><statetransition>甲1</statetransition></onentry></state><state name="甲1"/></state>
  <state name="乙"><state name="乙0"><onentry><statetransition>乙1</statetransition></onentry></state><state name="乙1"/></state>
</parallel>`
	h := start(t, doc("", parallel))
	if got := activeNames(h); !cmp.Equal(got, []string{"並行", "甲", "甲1", "乙", "乙1"}) {
		t.Errorf("at the start: active %v, want 甲1 and 乙1", got)
	}
	h = start(t, doc("", `<state name="待機"><rule><key>始め</key><statetransition>並行</statetransition></rule></state>`+parallel))
	h.event("chat", "始め")
	if got := activeNames(h); !cmp.Equal(got, []string{"並行", "甲", "甲1", "乙", "乙1"}) {
		t.Errorf("entered by a rule: active %v, want 甲1 and 乙1", got)
	}
}

// TestParallelOnentryIntoRegion: a <parallel>'s onentry asking for a
// state of its second region moves that region only; before, it left
// from the first region's leaf, exited the parallel state and entered it
// again, looping until the chain was cut.
func TestParallelOnentryIntoRegion(t *testing.T) {
	h := start(t, doc("", `<state name="待機"><rule><key>始め</key><statetransition>並行</statetransition></rule></state>
<parallel name="並行"><onentry>`+msg("並行 入")+`<statetransition>乙2</statetransition></onentry>
  <state name="甲"><state name="甲1"/></state>
  <state name="乙"><state name="乙1"/><state name="乙2"/></state>
</parallel>`))
	h.take()
	h.event("chat", "始め")
	want := []string{"exit:待機", "enter:並行", "send:chat:並行 入", "enter:甲", "enter:甲1", "enter:乙", "enter:乙1", "exit:乙1", "enter:乙2"}
	if diff := cmp.Diff(want, sends(h.take())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if errs := h.logged(zapcore.ErrorLevel); len(errs) != 0 {
		t.Errorf("logged %q", errs)
	}
}

// TestRegionMovedByAnEventDoesNotHandleIt: a region that an earlier
// region's transition left and entered again does not handle the event
// that moved it; the other regions' data rules still see an event a
// region's keyed rule moved on; every region's ondisconnect runs.
func TestRegionMovedByAnEventDoesNotHandleIt(t *testing.T) {
	t.Run("entered again", func(t *testing.T) {
		h := start(t, doc("", `<parallel name="並行">
  <state name="甲"><state name="甲1"><rule><key>x</key>`+msg("甲1 x")+`<statetransition>乙1</statetransition></rule></state></state>
  <state name="乙"><state name="乙1"><rule><key>x</key>`+msg("乙1 x")+`</rule></state></state>
</parallel>`))
		h.take()
		h.event("chat", "x")
		if diff := cmp.Diff([]string{"chat:甲1 x"}, h.sends()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("data rules of the others", func(t *testing.T) {
		h := start(t, doc("", `<parallel name="並行">
  <state name="甲"><state name="甲1"><rule><key>x</key><statetransition>甲2</statetransition></rule></state><state name="甲2"/></state>
  <state name="乙"><state name="乙1"><rule source="chat"><cond>true</cond>`+msg("乙 見た")+`</rule></state></state>
</parallel>`))
		h.take()
		h.event("chat", "x")
		if diff := cmp.Diff([]string{"chat:乙 見た"}, h.sends()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("ondisconnect in both", func(t *testing.T) {
		h := start(t, doc(`<ondisconnect source="other">`+msg("全体 切断")+`</ondisconnect>`, `<parallel name="P">
  <state name="甲"><ondisconnect source="other">`+msg("甲 切断")+`</ondisconnect></state>
  <state name="乙"><ondisconnect source="other">`+msg("乙 切断")+`</ondisconnect></state>
</parallel>`))
		h.take()
		if err := h.m.Deliver(context.Background(), adaptors.Event{Source: "other", Kind: adaptors.Disconnected}); err != nil {
			t.Fatal(err)
		}
		h.sync()
		if diff := cmp.Diff([]string{"chat:甲 切断", "chat:乙 切断"}, h.sends()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestRegionOnexecKeepsItsTime: each state's onexec waits a period from
// its own entry, not from another region's; a region whose onexec moves
// at every tick does not starve the others'.
func TestRegionOnexecKeepsItsTime(t *testing.T) {
	t.Run("another region moves", func(t *testing.T) {
		h := start(t, doc("", `<parallel name="並行">
  <state name="甲"><onexec>`+msg("甲 tick")+`</onexec></state>
  <state name="乙"><state name="乙1"><rule><key>進む</key><statetransition>乙2</statetransition></rule></state><state name="乙2"/></state>
</parallel>`))
		t0 := h.clock.Now()
		h.take()
		h.runTimers(t0.Add(2500 * time.Millisecond))
		h.event("chat", "進む")
		h.take()
		h.runTimers(t0.Add(3500 * time.Millisecond))
		if diff := cmp.Diff([]string{"chat:甲 tick"}, h.sends()); diff != "" {
			t.Errorf("the tick at 3 s, 乙 having moved at 2.5 s (-want +got):\n%s", diff)
		}
	})
	t.Run("a region moving at every tick", func(t *testing.T) {
		h := start(t, doc("", `<parallel name="P">
  <state name="甲"><state name="甲1"><onexec><statetransition>甲2</statetransition></onexec></state><state name="甲2"><onexec><statetransition>甲1</statetransition></onexec></state></state>
  <state name="乙"><onexec>`+msg("乙 tick")+`</onexec></state>
</parallel>`))
		t0 := h.clock.Now()
		h.take()
		h.runTimers(t0.Add(5500 * time.Millisecond))
		if got := h.sends(); len(got) != 5 {
			t.Errorf("5 ticks: 乙's onexec ran %d times (%q)", len(got), got)
		}
	})
}

// TestStateObserversToldOncePerStep: one region moving does not tell the
// state observers (the web page, ROS state topics) anything while the
// current state, the first region's, stays; before, they were told the
// other region's leaf, then the current state again.
func TestStateObserversToldOncePerStep(t *testing.T) {
	obs := &stateSeen{name: "chat"}
	h := start(t, doc("", `<parallel name="並行">
  <state name="甲"><state name="甲1"><rule><key>甲 進む</key><statetransition>甲2</statetransition></rule></state><state name="甲2"/></state>
  <state name="乙"><state name="乙1"><rule><key>進む</key><statetransition>乙2</statetransition></rule></state><state name="乙2"/></state>
</parallel>`), func(o *Options) {
		o.OpenAdaptor = func(c adaptors.Config) (adaptors.Adaptor, error) {
			if c.Name == "chat" {
				return obs, nil
			}
			return &stateSeen{name: c.Name}, nil
		}
	})
	obs.take()
	h.event("other", "進む")
	if got := obs.take(); len(got) != 0 {
		t.Errorf("observers were told %q; the current state (甲1) did not change", got)
	}
	h.event("other", "甲 進む")
	if diff := cmp.Diff([]string{"甲2"}, obs.take()); diff != "" {
		t.Errorf("the first region moving (-want +got):\n%s", diff)
	}
}

// stateSeen is an adaptor that records the states it is told of.
type stateSeen struct {
	name string
	mu   sync.Mutex
	seen []string
}

func (a *stateSeen) Name() string                                    { return a.name }
func (a *stateSeen) Open(ctx context.Context, s adaptors.Sink) error { return nil }
func (a *stateSeen) Send(string) error                               { return nil }
func (a *stateSeen) Close() error                                    { return nil }
func (a *stateSeen) StateChanged(n string) {
	a.mu.Lock()
	a.seen = append(a.seen, n)
	a.mu.Unlock()
}

func (a *stateSeen) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.seen
	a.seen = nil
	return out
}

// activeSeen records what an adaptor that shows every active state
// (adaptors.ActiveObserver) is told.
type activeSeen struct{ stateSeen }

func (a *activeSeen) ActiveChanged(current string, active []string) {
	a.StateChanged(current + " " + strings.Join(active, ","))
}

// TestActiveObserversToldEveryActiveState: an observer that shows every
// active state (the web page) is told them, outermost first, after each
// step that changes them: when the other region moves too, though the
// current state stays; a plain observer still only when the current
// state changes.
func TestActiveObserversToldEveryActiveState(t *testing.T) {
	obs, plain := &activeSeen{stateSeen{name: "chat"}}, &stateSeen{name: "other"}
	h := start(t, doc("", `<parallel name="並行">
  <state name="甲"><state name="甲1"><rule><key>甲 進む</key><statetransition>甲2</statetransition></rule></state><state name="甲2"/></state>
  <state name="乙"><state name="乙1"><rule><key>進む</key><statetransition>乙2</statetransition></rule></state><state name="乙2"/></state>
</parallel>`), func(o *Options) {
		o.OpenAdaptor = func(c adaptors.Config) (adaptors.Adaptor, error) {
			if c.Name == "chat" {
				return obs, nil
			}
			return plain, nil
		}
	})
	if diff := cmp.Diff([]string{"甲1 並行,甲,甲1,乙,乙1"}, obs.take()); diff != "" {
		t.Errorf("at the start (-want +got):\n%s", diff)
	}
	plain.take()
	h.event("other", "進む")
	if diff := cmp.Diff([]string{"甲1 並行,甲,甲1,乙,乙2"}, obs.take()); diff != "" {
		t.Errorf("the other region moving (-want +got):\n%s", diff)
	}
	if got := plain.take(); len(got) != 0 {
		t.Errorf("a plain observer was told %q; the current state did not change", got)
	}
	h.event("other", "甲 進む")
	if diff := cmp.Diff([]string{"甲2 並行,甲,甲2,乙,乙2"}, obs.take()); diff != "" {
		t.Errorf("the first region moving (-want +got):\n%s", diff)
	}
}

// TestStateTimeoutWinsTieWithGeneral: a state's countdown and general's
// due at the same instant: the state's fires first (general's is around
// every state).
func TestStateTimeoutWinsTieWithGeneral(t *testing.T) {
	h := start(t, doc(`<ontimeout timeout="100">`+msg("全体")+`</ontimeout>`, `<parallel name="P">
  <state name="甲"><rule><key>短縮</key><script>seat.timeout(5)</script></rule></state>
  <state name="乙"><ontimeout timeout="5">`+msg("乙")+`</ontimeout></state>
</parallel>`))
	t0 := h.clock.Now()
	h.take()
	h.event("chat", "短縮")
	h.runTimers(t0.Add(5 * time.Second))
	if diff := cmp.Diff([]string{"chat:乙", "chat:全体"}, h.sends()); diff != "" {
		t.Errorf("at 5 s (-want +got):\n%s", diff)
	}
}

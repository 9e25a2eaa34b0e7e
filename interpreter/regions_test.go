package interpreter

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
	if err := h.m.Sync(ctx, func() { h.m.RunTimers(h.clock, until, func() bool { return false }) }); err != nil {
		h.t.Fatal(err)
	}
}

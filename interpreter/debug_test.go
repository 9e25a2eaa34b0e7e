package interpreter

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
)

// debugged starts src with a debugger.
func debugged(t *testing.T, src string) (*harness, *Debugger) {
	t.Helper()
	d := NewDebugger(nil)
	h := start(t, src, func(o *Options) { o.Debugger = d })
	return h, d
}

// waitPaused waits until the debugger has stopped the behavior, and
// returns what it shows.
func waitPaused(t *testing.T, d *Debugger) DebugState {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := d.Show(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if s.Paused {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("not paused within 10 s: %+v", s)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPauseHoldsTheClock: a countdown paused at 3 s of 10 s fires 7 s
// after continue, however long the pause; input sent meanwhile waits and
// is handled in order after it.
func TestPauseHoldsTheClock(t *testing.T) {
	h, d := debugged(t, doc("", `<state name="a">`+rule("", `<key>go</key><statetransition>b</statetransition>`)+`</state>
<state name="b"><ontimeout timeout="10">`+msg("timeout")+`</ontimeout>`+rule("", `<key>n\d</key><script>seat.send("chat", event.text)</script>`)+`</state>`))
	h.event("chat", "go")
	h.advance(3 * time.Second)
	h.take()
	if err := d.Pause(); err != nil {
		t.Fatal(err)
	}
	s := waitPaused(t, d)
	if s.State != "b" || len(s.Timers) != 1 || s.Timers[0].What != "timeout" || s.Timers[0].In != 7*time.Second {
		t.Fatalf("paused: %+v", s)
	}
	for _, text := range []string{"n1", "n2", "n3"} {
		if err := d.Send(context.Background(), "chat", text); err != nil {
			t.Fatal(err)
		}
	}
	h.clock.Advance(time.Minute) // no settle: the behavior is paused
	s = waitPaused(t, d)
	if diff := cmp.Diff([]string{"chat: n1", "chat: n2", "chat: n3"}, s.Queue); diff != "" || s.Timers[0].In != 7*time.Second {
		t.Fatalf("queue (-want +got):\n%s\ntimers %+v", diff, s.Timers)
	}
	if got := h.sends(); len(got) != 0 {
		t.Fatalf("ran while paused: %q", got)
	}
	if err := d.Continue(); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if diff := cmp.Diff([]string{"chat:n1", "chat:n2", "chat:n3"}, h.sends()); diff != "" {
		t.Fatalf("after continue (-want +got):\n%s", diff)
	}
	// The events restarted the countdown at the continue: 10 s from there.
	h.advance(9999 * time.Millisecond)
	if got := h.sends(); len(got) != 0 {
		t.Fatalf("fired early: %q", got)
	}
	h.advance(time.Millisecond)
	if diff := cmp.Diff([]string{"chat:timeout"}, h.sends()); diff != "" {
		t.Fatalf("timeout (-want +got):\n%s", diff)
	}
}

// TestPauseKeepsTheTimeLeft: with nothing sent during the pause, the
// countdown at 3 s of 10 s fires 7 s after continue.
func TestPauseKeepsTheTimeLeft(t *testing.T) {
	h, d := debugged(t, doc("", `<state name="b"><ontimeout timeout="10">`+msg("timeout")+`</ontimeout></state>`))
	pauseAt3Of10(t, h, d, "chat:timeout")
}

// pauseAt3Of10 pauses the behavior 3 s into its 10 s countdown for an
// hour of its clock, and checks that the countdown sends want 7 s after
// continue, not before.
func pauseAt3Of10(t *testing.T, h *harness, d *Debugger, want string) {
	t.Helper()
	h.advance(3 * time.Second)
	h.take()
	d.Pause()
	waitPaused(t, d)
	h.clock.Advance(time.Hour)
	d.Continue()
	h.settle()
	h.advance(6999 * time.Millisecond)
	if got := h.sends(); len(got) != 0 {
		t.Fatalf("fired early: %q", got)
	}
	h.advance(time.Millisecond)
	if diff := cmp.Diff([]string{want}, h.sends()); diff != "" {
		t.Fatalf("7 s after continue (-want +got):\n%s", diff)
	}
}

// TestPauseKeepsAnSCXMLDelay: an SCXML document's delayed event paused
// at 3 s of 10 s fires 7 s after continue, however long the pause.
func TestPauseKeepsAnSCXMLDelay(t *testing.T) {
	d := NewDebugger(nil)
	prog, diags := seatml.LoadBytes("t.scxml", []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua" name="t">
  <seat:adaptor name="chat" type="socket" role="server" port="0"/>
  <state id="a"><onentry><send event="時間" delay="10s"/></onentry>
    <transition event="時間"><send type="seat" target="chat"><content expr="'時間です'"/></send></transition></state>
</scxml>`), seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	pauseAt3Of10(t, startProgram(t, prog, func(o *Options) { o.Debugger = d }), d, "chat:時間です")
}

// TestBreakpoints: each kind stops the behavior where it says, shows
// where; step goes to the next event, a micro step to the next thing
// done; a variable set while paused is seen by a rule's cond; until runs
// to a state.
func TestBreakpoints(t *testing.T) {
	h, d := debugged(t, doc(`<script>name = "none"</script>`, `<state name="待機">`+
		rule("", `<key>こんにちは</key>`+msg("いらっしゃいませ")+`<statetransition>確認</statetransition>`)+
		`</state><state name="確認">`+
		rule("", `<key>はい</key><cond>name == "山田"</cond>`+msg("山田様ですね")+`<statetransition>待機</statetransition>`)+
		rule("", `<key>はい</key>`+msg("どなたですか")+`<statetransition>待機</statetransition>`)+
		`</state>`))
	h.take()
	b, err := d.Break(Breakpoint{Kind: BreakState, Name: "確認"})
	if err != nil || b.ID != 1 {
		t.Fatalf("%+v %v", b, err)
	}
	if _, err := d.Break(Breakpoint{Kind: BreakState, Name: "無い"}); err == nil {
		t.Error("a breakpoint on a state that does not exist was set")
	}
	if _, err := d.Break(Breakpoint{Kind: BreakRule, Line: 999}); err == nil || !strings.Contains(err.Error(), "no rule or widget of the behavior starts at line 999") {
		t.Errorf("a breakpoint on a line with no rule: %v", err)
	}
	line := h.m.prog.Rules[0].Pos.Line
	if _, err := d.Break(Breakpoint{Kind: BreakRule, File: "other.seatml", Line: line}); err == nil {
		t.Error("a breakpoint in a file the behavior does not have was set")
	}
	go h.m.Deliver(context.Background(), eventOf("chat", "こんにちは"))
	s := waitPaused(t, d)
	if s.Why != "breakpoint 1: entering 確認" || s.At != "entering 確認" || s.Event != "chat: こんにちは" {
		t.Fatalf("%+v", s)
	}
	if err := d.Set(context.Background(), "name", `"山田"`); err != nil {
		t.Fatal(err)
	}
	if s := waitPaused(t, d); s.Globals["name"] != "山田" {
		t.Fatalf("globals %v", s.Globals)
	}
	d.Clear(1)
	d.Break(Breakpoint{Kind: BreakMessage, Name: "chat", Pattern: "様"})
	d.Continue()
	go h.m.Deliver(context.Background(), eventOf("chat", "はい"))
	// The message breakpoint: stopped as the message goes out.
	s = waitPaused(t, d)
	if s.At != "message to chat: 山田様ですね" {
		t.Fatalf("%+v", s)
	}
	d.Step(true) // the next thing done: leaving 確認
	s = waitPaused(t, d)
	if s.At != "leaving 確認" {
		t.Fatalf("micro step: %+v", s)
	}
	d.Clear(0)
	d.Step(false) // the next event
	go h.m.Deliver(context.Background(), eventOf("chat", "こんにちは"))
	s = waitPaused(t, d)
	if s.At != "event chat: こんにちは" || s.State != "待機" {
		t.Fatalf("step: %+v", s)
	}
	d.Continue()
	h.settle()
	if got := strings.Join(h.sends(), "|"); got != "chat:いらっしゃいませ|chat:山田様ですね|chat:いらっしゃいませ" {
		t.Errorf("sent %q", got)
	}
	// when: a Lua condition, before an event is handled.
	d.Break(Breakpoint{Kind: BreakWhen, Cond: `name == "田中"`})
	d.Set(context.Background(), "name", `"田中"`)
	go h.m.Deliver(context.Background(), eventOf("chat", "はい"))
	s = waitPaused(t, d)
	if !strings.HasPrefix(s.Why, "breakpoint 3: when") || s.At != "event chat: はい" {
		t.Fatalf("when: %+v", s)
	}
	d.Clear(0)
	d.Until("確認") // はい goes to 待機 (どなたですか); the next こんにちは to 確認
	h.m.Deliver(context.Background(), eventOf("chat", "こんにちは"))
	s = waitPaused(t, d)
	if s.At != "entering 確認" || len(s.Breakpoints) != 0 {
		t.Fatalf("until: %+v", s)
	}
	d.Continue()
	h.settle()
}

// TestSendFiresAWidget: send with the adaptor gui fires the widget of an
// active state so named, as a click on the operator page does; an
// adaptor the behavior does not have is refused.
func TestSendFiresAWidget(t *testing.T) {
	h, d := debugged(t, doc("", `<state name="s"><button label="呼ぶ">`+msg("呼びました")+`</button></state>`))
	h.take()
	if err := d.Send(context.Background(), "gui", "呼ぶ"); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if diff := cmp.Diff([]string{"chat:呼びました"}, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := d.Send(context.Background(), "無い", "x"); err == nil {
		t.Error("an event of an adaptor the behavior does not have was sent")
	}
}

// TestSendAStructuredMessage: a structured message sent by the debugger
// reaches a key-less rule as the table rtc_in_data (and event.data), as
// a ROS message or an OpenRTM value does; a widget takes no message.
func TestSendAStructuredMessage(t *testing.T) {
	h, d := debugged(t, doc("", `<state name="s"><rule source="chat"><script>seat.send("chat", string.format("%s %s %s", rtc_in_data.axes[2], event.data.buttons[1], rtc_in_data.name))</script></rule></state>`))
	h.take()
	v, err := adaptors.ParseText(`{"axes": [-0.5, 1.5], "buttons": [1, 0], "name": "腕"}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SendMessage(context.Background(), "chat", v); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if diff := cmp.Diff([]string{"chat:1.5 1 腕"}, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := d.SendMessage(context.Background(), "gui", v); err == nil {
		t.Error("a widget was sent a structured message")
	}
}

// TestDebuggerRefusesWhatItCannotDebug: a behavior with a session per
// peer says to name a session, instead of "not running".
func TestDebuggerRefusesWhatItCannotDebug(t *testing.T) {
	d := NewDebugger(nil)
	prog, diags := seatml.LoadBytes("t.seatml", []byte(`<seatml><general name="t"><adaptor name="chat" type="socket" role="server" port="0" session="peer"/></general><state name="s"/></seatml>`), seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	startProgram(t, prog, func(o *Options) { o.Debugger = d })
	if err := d.Pause(); err == nil || !strings.HasPrefix(err.Error(), "a behavior with a session per peer is debugged a session at a time") {
		t.Errorf("pause: %v", err)
	}
}

// TestDebuggingAnSCXMLDocument: an SCXML document stops on entering a
// state; the debugger shows its configuration and its datamodel, sets a
// datum the document then uses, and sends it an event.
func TestDebuggingAnSCXMLDocument(t *testing.T) {
	d := NewDebugger(nil)
	prog, diags := seatml.LoadBytes("t.scxml", []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua" name="t" initial="受付">
  <seat:adaptor name="chat" type="socket" role="server" port="0"/>
  <datamodel><data id="guest" expr="''"/></datamodel>
  <state id="受付"><transition event="chat.line" target="確認"><assign location="guest" expr="_event.data.text"/></transition></state>
  <state id="確認"><transition event="chat.line" target="受付"><send type="seat" target="chat"><content expr="guest .. '様'"/></send></transition></state>
</scxml>`), seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	h := startProgram(t, prog, func(o *Options) { o.Debugger = d })
	if _, err := d.Break(Breakpoint{Kind: BreakState, Name: "確認"}); err != nil {
		t.Fatal(err)
	}
	delivered := make(chan error, 1)
	go func() { // a producer may run the machine itself, and pause with it
		delivered <- h.m.Deliver(context.Background(), adaptors.Event{Source: "chat", Text: "山田"})
	}()
	s := waitPaused(t, d)
	if s.Why != "breakpoint 1: entering 確認" || s.Globals["guest"] != "山田" || !slices.Contains(s.Active, "確認") {
		t.Fatalf("paused: %+v", s)
	}
	ctx := context.Background()
	if err := d.Set(ctx, "guest", `"田中"`); err != nil {
		t.Fatal(err)
	}
	if err := d.Set(ctx, "_event", `1`); err == nil {
		t.Error("a system variable was set")
	}
	if err := d.Send(ctx, "chat", "はい"); err != nil {
		t.Fatal(err)
	}
	if err := d.Send(ctx, "gui", "x"); err == nil {
		t.Error("a document was sent a widget's event")
	}
	if err := d.Clear(0); err != nil {
		t.Fatal(err)
	}
	if err := d.Continue(); err != nil {
		t.Fatal(err)
	}
	if err := <-delivered; err != nil {
		t.Fatal(err)
	}
	h.settle()
	if diff := cmp.Diff([]string{"chat:田中様"}, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

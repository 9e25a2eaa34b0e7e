package interpreter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"
)

func lifecycle(name, extra string) string {
	return `<state name="` + name + `"><onentry>` + msg("entry "+name) + `</onentry><onexit>` + msg("exit "+name) + `</onexit>` + extra + `</state>` + "\n"
}

func TestTransitionOrder(t *testing.T) {
	// §7: onexit of A, B current, timer, onentry of B; onentry of the initial
	// state without any onexit.
	h := start(t, doc("",
		lifecycle("a", rule("", "<key>go</key>"+msg("before")+"<statetransition>b</statetransition>"+msg("never")))+
			lifecycle("b", rule("", "<key>self</key><statetransition>b</statetransition>"))))
	want := []string{"lua:open", "general", "adaptors:open", "enter:a", "send:chat:entry a"}
	if diff := cmp.Diff(want, h.take()); diff != "" {
		t.Errorf("start-up (-want +got):\n%s", diff)
	}
	h.event("chat", "go")
	want = []string{"fire:t.seatml:7", "send:chat:before", "exit:a", "send:chat:exit a", "enter:b", "send:chat:entry b"}
	if diff := cmp.Diff(want, h.take()); diff != "" {
		t.Errorf("a -> b (-want +got):\n%s", diff)
	}
	h.event("chat", "self")
	want = []string{"fire:t.seatml:9", "exit:b", "send:chat:exit b", "enter:b", "send:chat:entry b"}
	if diff := cmp.Diff(want, h.take()); diff != "" {
		t.Errorf("self-transition (-want +got):\n%s", diff)
	}
}

func TestStartState(t *testing.T) {
	h := start(t, doc("", lifecycle("first", "")+lifecycle("start", "")))
	if got := h.state(); got != "start" {
		t.Errorf("initial state = %q, want start", got)
	}
}

func TestOnEntryTransitionChains(t *testing.T) {
	h := start(t, doc("", `<state name="a"><onentry><statetransition>b</statetransition></onentry></state>
<state name="b"><onentry><statetransition>c</statetransition></onentry></state>
<state name="c"><onentry>`+msg("in c")+`</onentry></state>`))
	want := []string{"lua:open", "general", "adaptors:open", "enter:a", "exit:a", "enter:b", "exit:b", "enter:c", "send:chat:in c"}
	if diff := cmp.Diff(want, h.take()); diff != "" {
		t.Error(diff)
	}
}

func TestTransitionLoopIsCut(t *testing.T) {
	h := start(t, doc("", `<state name="a"><onentry><statetransition>b</statetransition></onentry></state>
<state name="b"><onentry><statetransition>a</statetransition></onentry></state>`))
	h.sync()
	found := false
	for _, l := range h.logged(zapcore.ErrorLevel) {
		if l == "transition chain cut" {
			found = true
		}
	}
	if !found {
		t.Errorf("no 'transition chain cut' error; logs %q", h.logged(zapcore.ErrorLevel))
	}
	if n := len(h.take()); n > 2+2*maxChain+2 {
		t.Errorf("trace has %d entries; the chain was not cut at %d", n, maxChain)
	}
}

func TestPushPop(t *testing.T) {
	h := start(t, doc("",
		lifecycle("a", rule("", `<key>help</key><statetransition func="push">help</statetransition>`)+
			rule("", `<key>pop</key><statetransition func="pop"/>`))+
			lifecycle("b", rule("", `<key>help</key><statetransition func="push">help</statetransition>`))+
			lifecycle("help", rule("", `<key>done</key><statetransition func="pop"/>`)+
				rule("", `<key>goto b</key><statetransition>b</statetransition>`))))
	h.event("chat", "help")
	h.event("chat", "goto b")
	h.event("chat", "help")
	h.event("chat", "done")
	if got := h.state(); got != "b" {
		t.Fatalf("after push from b and pop: state %q, want b", got)
	}
	h.take()
	// The stack still holds a: pop goes back there.
	h.event("chat", "help")
	h.event("chat", "done")
	if got := h.state(); got != "b" {
		t.Fatalf("state %q, want b", got)
	}
	var depth int
	_ = h.m.Sync(t.Context(), func() { depth = len(h.m.b.(*seatmlBehavior).stack) })
	if depth != 1 {
		t.Errorf("stack depth %d, want 1 (state a)", depth)
	}
}

func TestPopOnEmptyStackStays(t *testing.T) {
	h := start(t, doc("", lifecycle("a", rule("", `<key>pop</key><statetransition func="pop"/>`))))
	h.take()
	h.event("chat", "pop")
	if diff := cmp.Diff([]string{"fire:t.seatml:7"}, h.take()); diff != "" {
		t.Errorf("pop on an empty stack moved (-want +got):\n%s", diff)
	}
	if got := h.logged(zapcore.WarnLevel); len(got) != 1 || got[0] != "pop on an empty state stack; staying" {
		t.Errorf("warnings = %q", got)
	}
}

func TestLuaTransitionRequests(t *testing.T) {
	h := start(t, doc("", lifecycle("a",
		rule("", `<key>lua</key><script>seat.transition("b")</script>`+msg("list goes on"))+
			rule("", `<key>last</key><script>seat.transition("b"); seat.transition("c")</script>`)+
			rule("", `<key>both</key><script>seat.transition("c")</script><statetransition>b</statetransition>`)+
			rule("", `<key>unknown</key><script sendto="chat">return tostring(seat.transition("nowhere"))</script>`))+
		lifecycle("b", rule("", `<key>back</key><statetransition>a</statetransition>`))+
		lifecycle("c", rule("", `<key>back</key><statetransition>a</statetransition>`))))
	h.take()
	h.event("chat", "lua")
	want := []string{"fire:t.seatml:7", "send:chat:list goes on", "exit:a", "send:chat:exit a", "enter:b", "send:chat:entry b"}
	if diff := cmp.Diff(want, h.take()); diff != "" {
		t.Errorf("seat.transition runs when the list ends (-want +got):\n%s", diff)
	}
	h.event("chat", "back")
	h.event("chat", "last")
	if got := h.state(); got != "c" {
		t.Errorf("the last request wins: state %q, want c", got)
	}
	h.event("chat", "back")
	h.event("chat", "both")
	if got := h.state(); got != "b" {
		t.Errorf("statetransition takes precedence: state %q, want b", got)
	}
	h.event("chat", "back")
	h.take()
	h.event("chat", "unknown")
	if diff := cmp.Diff([]string{"fire:t.seatml:10", "send:chat:false"}, h.take()); diff != "" {
		t.Errorf("unknown runtime transition is refused (-want +got):\n%s", diff)
	}
	if got := h.state(); got != "a" {
		t.Errorf("machine moved to %q on an unknown transition", got)
	}
	errs := h.logged(zapcore.ErrorLevel)
	if len(errs) != 1 || errs[0] != "transition to an unknown state refused; staying" {
		t.Errorf("errors = %q", errs)
	}
}

func TestTransitionInOnExitIsRefused(t *testing.T) {
	h := start(t, doc("", `<state name="a"><onexit><script>seat.transition("c")</script></onexit>`+rule("", "<key>go</key><statetransition>b</statetransition>")+`</state>
<state name="b"/><state name="c"/>`))
	h.event("chat", "go")
	if got := h.state(); got != "b" {
		t.Errorf("state %q, want b", got)
	}
}

func TestTimeoutFiresRepeatsAndResets(t *testing.T) {
	h := start(t, doc(`<ontimeout timeout="5">`+msg("general timeout")+`</ontimeout>`,
		`<state name="a"><ontimeout timeout="2.5">`+msg("a timeout")+`</ontimeout>`+
			rule("", "<key>ping</key>"+msg("pong"))+
			rule("", "<key>go</key><statetransition>b</statetransition>")+`</state>
<state name="b"/>`))
	h.take()
	h.advance(2499 * time.Millisecond)
	if got := h.sends(); len(got) != 0 {
		t.Fatalf("fired early: %q", got)
	}
	h.advance(time.Millisecond)
	if diff := cmp.Diff([]string{"chat:a timeout"}, h.sends()); diff != "" {
		t.Fatalf("at 2.5 s (-want +got):\n%s", diff)
	}
	// Repeats every 2.5 s of silence.
	h.advance(2500 * time.Millisecond)
	if diff := cmp.Diff([]string{"chat:a timeout"}, h.sends()); diff != "" {
		t.Fatalf("repeat (-want +got):\n%s", diff)
	}
	// A fired rule restarts it; an unmatched event does not.
	h.advance(2 * time.Second)
	h.event("chat", "ping")
	h.advance(2 * time.Second)
	if diff := cmp.Diff([]string{"chat:pong"}, h.sends()); diff != "" {
		t.Fatalf("after ping (-want +got):\n%s", diff)
	}
	h.event("chat", "unmatched")
	h.advance(500 * time.Millisecond)
	if diff := cmp.Diff([]string{"chat:a timeout"}, h.sends()); diff != "" {
		t.Fatalf("unmatched events do not reset (-want +got):\n%s", diff)
	}
	// State b has none of its own: general's applies.
	h.event("chat", "go")
	h.take()
	h.advance(5 * time.Second)
	if diff := cmp.Diff([]string{"chat:general timeout"}, h.sends()); diff != "" {
		t.Fatalf("general timeout (-want +got):\n%s", diff)
	}
}

func TestTimeoutTransitionAndSeatTimeout(t *testing.T) {
	h := start(t, doc("",
		`<state name="a"><onentry><script>seat.timeout(0.1)</script></onentry><ontimeout timeout="60"><statetransition>b</statetransition></ontimeout></state>
<state name="b"><ontimeout timeout="1">`+msg("b timeout")+`<script>seat.timeout(0)</script></ontimeout></state>`))
	h.advance(99 * time.Millisecond)
	if got := h.state(); got != "a" {
		t.Fatalf("state %q before 100 ms", got)
	}
	h.advance(time.Millisecond)
	if got := h.state(); got != "b" {
		t.Fatalf("state %q after 100 ms, want b", got)
	}
	h.take()
	h.advance(time.Second)
	h.advance(10 * time.Second)
	if diff := cmp.Diff([]string{"chat:b timeout"}, h.sends()); diff != "" {
		t.Errorf("seat.timeout(0) disarms (-want +got):\n%s", diff)
	}
}

func TestOnExecAtRate(t *testing.T) {
	h2 := start(t, `<?xml version="1.0"?>
<seatml><general name="r" rate="4"><adaptor name="chat" type="socket" role="server" port="0"/><onexec>`+msg("g")+`</onexec></general>
<state name="a"><onexec><script>ticks = (ticks or 0) + 1; if ticks == 3 then seat.transition("b") end</script>`+msg("a")+`</onexec></state>
<state name="b"/></seatml>`)
	h2.take()
	h2.advance(249 * time.Millisecond)
	if got := h2.sends(); len(got) != 0 {
		t.Fatalf("ticked before 1/rate: %q", got)
	}
	h2.advance(time.Millisecond)
	if diff := cmp.Diff([]string{"chat:a", "chat:g"}, h2.sends()); diff != "" {
		t.Fatalf("first tick: state's then general's (-want +got):\n%s", diff)
	}
	h2.advance(250 * time.Millisecond)
	h2.advance(250 * time.Millisecond) // third tick: transition in the state's list, general's still runs
	if diff := cmp.Diff([]string{"chat:a", "chat:g", "chat:a", "chat:g"}, h2.sends()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// Missed ticks are dropped, not queued.
	h2.advance(10 * time.Second)
	if diff := cmp.Diff([]string{"chat:g"}, h2.sends()); diff != "" {
		t.Fatalf("after a 10 s gap (-want +got):\n%s", diff)
	}
}

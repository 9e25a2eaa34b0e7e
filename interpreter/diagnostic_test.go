package interpreter

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors"
)

// problems is an observer that chooses error records (and kinds, if
// set).
type problems struct {
	mu    sync.Mutex
	kinds KindSet
	got   []*Problem
	told  []RecordKind
}

func (p *problems) Observe(r Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.told = append(p.told, r.Kind)
	if r.Kind == RecError {
		p.got = append(p.got, r.Problem)
	}
}

func (p *problems) Kinds() KindSet { return Kinds(RecError) | p.kinds }

// TestRunTimeErrorsAreDiagnostics: a failed script, cond or operand is an
// error record whose diagnostic has the place and message the log gives,
// and the failing line of code with a caret under the culprit the
// explanation named (a global, a local, an operand), or none when no
// culprit is known; an observer that chooses errors is told of nothing
// else.
func TestRunTimeErrorsAreDiagnostics(t *testing.T) {
	obs := &problems{}
	h := start(t, doc(``, `<state name="s">`+
		rule("", `<key>a</key><script>
local greeting = "こんにちは"
seat.send("chat", greeting); greet_guest(greeting)</script>`)+
		rule("", `<key>b</key><script>local who; seat.send("chat", "やあ " .. who)</script>`)+
		rule("", `<key>c</key><cond>no_such_count > 1</cond><script>seat.send("chat", "x")</script>`)+
		rule("", `<key>d</key><script>error("止まれ")</script>`)+
		`</state>`), func(o *Options) { o.Observer = obs })
	for _, k := range []string{"a", "b", "c", "d"} {
		h.event("chat", k)
	}
	var got []string
	for _, p := range obs.got {
		got = append(got, p.What+": "+p.Diagnostic.Text())
	}
	want := []string{
		"script failed: t.seatml:9: attempt to call greet_guest, which is nil (a global not defined when this ran; check its spelling)\n" +
			"    9 | seat.send(\"chat\", greeting); greet_guest(greeting)\n" +
			"      |                              ^",
		"script failed: t.seatml:10: who is nil, in `..` (cannot perform concat operation between string and nil)\n" +
			"    10 | local who; seat.send(\"chat\", \"やあ \" .. who)\n" +
			"       |                                         ^",
		// Lua names the line of the "return (" seat puts above a cond:
		// the error is placed on the cond's own line.
		"cond failed: t.seatml:11: attempt to compare number with nil\n" +
			"    11 | no_such_count > 1",
		"script failed: t.seatml:12: 止まれ\n" +
			"    12 | error(\"止まれ\")",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The log says each as its diagnostic's first line, with the code.
	for i, e := range h.logs.FilterMessageSnippet("failed").All() {
		if i < len(obs.got) {
			if c := e.ContextMap(); c["error"] != obs.got[i].Text() || c["code"] == nil || !strings.Contains(obs.got[i].Diagnostic.Detail, c["code"].(string)) {
				t.Errorf("log line %d: %v, want the error %q and its code", i, c, obs.got[i].Text())
			}
		}
	}
	for _, k := range obs.told {
		if k != RecError {
			t.Errorf("told of a %q record: it chose errors only", k)
		}
	}
}

// TestAChooserAloneIsToldOnlyItsKinds: an observer that chooses error
// and connect records, alone on a machine (no trace, a log that writes
// nothing), is told of the error and of nothing else while events (of
// the kind "in", beside "connect"), rules, messages and states go by: a
// machine makes a record only for a kind wanted.
func TestAChooserAloneIsToldOnlyItsKinds(t *testing.T) {
	obs := &problems{kinds: Kinds(RecConnect)}
	h := start(t, doc(``, `<state name="s">`+
		rule("", `<key>a</key><message sendto="chat">はい</message><statetransition>t</statetransition>`)+
		`</state><state name="t">`+rule("", `<key>b</key><script>nosuch()</script>`)+`</state>`),
		func(o *Options) { o.Observer, o.Trace, o.Log = obs, nil, zap.NewNop() })
	h.event("chat", "a")
	h.event("chat", "b")
	if diff := cmp.Diff([]RecordKind{RecError}, obs.told); diff != "" {
		t.Errorf("told of (-want +got):\n%s", diff)
	}
}

// TestCondErrorInACalledFunctionKeepsItsLine: a cond that calls a
// function defined in the general script, which fails on its own line,
// is placed where the function failed (t.seatml:8), as at 64359e1, not
// clamped onto the cond's line (where the explanation then blames the
// wrong global).
func TestCondErrorInACalledFunctionKeepsItsLine(t *testing.T) {
	obs := &problems{}
	h := start(t, doc(`<script>function check()
local v = nil
return v.x == 1
end</script>
`, `<state name="s">`+
		rule("", `<key>a</key><cond>check()</cond>`+msg("yes"))+
		`</state>`), func(o *Options) { o.Observer = obs })
	h.event("chat", "a")
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.got) != 1 {
		t.Fatalf("got %d problems, want 1", len(obs.got))
	}
	if got := obs.got[0].Text(); !strings.HasPrefix(got, "t.seatml:8: ") {
		t.Errorf("cond failed: %q\nwant it placed at t.seatml:8, the line of check() that failed", got)
	}
}

// TestErrorLevelLogStillLogsScriptFailures: a log at the error level
// (seat run --log-level error) writes "script failed" lines, which are
// errors, as it did at 64359e1.
func TestErrorLevelLogStillLogsScriptFailures(t *testing.T) {
	core, logs := observer.New(zapcore.ErrorLevel)
	h := start(t, doc(``, `<state name="s">`+rule("", `<key>a</key><script>nosuch()</script>`)+`</state>`),
		func(o *Options) { o.Log, o.Trace = zap.New(core), nil })
	h.event("chat", "a")
	if n := logs.FilterMessage("script failed").Len(); n != 1 {
		t.Errorf("logged %d \"script failed\" lines at the error level, want 1; all: %v", n, logs.All())
	}
}

// TestAChooserOfFiresHearsWidgetFires: an observer that chooses
// fire records (and not cut) is told of a widget's actions firing; the
// machine asked for kCut before making that fire record.
func TestAChooserOfFiresHearsWidgetFires(t *testing.T) {
	obs := &problems{kinds: Kinds(RecFire)}
	h := start(t, doc(``, `<state name="s"><button label="OK">`+msg("clicked")+`</button></state>`),
		func(o *Options) { o.Observer, o.Trace, o.Log = obs, nil, zap.NewNop() })
	h.gui("OK", "")
	obs.mu.Lock()
	defer obs.mu.Unlock()
	fires := 0
	for _, k := range obs.told {
		if k == RecFire {
			fires++
		}
	}
	if fires != 1 {
		t.Errorf("told of %v, want one fire (the button's actions)", obs.told)
	}
}

// TestInvokedErrorIsNotPlacedInTheParentsState: an error event of
// an invoked document (its <script> fails in its state 子) is the child's:
// its record and log line name the invoked session and its document, and
// do not say the parent's state 親 as the state the error happened in.
func TestInvokedErrorIsNotPlacedInTheParentsState(t *testing.T) {
	obs := &problems{}
	h := startSCXML(t, scxmlDoc("親", `
<state id="親">
  <invoke id="kid"><content><scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" initial="子">
    <state id="子"><onentry><script>local q = nil; q.x = 1</script></onentry></state></scxml></content></invoke>
</state>
`), func(o *Options) { o.Observer = obs })
	h.settle()
	h.eventually("the child's error", func() bool { obs.mu.Lock(); defer obs.mu.Unlock(); return len(obs.got) > 0 })
	for _, e := range h.logs.FilterMessage("error event").All() {
		c := e.ContextMap()
		if c["invoked"] == nil {
			t.Errorf("the child's error line names no invoked session: %v", c)
		}
		if c["state"] == "親" {
			t.Errorf("the child's error line says the parent's state: %v", c)
		}
	}
}

// TestAChooserOfCutsHearsACut: an observer that chooses cut records
// (and not fire) is told that seat's stopping cut a script short; the
// machine asked for kFire before making that cut record.
func TestAChooserOfCutsHearsACut(t *testing.T) {
	obs := &problems{kinds: Kinds(RecCut)}
	stopping, stop := context.WithCancel(context.Background())
	defer stop()
	core, logs := observer.New(zapcore.InfoLevel)
	h := start(t, doc(``, `<state name="s">`+rule("", `<key>a</key><script>seat.log("info", "回っています"); while true do end</script>`)+`</state>`),
		func(o *Options) {
			o.Observer, o.Trace, o.Log, o.ScriptTimeout, o.Stopping = obs, nil, zap.New(core), time.Minute, stopping
		})
	go h.m.Deliver(context.Background(), adaptors.Event{Source: "chat", Text: "a"})
	for deadline := time.Now().Add(10 * time.Second); logs.FilterMessage("回っています").Len() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // the machine is busy: no Sync to wait on
			t.Fatal("the script did not start within 10 s")
		}
	}
	stop() // seat is stopping: the script is cut short
	h.stop()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if !slices.Contains(obs.told, RecCut) {
		t.Errorf("told of %v, want a cut", obs.told)
	}
}

// TestTheRightOperandIsSeen: in `s .. nope`, the left operand's match took
// the operator, so the right operand, the nil global, was never looked at
// and the local s was blamed; both are looked at now, and the caret is
// under the culprit.
func TestTheRightOperandIsSeen(t *testing.T) {
	obs := &problems{}
	h := start(t, doc(``, `<state name="s">`+rule("", `<key>a</key><script>local s = "あ"; s = s .. nope_nil</script>`)+`</state>`),
		func(o *Options) { o.Observer = obs })
	h.event("chat", "a")
	obs.mu.Lock()
	defer obs.mu.Unlock()
	want := "t.seatml:7: nope_nil is nil (a global not defined when this ran; check its spelling), in `..`\n" +
		"    7 | local s = \"あ\"; s = s .. nope_nil\n" +
		"      | " + strings.Repeat(" ", 25) + "^"
	if len(obs.got) != 1 || obs.got[0].Diagnostic.Text() != want {
		t.Errorf("got %v, want\n%s", obs.got, want)
	}
}

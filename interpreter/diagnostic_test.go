package interpreter

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
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

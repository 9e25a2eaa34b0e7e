package scxml

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seatml/seat/interpreter/statechart"
)

// runText runs a document given as text on a fresh system's virtual
// clock and returns the session and the errors it logged.
func runText(t *testing.T, text string, setup func(*System)) (*Session, []string) {
	t.Helper()
	s, logs := runLogged(t, text, setup)
	var errs []string
	for _, l := range logs {
		if text, ok := strings.CutPrefix(l, "error: "); ok {
			errs = append(errs, text)
		}
	}
	return s, errs
}

// loadText writes a document into a directory of its own and loads it.
func loadText(t *testing.T, name, text string) *Document {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, diags := Load(file)
	if doc == nil {
		t.Fatalf("load: %v", diags.Err())
	}
	return doc
}

// runLogged runs a document as runText does and returns every line it
// logged, as "label: text".
func runLogged(t *testing.T, text string, setup func(*System)) (*Session, []string) {
	t.Helper()
	doc := loadText(t, "doc.scxml", text)
	sys := NewSystem()
	var logs []string
	sys.Log = func(s *Session, label, text string) { logs = append(logs, label+": "+text) }
	if setup != nil {
		setup(sys)
	}
	s := sys.Start(doc)
	if err := sys.Run(s, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return s, logs
}

// TestRunawayScriptStops: a script that never ends is stopped at the
// script time limit and raises error.execution; the document goes on.
func TestRunawayScriptStops(t *testing.T) {
	s, errs := runText(t, `<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua">
  <state id="s">
    <onentry><script>while true do end</script></onentry>
    <transition event="error.execution" target="pass"/>
  </state>
  <final id="pass"/>
</scxml>`, func(sys *System) { sys.ScriptTimeout = 50 * time.Millisecond })
	if s.Final != "pass" || len(errs) != 1 || !strings.Contains(errs[0], "time limit of 50ms") {
		t.Errorf("final %q, errors %q", s.Final, errs)
	}
}

const head = `<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua"`

// TestSlowEventlessLoopStops: an eventless transition whose cond the
// script limit stops each time would keep one macrostep going without
// end (each error.execution makes the transitions be selected again);
// the macrostep limit ends the session instead.
func TestSlowEventlessLoopStops(t *testing.T) {
	s, errs := runText(t, head+`>
  <state id="待つ">
    <transition cond="(function() while true do end end)()" target="先"/>
  </state>
  <final id="先"/>
</scxml>`, func(sys *System) { sys.ScriptTimeout, sys.MacrostepTimeout = 20*time.Millisecond, 300*time.Millisecond })
	if !s.Ended() || s.Final != "" || len(errs) == 0 || !strings.Contains(errs[len(errs)-1], "the macrostep ran longer than 300ms: eventless transitions, raised events or the error events they caused kept it going (the longest Lua call, at ") ||
		!strings.Contains(errs[len(errs)-1], `microsteps, none took a transition, in state "待つ"`) || !strings.Contains(s.StopCause, "doc.scxml: ") {
		t.Errorf("ended %v in %q, errors %q, stopped by %q", s.Ended(), s.Final, errs, s.StopCause)
	}
}

// TestRaiseLoopSaysWhere: a macrostep that raises events without end is
// stopped with an error placed at the last transition it took, naming
// that transition's state, the event and the state it led to. Before,
// "the machine did not settle: too many microsteps in one macrostep"
// named nothing.
func TestRaiseLoopSaysWhere(t *testing.T) {
	s, errs := runText(t, head+` initial="回る">
  <state id="回る">
    <onentry><raise event="また"/></onentry>
    <transition event="また" target="回る"/>
  </state>
</scxml>`, nil)
	want := `doc.scxml:4:5: the machine did not settle: too many microsteps in one macrostep (100000): the last took a transition of "回る" on the event "また", into state "回る"`
	if !s.Ended() || len(errs) != 1 || !strings.HasPrefix(errs[0], "error.execution: ") || !strings.HasSuffix(errs[0], want) || !strings.HasSuffix(s.StopCause, want) {
		t.Errorf("ended %v, errors %q, stopped by %q; want %q", s.Ended(), errs, s.StopCause, want)
	}
}

// TestSlowScriptInAMacrostepIsNamed: when one script takes most of a
// macrostep that runs over its time, the error says which (its place
// and text) and for how long, instead of blaming eventless transitions
// or raised events (before: "its eventless transitions or raised events
// kept it going", for a macrostep of two microsteps).
func TestSlowScriptInAMacrostepIsNamed(t *testing.T) {
	s, errs := runText(t, head+` initial="待つ">
  <state id="待つ">
    <onentry><raise event="遅い"/></onentry>
    <transition event="遅い" target="次"><script>local t = os.clock() while os.clock() - t &lt; 0.4 do end</script></transition>
  </state>
  <state id="次"><transition target="終"/></state>
  <final id="終"/>
</scxml>`, func(sys *System) { sys.ScriptTimeout, sys.MacrostepTimeout = 5*time.Second, 200*time.Millisecond })
	want := `doc.scxml:4:5: the macrostep ran longer than 200ms: the Lua at `
	if !s.Ended() || s.Final != "" || len(errs) != 1 || !strings.Contains(errs[0], want) || !strings.Contains(errs[0], `doc.scxml:4:47 ("local t = os.clock()`) || !strings.Contains(errs[0], `was running for `) ||
		!strings.Contains(errs[0], `; 1 microstep: the last took a transition of "待つ" on the event "遅い", into state "次"`) {
		t.Errorf("ended %v in %q, errors %q; want %q…", s.Ended(), s.Final, errs, want)
	}
}

// TestSendLoopWithoutDelay: sessions that keep sending events with no
// delay never let the virtual clock advance; Run says so instead of
// running forever.
func TestSendLoopWithoutDelay(t *testing.T) {
	doc := loadText(t, "loop.scxml", head+`>
  <state id="回る">
    <onentry><send event="もう一度"/></onentry>
    <transition event="もう一度" target="回る"/>
  </state>
</scxml>`)
	sys := NewSystem()
	sys.instant = 1000
	if err := sys.Run(sys.Start(doc), time.Second); !errors.Is(err, ErrNoProgress) {
		t.Errorf("Run returned %v; want ErrNoProgress", err)
	}
}

// TestDelayedSendErrorIsHandledAtOnce: a delayed send that fails when it
// fires raises error.communication, which is handled then, not when some
// later event arrives.
func TestDelayedSendErrorIsHandledAtOnce(t *testing.T) {
	s, _ := runText(t, head+`>
  <state id="送信">
    <onentry><send event="届かない" target="#_scxml_nosuchsession" delay="1s"/></onentry>
    <transition event="error.communication" target="合格"/>
  </state>
  <final id="合格"/>
</scxml>`, nil)
	if s.Final != "合格" {
		t.Errorf("ended %v in %q; want 合格", s.Ended(), s.Final)
	}
}

// TestCancelledInvocationIsNotHeard: once the parent leaves the state
// that invoked a child, the events the child had already sent are
// dropped, not delivered (SCXML 6.4.3).
func TestCancelledInvocationIsNotHeard(t *testing.T) {
	s, _ := runText(t, head+`>
  <state id="呼ぶ">
    <invoke id="子">
      <content>
        <scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua">
          <state id="子の状態">
            <onentry><send target="#_parent" event="一"/><send target="#_parent" event="二"/></onentry>
          </state>
        </scxml>
      </content>
    </invoke>
    <transition event="一" target="聞かない"/>
  </state>
  <state id="聞かない">
    <onentry><send event="終わり" delay="1s"/></onentry>
    <transition event="二" target="不合格"/>
    <transition event="終わり" target="合格"/>
  </state>
  <final id="合格"/>
  <final id="不合格"/>
</scxml>`, nil)
	if s.Final != "合格" {
		t.Errorf("ended in %q; want 合格", s.Final)
	}
}

// TestInvokeRecursionIsBounded: a document that invokes itself gets
// error.execution at the depth bound instead of running out of memory.
func TestInvokeRecursionIsBounded(t *testing.T) {
	doc := loadText(t, "self.scxml", head+`>
  <state id="自分">
    <invoke src="self.scxml"/>
    <transition event="error.execution" target="深すぎ">
      <send target="#_parent" event="深すぎ"/>
    </transition>
    <transition event="深すぎ" target="深すぎ"><send target="#_parent" event="深すぎ"/></transition>
  </state>
  <final id="深すぎ"/>
</scxml>`)
	sys := NewSystem()
	var errs []string
	sys.Log = func(s *Session, label, text string) {
		if label == "error" {
			errs = append(errs, text)
		}
	}
	s := sys.Start(doc)
	if err := sys.Run(s, time.Second); err != nil {
		t.Fatal(err)
	}
	// The deepest session could not invoke; the top one, sending the news
	// on, has no parent to send it to.
	if s.Final != "深すぎ" || len(errs) != 2 || !strings.Contains(errs[0], "invocations nest more than 64 deep") {
		t.Errorf("ended in %q, errors %q", s.Final, errs)
	}
}

// TestPrintGoesToTheLog: print in a document's script is a log line, not
// output on the standard output an adaptor may own.
func TestPrintGoesToTheLog(t *testing.T) {
	_, logs := runLogged(t, head+`>
  <state id="s"><onentry><script>print("こんにちは", 1, nil)</script></onentry></state>
</scxml>`, nil)
	if len(logs) != 1 || logs[0] != "print: こんにちは\t1\tnil" {
		t.Errorf("logged %q", logs)
	}
}

// TestEventDataThatWouldNotEnd: a namelist variable holding a table that
// contains itself is error.execution, not a hang.
func TestEventDataThatWouldNotEnd(t *testing.T) {
	s, errs := runText(t, head+`>
  <datamodel><data id="t" expr="{}"/></datamodel>
  <state id="s">
    <onentry><script>t["自分"] = t</script><send event="e" namelist="t"/></onentry>
    <transition event="error.execution" target="合格"/>
    <transition event="e" target="不合格"/>
  </state>
  <final id="合格"/><final id="不合格"/>
</scxml>`, nil)
	if s.Final != "合格" || len(errs) != 1 || !strings.Contains(errs[0], "namelist t: the value is a table that contains itself") {
		t.Errorf("ended in %q, errors %q", s.Final, errs)
	}
}

// TestInvokeFanOutIsBounded: a document that invokes itself twice at each
// level would start 2^64 sessions; the bound on invoked sessions stops it
// with error.execution, and every session ends when the top one does.
func TestInvokeFanOutIsBounded(t *testing.T) {
	doc := loadText(t, "twice.scxml", head+`>
  <state id="二つ">
    <onentry><send event="時間" delay="1s"/></onentry>
    <invoke src="twice.scxml"/><invoke src="twice.scxml"/>
    <transition event="時間" target="終"/>
  </state>
  <final id="終"/>
</scxml>`)
	sys := NewSystem()
	most, refused := 0, 0
	sys.Log = func(s *Session, label, text string) {
		most = max(most, sys.invoked)
		if label == "error" && strings.Contains(text, "1000 invoked sessions already run") {
			refused++
		}
	}
	s := sys.Start(doc)
	if err := sys.Run(s, time.Second); err != nil {
		t.Fatal(err)
	}
	if s.Final != "終" || most != MaxInvoked || refused == 0 {
		t.Errorf("ended in %q, at most %d invoked, %d refused", s.Final, most, refused)
	}
	if sys.invoked != 0 || len(sys.sessions) != 0 {
		t.Errorf("%d invoked sessions, %d sessions left", sys.invoked, len(sys.sessions))
	}
}

// TestDataTextIsData: <data> text is JSON or a Lua literal, else text; it
// is never run as code (before, "x" copied the variable x and a call ran).
func TestDataTextIsData(t *testing.T) {
	_, logs := runLogged(t, head+`>
  <datamodel>
    <data id="x" expr="'秘密'"/>
    <data id="copy">x</data>
    <data id="call">os.time()</data>
    <data id="obj">{"名前": "花子", "好き": [1, 2]}</data>
    <data id="lit">{1, 2, k = "値"}</data>
    <data id="neg"> -3 </data>
    <data id="words">こんにちは 世界</data>
  </datamodel>
  <state id="s"><onentry>
    <log label="copy" expr="type(copy) .. ' ' .. copy"/>
    <log label="call" expr="type(call) .. ' ' .. call"/>
    <log label="obj" expr="obj['名前'] .. ' ' .. #obj['好き']"/>
    <log label="lit" expr="#lit .. ' ' .. lit.k"/>
    <log label="neg" expr="type(neg) .. ' ' .. neg"/>
    <log label="words" expr="words"/>
  </onentry></state>
</scxml>`, nil)
	want := []string{"copy: string x", "call: string os.time()", "obj: 花子 2", "lit: 2 値", "neg: number -3", "words: こんにちは 世界"}
	if strings.Join(logs, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged\n%s\nwant\n%s", strings.Join(logs, "\n"), strings.Join(want, "\n"))
	}
}

// TestForeignElementsAreIgnored: elements of another namespace are
// another tool's: they neither run nor become states (before, <r:log>
// ran and <r:final> was a final state).
func TestForeignElementsAreIgnored(t *testing.T) {
	s, logs := runLogged(t, `<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:r="urn:robot" version="1.0" datamodel="lua" initial="a">
  <state id="a">
    <onentry><r:log expr="'foreign'"/><r:raise event="go"/><log label="own" expr="'scxml'"/></onentry>
    <transition event="go" target="b"/>
    <r:final id="b"/>
  </state>
  <final id="b"/>
</scxml>`, nil)
	if s.Ended() || len(logs) != 1 || logs[0] != "own: scxml" {
		t.Errorf("ended %v in %q, logged %q; want it waiting in a, one log", s.Ended(), s.Final, logs)
	}
}

// TestForeachCannotAssignSystemVariables: <foreach item> naming a system
// variable is error.execution, as <assign> to one is.
func TestForeachCannotAssignSystemVariables(t *testing.T) {
	s, errs := runText(t, head+`>
  <state id="s">
    <onentry><foreach array="{1, 2}" item="_sessionid" index="i"><log expr="'ran'"/></foreach></onentry>
    <transition event="error.execution" cond="_sessionid ~= 2" target="合格"/>
  </state>
  <final id="合格"/>
</scxml>`, nil)
	if s.Final != "合格" || len(errs) != 1 || !strings.Contains(errs[0], "_sessionid is a system variable") {
		t.Errorf("ended in %q, errors %q", s.Final, errs)
	}
}

// TestSendValuesMustBeStrings: an eventexpr or delayexpr that is not a
// string (or number) is error.execution naming the expression's place,
// not an event named "" or a send with no delay.
func TestSendValuesMustBeStrings(t *testing.T) {
	for _, send := range []string{`<send eventexpr="{}"/>`, `<send eventexpr="nil"/>`, `<send event="e" delayexpr="{}"/>`, `<send event="e" delayexpr="true"/>`} {
		s, errs := runText(t, head+`>
  <state id="s">
    <onentry>`+send+`</onentry>
    <transition event="error.execution" target="合格"/>
    <transition event="*" target="不合格"/>
  </state>
  <final id="合格"/><final id="不合格"/>
</scxml>`, nil)
		if s.Final != "合格" || len(errs) != 1 || !strings.Contains(errs[0], "doc.scxml:3:") || !strings.Contains(errs[0], "not a string") {
			t.Errorf("%s: ended in %q, errors %q", send, s.Final, errs)
		}
	}
}

// TestRunTimeErrorsArePlaced: errors that are not Lua's name the element
// too: a send to a session that does not exist, an unknown send type.
func TestRunTimeErrorsArePlaced(t *testing.T) {
	_, errs := runText(t, head+`>
  <state id="s">
    <onentry><send event="e" target="#_scxml_nope"/></onentry>
    <onentry><send event="e" type="http://unknown"/></onentry>
  </state>
</scxml>`, nil)
	if len(errs) != 2 || !strings.Contains(errs[0], "doc.scxml:3:14: <send> to #_scxml_nope") || !strings.Contains(errs[1], "doc.scxml:4:14: <send> type") {
		t.Errorf("errors %q", errs)
	}
}

// TestEventIsReadOnlyAndPerEvent: _event (made only when a script reads
// it) is each event's own, nil before the first, and a script that
// assigns it raises error.execution.
func TestEventIsReadOnlyAndPerEvent(t *testing.T) {
	s, errs := runText(t, head+`>
  <datamodel><data id="before" expr="_event == nil"/><data id="seen" expr="''"/></datamodel>
  <state id="s">
    <onentry><raise event="一"/><raise event="二"/></onentry>
    <transition event="一"><script>seen = seen .. _event.name</script></transition>
    <transition event="二" target="t"><script>seen = seen .. _event.name</script></transition>
  </state>
  <state id="t">
    <onentry><script>_event = {name = "偽"}</script></onentry>
    <transition event="error.execution" cond="before and seen == '一二' and _event.name == 'error.execution'" target="合格"/>
    <transition event="*" target="不合格"/>
  </state>
  <final id="合格"/><final id="不合格"/>
</scxml>`, nil)
	if s.Final != "合格" || len(errs) != 1 || !strings.Contains(errs[0], "_event is a system variable and cannot be assigned") {
		t.Errorf("ended in %q, errors %q", s.Final, errs)
	}
}

// TestDelayedSendsAreBounded: a document in which each event sends two
// delayed events doubles what waits every millisecond; past MaxDelayed
// waiting, a <send delay> raises error.communication, and one error line
// (not one per refused <send>) names the <send>'s place. Before, what
// waited grew without bound (here 2^15 after 15 ms; in seat run some
// 100 MB/s until the process was killed), and nothing was logged.
func TestDelayedSendsAreBounded(t *testing.T) {
	doc := loadText(t, "doc.scxml", head+` initial="増える">
  <datamodel><data id="refused" expr="0"/></datamodel>
  <state id="増える">
    <onentry><send event="e" delay="1ms"/></onentry>
    <transition event="e"><send event="e" delay="1ms"/><send event="e" delay="1ms"/></transition>
    <transition event="error.communication"><assign location="refused" expr="refused + 1"/></transition>
  </state>
</scxml>`)
	sys := NewSystem()
	var errs []string
	sys.Log = func(s *Session, label, text string) {
		if label == "error" {
			errs = append(errs, text)
		}
	}
	s := sys.Start(doc)
	most := 0
	for at := time.Millisecond; at <= 15*time.Millisecond; at += time.Millisecond {
		if err := sys.Run(s, at); err != nil {
			t.Fatal(err)
		}
		most = max(most, len(sys.timers))
	}
	refused := s.dm.L.GetGlobal("refused")
	if most > MaxDelayed || refused.String() == "0" {
		t.Errorf("at most %d delayed events waited (want at most %d); %s <send>s refused", most, MaxDelayed, refused)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "error.communication: ") || !strings.Contains(errs[0], "doc.scxml:5:56: <send> with a delay: 10000 delayed events already wait") {
		t.Errorf("logged %d error lines, the first %q; want one error.communication naming the <send> at doc.scxml:5", len(errs), errs[:min(len(errs), 1)])
	}
}

// countingQueue is a caller's Queue: a FIFO that counts what it was
// given, to show the system keeps no queue of its own beside it.
type countingQueue struct {
	FIFO
	pushed int
}

func (q *countingQueue) Push(d Delivery) { q.pushed++; q.FIFO.Push(d) }

// TestHandleGoesBehindWhatIsQueued: an event from outside is handled at
// once when nothing waits (it never touches the queue), and behind the
// events a document sent itself when some wait, in the caller's queue;
// the order of the transitions shows both.
func TestHandleGoesBehindWhatIsQueued(t *testing.T) {
	doc := loadText(t, "doc.scxml", head+`>
  <state id="s">
    <transition event="go"><log expr="_event.name"/><send event="b"/><send event="c"/></transition>
    <transition event="*"><log expr="_event.name"/></transition>
  </state>
</scxml>`)
	q := &countingQueue{}
	sys := NewSystem()
	sys.Queue = q
	var seen []string
	sys.Log = func(_ *Session, _, text string) { seen = append(seen, text) }
	s := sys.Start(doc)
	sys.Handle(s, &statechart.Event{Name: "go", Type: statechart.External})
	if q.pushed != 2 || q.Len() != 2 {
		t.Fatalf("after go: pushed %d, waiting %d; want the two sends in the caller's queue and go never queued", q.pushed, q.Len())
	}
	sys.Handle(s, &statechart.Event{Name: "x", Type: statechart.External})
	if q.pushed != 3 {
		t.Fatalf("x was not queued behind the two sends: pushed %d", q.pushed)
	}
	if n, more := sys.Drain(10); n != 3 || more {
		t.Fatalf("drain handled %d (more %v), want 3", n, more)
	}
	if got := strings.Join(seen, " "); got != "go b c x" {
		t.Errorf("handled %q, want %q", got, "go b c x")
	}
}

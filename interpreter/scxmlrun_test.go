package interpreter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter/seatml"
)

// scxmlDoc wraps states into an SCXML document with seat's socket
// adaptor "chat" on port 0.
func scxmlDoc(initial, body string) string {
	return `<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat"
  version="1.0" datamodel="lua" name="t" initial="` + initial + `">
<seat:adaptor name="chat" type="socket" role="server" port="0"/>
` + body + `</scxml>
`
}

func startSCXML(t *testing.T, src string, tweak ...func(*Options)) *harness {
	t.Helper()
	prog, diags := seatml.LoadBytes("t.scxml", []byte(src), seatml.LoadOptions{})
	if prog == nil {
		t.Fatalf("load failed:\n%v", diags)
	}
	return startProgram(t, prog, tweak...)
}

// TestSCXMLLinesAndDelays: lines from an adaptor are NAME.line events with
// the text in _event.data, delayed sends wait on the machine's clock (a
// virtual one here), and <send type="seat"> sends the content, or the
// event name without one.
func TestSCXMLLinesAndDelays(t *testing.T) {
	h := startSCXML(t, scxmlDoc("待機", `
<state id="待機">
  <transition event="chat.line" cond="_event.data.text == 'はじめ'" target="数える"/>
</state>
<state id="数える">
  <onentry><send id="t" event="合図" delay="2s"/></onentry>
  <transition event="合図"><send type="seat" target="chat" event="二秒"/></transition>
  <transition event="chat.line" cond="_event.data.text == 'やめ'" target="待機">
    <cancel sendid="t"/>
    <send type="seat" target="chat"><content expr="{text = _event.data.text, adaptor = _event.data.adaptor}"/></send>
  </transition>
</state>
`))
	defer h.stop()
	h.take()
	h.event("chat", "はじめ")
	h.advance(1999 * time.Millisecond)
	if got := h.sends(); len(got) != 0 {
		t.Fatalf("before 2 s: %q", got)
	}
	h.advance(time.Millisecond)
	if got, want := h.sends(), []string{"chat:二秒"}; !cmp.Equal(got, want) {
		t.Fatalf("at 2 s: %q, want %q", got, want)
	}
	h.event("chat", "やめ")
	if got, want := h.sends(), []string{`chat:{"adaptor":"chat","text":"やめ"}`}; !cmp.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if s := h.state(); s != "待機" {
		t.Errorf("state %q, want 待機", s)
	}
}

// TestSCXMLDelayedSendsAreTheMachinesTimers: each delayed event is a
// timer of the machine's one list: those due at once fire in the order
// sent, a cancelled one never fires, one sent later but due sooner fires
// first, and the machine says when the next is due (seat test moves its
// clock by it).
func TestSCXMLDelayedSendsAreTheMachinesTimers(t *testing.T) {
	h := startSCXML(t, scxmlDoc("待機", `
<state id="待機">
  <transition event="chat.line" cond="_event.data.text == 'go'">
    <send event="二" delay="2s"/>
    <send event="一a" delay="1s"/>
    <send id="消" event="消える" delay="1s"/>
    <send event="一b" delay="1s"/>
    <cancel sendid="消"/>
  </transition>
  <transition event="二"><send type="seat" target="chat" event="二"/></transition>
  <transition event="一a"><send type="seat" target="chat" event="一a"/></transition>
  <transition event="一b"><send type="seat" target="chat" event="一b"/></transition>
  <transition event="消える"><send type="seat" target="chat" event="消える"/></transition>
</state>
`))
	defer h.stop()
	h.take()
	h.event("chat", "go")
	var next time.Time
	if err := h.m.Sync(t.Context(), func() { next, _ = h.m.timers.next() }); err != nil {
		t.Fatal(err)
	}
	if want := h.clock.Now().Add(time.Second); !next.Equal(want) {
		t.Errorf("next timer at %v, want %v", next, want)
	}
	h.advance(time.Second)
	if got, want := h.sends(), []string{"chat:一a", "chat:一b"}; !cmp.Equal(got, want) {
		t.Fatalf("at 1 s: %q, want %q", got, want)
	}
	h.advance(time.Second)
	if got, want := h.sends(), []string{"chat:二"}; !cmp.Equal(got, want) {
		t.Fatalf("at 2 s: %q, want %q", got, want)
	}
	err := h.m.Sync(t.Context(), func() {
		if n := len(h.m.timers.ts); n != 0 {
			t.Errorf("%d timers left", n)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSCXMLEventDataIsARecord: _event and a seat event's _event.data are
// read on access instead of built as tables (a userdata each), yet read
// as tables do: pairs walks the data's fields in order, a <content> and
// seat.send of it give its JSON, a kept _event keeps its own event's
// values, and assigning a field is an error that says how to change it.
func TestSCXMLEventDataIsARecord(t *testing.T) {
	h := startSCXML(t, scxmlDoc("待機", `
<datamodel><data id="kept" expr="nil"/></datamodel>
<state id="待機">
  <transition event="chat.line" cond="_event.data.text == 'keep'"><script>kept = _event</script></transition>
  <transition event="chat.line" cond="_event.data.text == 'walk'"><script>
    local names = {}
    for k, v in pairs(_event.data) do names[#names + 1] = k .. "=" .. tostring(v) end
    seat.send('chat', table.concat(names, " ") .. " / " .. kept.name .. " " .. kept.data.text .. " " .. type(_event.data))
  </script></transition>
  <transition event="chat.line" cond="_event.data.text == 'json'"><send type="seat" target="chat"><content expr="_event.data"/></send></transition>
  <transition event="chat.line" cond="_event.data.text == 'write'"><script>_event.data.text = "書き換え"</script></transition>
  <transition event="error.execution"><script>seat.send('chat', _event.data)</script></transition>
</state>
`))
	defer h.stop()
	h.take()
	h.event("chat", "keep")
	h.event("chat", "walk")
	h.event("chat", "json")
	h.event("chat", "write")
	got := h.sends()
	want := []string{
		"chat:text=walk adaptor=chat / chat.line keep userdata",
		`chat:{"adaptor":"chat","text":"json"}`,
	}
	if len(got) != 3 || !cmp.Equal(got[:2], want) || !strings.Contains(got[2], `_event.data{text="write", adaptor="chat"} is read-only: copy what you change into a table of your own`) {
		t.Errorf("got %q, want %q and the read-only error", got, want)
	}
}

// TestSCXMLEventDataIsEachSessionsOwn: an adaptor event autoforwarded to
// an invoked session is read there through that session's own record and
// message table: what the child writes into _event.data.message is not
// seen by the parent, which keeps its own. Before, the two sessions
// shared one Lua table (and one userdata) across their Lua states: the
// parent read "child wrote".
func TestSCXMLEventDataIsEachSessionsOwn(t *testing.T) {
	h := startSCXML(t, scxmlDoc("待機", `
<datamodel><data id="keptm" expr="nil"/><data id="keptd" expr="nil"/></datamodel>
<state id="待機">
  <invoke id="kid" autoforward="true"><content><scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" initial="c">
    <datamodel><data id="ck" expr="nil"/></datamodel>
    <state id="c">
      <transition event="chat.message"><script>ck = _event.data; _event.data.message.x = "child wrote"</script></transition>
      <transition event="chat.line"><script>ck.message.y = "child again"</script></transition>
    </state></scxml></content></invoke>
  <transition event="chat.message"><script>keptm = _event.data.message; keptd = _event.data</script></transition>
  <transition event="chat.line"><script>seat.send('chat', keptm.x .. " " .. tostring(keptd.message.y))</script></transition>
</state>
`))
	defer h.stop()
	h.take()
	if err := h.m.Deliver(context.Background(), adaptors.Event{Source: "chat", Data: map[string]any{"x": "orig"}}); err != nil {
		t.Fatal(err)
	}
	h.sync()
	h.event("chat", "show")
	if got, want := h.sends(), []string{"chat:orig nil"}; !cmp.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestSCXMLEventDataSentAsChanged: a script that changes a field of
// _event.data.message (a plain table) and sends _event.data sends what it
// changed, as when the data was a table; a message that is made to
// contain its own record is refused, not followed forever. Before, the
// record's original message was sent: {"x":"orig"}.
func TestSCXMLEventDataSentAsChanged(t *testing.T) {
	h := startSCXML(t, scxmlDoc("待機", `
<state id="待機">
  <transition event="chat.message" cond="_event.data.message.x == 'orig'"><script>_event.data.message.x = "changed"</script>
    <send type="seat" target="chat"><content expr="_event.data"/></send></transition>
  <transition event="chat.message"><script>_event.data.message.self = _event.data</script>
    <send type="seat" target="chat"><content expr="_event.data"/></send></transition>
  <transition event="error.execution"><script>seat.send('chat', _event.data)</script></transition>
</state>
`))
	defer h.stop()
	h.take()
	for _, x := range []string{"orig", "loop"} {
		if err := h.m.Deliver(context.Background(), adaptors.Event{Source: "chat", Data: map[string]any{"x": x}}); err != nil {
			t.Fatal(err)
		}
		h.sync()
	}
	got := h.sends()
	if len(got) != 2 || got[0] != `chat:{"adaptor":"chat","message":{"x":"changed"},"text":""}` || !strings.Contains(got[1], "contains itself") {
		t.Errorf("got %q, want the changed message, then a refusal of the loop", got)
	}
}

// TestSCXMLEventSentAsPlainData: <content expr="_event"> and <content
// expr="_event.data"> send plain data, as when _event was a table: the
// event's fields as JSON to an adaptor, a table to an invoked session;
// pairs(_event) walks its fields. Before, the userdata's Go value was
// sent as it was: "{}" to the adaptor, and the child read a userdata
// (_event.data's record, shared with the parent) or a string.
func TestSCXMLEventSentAsPlainData(t *testing.T) {
	h := startSCXML(t, scxmlDoc("待機", `
<state id="待機">
  <invoke id="kid"><content><scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" initial="c">
    <state id="c">
      <transition event="ev"><send target="#_parent" event="back"><content expr="type(_event.data) .. ' ' .. tostring(_event.data.name or _event.data.text)"/></send></transition>
    </state></scxml></content></invoke>
  <transition event="chat.line" cond="_event.data.text == 'a'"><send type="seat" target="chat"><content expr="_event"/></send></transition>
  <transition event="chat.line" cond="_event.data.text == 'b'"><send target="#_kid" event="ev"><content expr="_event"/></send></transition>
  <transition event="chat.line" cond="_event.data.text == 'c'"><send target="#_kid" event="ev"><content expr="_event.data"/></send></transition>
  <transition event="chat.line" cond="_event.data.text == 'd'"><script>
    local names = {}
    for k in pairs(_event) do names[#names + 1] = k end
    seat.send('chat', table.concat(names, " "))
  </script></transition>
  <transition event="back"><script>seat.send('chat', 'back: ' .. _event.data)</script></transition>
</state>
`))
	defer h.stop()
	h.take()
	for _, s := range []string{"a", "b", "c", "d"} {
		h.event("chat", s)
	}
	want := []string{
		`chat:{"data":{"adaptor":"chat","text":"a"},"name":"chat.line","origin":"chat","origintype":"https://github.com/seatml/seat#adaptor","type":"external"}`,
		"chat:back: table chat.line",
		"chat:back: table c",
		"chat:name type origin origintype data",
	}
	if got := h.sends(); !cmp.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestSCXMLScriptLimitReadsAsSEATMLs: a document's script stopped by the
// time limit reads as a SEATML script's does ("script stopped: time limit
// of 50ms exceeded"), in its error.execution event. It read "stopped: it
// ran longer than the time limit of 50ms" before: one limit, two wordings.
func TestSCXMLScriptLimitReadsAsSEATMLs(t *testing.T) {
	h := startSCXML(t, scxmlDoc("待機", `
<state id="待機">
  <transition event="chat.line"><script>while true do end</script></transition>
  <transition event="error.execution"><script>seat.send('chat', _event.data)</script></transition>
</state>
`), func(o *Options) { o.ScriptTimeout = 50 * time.Millisecond })
	defer h.stop()
	h.take()
	h.event("chat", "loop")
	got := h.sends()
	if len(got) != 1 || !strings.Contains(got[0], "script stopped: time limit of 50ms exceeded") {
		t.Errorf("got %q, want the error saying script stopped: time limit of 50ms exceeded", got)
	}
}

// TestSCXMLSeatTable: the seat table in a document's Lua: seat.raise with
// data is an internal event, seat.state names the active state, and a
// function that is SEATML's own raises error.execution saying what SCXML
// uses instead.
func TestSCXMLSeatTable(t *testing.T) {
	h := startSCXML(t, scxmlDoc("一", `
<state id="一">
  <transition event="chat.line" cond="_event.data.text == 'raise'"><script>seat.raise('合図', {n = 3})</script></transition>
  <transition event="合図" target="二"><script>seat.send('chat', _event.type .. ' ' .. _event.data.n)</script></transition>
</state>
<state id="二">
  <onentry><script>seat.send('chat', seat.state())</script></onentry>
  <transition event="chat.line"><script>seat.transition('一')</script></transition>
  <transition event="error.execution"><script>seat.send('chat', _event.data)</script></transition>
</state>
`))
	defer h.stop()
	h.take()
	h.event("chat", "raise")
	if got, want := h.sends(), []string{"chat:internal 3", "chat:二"}; !cmp.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	h.event("chat", "x")
	got := h.sends()
	if len(got) != 1 || !strings.Contains(got[0], "seat.transition is SEATML's: in an SCXML document a <transition> changes the state") {
		t.Errorf("got %q, want the error naming what to use", got)
	}
}

// TestSCXMLDeviceEvents: a memory key is the event memory.KEY (a key a
// transition names is subscribed to when the document starts), and a
// motion's end motion.done.NAME, on the simulated robot.
func TestSCXMLDeviceEvents(t *testing.T) {
	src := scxmlDoc("待機", `
<state id="待機">
  <transition event="memory.my/flag" target="動く"><script>seat.send('chat', _event.data.key .. '=' .. _event.data.text)</script></transition>
  <transition event="chat.line"><script>seat.set("my/flag", true)</script></transition>
</state>
<state id="動く">
  <onentry><script>seat.motion({name = "stand", scripts = "Stand", duration = 500})</script></onentry>
  <transition event="motion.done" target="終わり"><script>seat.send('chat', _event.name)</script></transition>
</state>
<state id="終わり"/>
`)
	prog, diags := seatml.LoadBytes("t.scxml", []byte(src), seatml.LoadOptions{ScriptsDir: "../examples/scripts"})
	if prog == nil {
		t.Fatal(diags)
	}
	d, tweak := withDevices(t, prog)
	h := startProgram(t, prog, tweak)
	defer h.stop()
	h.take()
	h.event("chat", "go")
	h.eventually("moving", func() bool { return h.m.State() == "動く" })
	stepUntil(t, d.Engine, d.Engine.Now()+3*time.Second)
	h.eventually("ended", func() bool { return h.m.State() == "終わり" })
	want := []string{"chat:my/flag=true", "chat:motion.done.stand"}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// loopDoc keeps sending itself an event without a delay once told "go".
const loopDoc = `
<state id="待機"><transition event="chat.line" cond="_event.data.text == 'go'" target="回る"/></state>
<state id="回る">
  <onentry><send event="また"/></onentry>
  <transition event="また" target="回る"/>
  <transition event="chat.line" cond="_event.data.text == 'stop'" target="待機"><script>seat.send('chat', '止まった')</script></transition>
</state>
`

// TestSCXMLSelfSendLoopHearsInput: a document that keeps sending itself
// events without a delay still hears its adaptor between them (its queue
// is handled a slice at a time), and stops when told to.
func TestSCXMLSelfSendLoopHearsInput(t *testing.T) {
	h := startSCXML(t, scxmlDoc("待機", loopDoc))
	defer h.stop()
	h.take()
	h.event("chat", "go")
	h.event("chat", "stop")
	h.eventually("stopped looping", func() bool { return h.m.State() == "待機" })
	if got := h.sends(); !cmp.Equal(got, []string{"chat:止まった"}) {
		t.Errorf("got %q", got)
	}
}

// TestSCXMLSelfSendLoopRunsOnAVirtualClock: with no input after "go",
// the loop goes on though the clock (a virtual one that nothing moves)
// stands still, until its bound stops the document. Its next slice was
// once armed just after the input that waited then, a time the virtual
// clock never reached: the loop stalled, and seat test passed a
// transcript that should fail.
func TestSCXMLSelfSendLoopRunsOnAVirtualClock(t *testing.T) {
	h := startSCXML(t, scxmlDoc("待機", loopDoc))
	h.event("chat", "go")
	select {
	case err := <-h.done:
		h.done <- err // for the harness's stop
		var ee *ExitError
		if !errors.As(err, &ee) || !strings.Contains(ee.Cause, "without the queue ever empty") {
			t.Fatalf("Run: %v, want the runaway's bound", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the loop stalled: the document did not reach its bound")
	}
}

// TestHandSettleWaitsForTheDocumentsQueue: Hand.Settle (seat test's
// barrier) returns once what was delivered is handled, with what it
// caused: here 5,000 events the document sends itself, which it handles a
// slice at a time. It used to return after the first slice, and a
// transcript's next step saw a half-done document (a failure that came
// and went).
func TestHandSettleWaitsForTheDocumentsQueue(t *testing.T) {
	h := startSCXML(t, scxmlDoc("待機", `
<datamodel><data id="n" expr="0"/></datamodel>
<state id="待機"><transition event="chat.line" target="数える"><assign location="n" expr="0"/></transition></state>
<state id="数える">
  <onentry><send event="一つ"/></onentry>
  <transition event="一つ" cond="n &lt; 5000" target="数える"><assign location="n" expr="n + 1"/></transition>
  <transition event="一つ" target="待機"><script>seat.send("chat", "数えた " .. n)</script></transition>
</state>`))
	defer h.stop()
	h.take()
	if err := h.m.Deliver(t.Context(), adaptors.Event{Source: "chat", Text: "go"}); err != nil {
		t.Fatal(err)
	}
	if err := NewHand(h.m, h.clock).Settle(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if got, want := h.sends(), []string{"chat:数えた 5000"}; !cmp.Equal(got, want) {
		t.Errorf("after Settle: %q, want %q (state %s)", got, want, h.state())
	}
}

// TestSCXMLSendErrors: a <send type="seat"> to an adaptor the document
// does not declare raises error.communication naming the <send>'s place,
// also when it was delayed; a nil <content> sends an empty line, and
// <param>s without an event a JSON line.
func TestSCXMLSendErrors(t *testing.T) {
	h := startSCXML(t, scxmlDoc("一", `
<state id="一">
  <transition event="chat.line" cond="_event.data.text == 'now'"><send type="seat" targetexpr="'無い'" event="x"/></transition>
  <transition event="chat.line" cond="_event.data.text == 'later'"><send type="seat" targetexpr="'無い'" event="x" delay="1s"/></transition>
  <transition event="chat.line" cond="_event.data.text == 'nil'"><send type="seat" target="chat"><content expr="nil"/></send></transition>
  <transition event="chat.line" cond="_event.data.text == 'param'"><send type="seat" target="chat"><param name="数" expr="3"/></send></transition>
  <transition event="error.communication"><script>seat.send('chat', _event.data)</script></transition>
</state>
`))
	defer h.stop()
	h.take()
	h.event("chat", "now")
	h.event("chat", "later")
	h.advance(time.Second)
	h.event("chat", "nil")
	h.event("chat", "param")
	want := []string{
		`chat:t.scxml:6:66: <send type="seat"> to "無い": the document declares no such adaptor (<seat:adaptor name="無い">)`,
		`chat:t.scxml:7:68: <send type="seat"> to "無い": the document declares no such adaptor (<seat:adaptor name="無い">)`,
		"chat:",
		`chat:{"数":3}`,
	}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

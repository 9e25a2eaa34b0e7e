package interpreter

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/interpreter/seatml"
)

func TestSandboxHidesDangerousLibraries(t *testing.T) {
	checks := []string{
		"io", "require", "dofile", "loadfile", "package", "debug", "coroutine", "module",
		"os.execute", "os.exit", "os.getenv", "os.remove", "os.rename", "os.tmpname", "string.dump",
	}
	var body strings.Builder
	for _, c := range checks {
		body.WriteString(`<rule><key>` + c + `$</key><script sendto="chat">return type(` + c + `)</script></rule>` + "\n")
	}
	h := start(t, doc("", `<state name="s">`+body.String()+
		rule("", `<key>allowed</key><script sendto="chat">return type(os.time) .. type(os.clock) .. type(os.date) .. type(string.format) .. type(table.concat) .. type(math.floor)</script>`)+
		rule("", `<key>load-fn</key><script sendto="chat">return tostring(pcall(load, function() return nil end))</script>`)+
		rule("", `<key>load-bin</key><script sendto="chat">local ok, err = pcall(load, "\27Lua"); return tostring(ok)</script>`)+
		rule("", `<key>load-str</key><script sendto="chat">return load("return 1 + 1")()</script>`)+
		`</state>`))
	h.take()
	for _, c := range checks {
		h.event("chat", c)
	}
	for _, e := range []string{"allowed", "load-fn", "load-bin", "load-str"} {
		h.event("chat", e)
	}
	var want []string
	for range checks {
		want = append(want, "chat:nil")
	}
	want = append(want, "chat:functionfunctionfunctionfunctionfunctionfunction", "chat:false", "chat:false", "chat:2")
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRunawayScriptIsStopped(t *testing.T) {
	h := start(t, doc("", `<state name="s">`+
		rule("", `<key>loop</key><script>while true do end</script>`+msg("never"))+
		rule("", `<key>ping</key>`+msg("pong"))+
		`</state>`), func(o *Options) { o.ScriptTimeout = 50 * time.Millisecond })
	h.take()
	h.event("chat", "loop")
	h.event("chat", "ping")
	if diff := cmp.Diff([]string{"chat:pong"}, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	want := []string{"script failed: t.seatml:7: script stopped: time limit of 50ms exceeded"}
	if diff := cmp.Diff(want, h.logged(zapcore.ErrorLevel)); diff != "" {
		t.Errorf("logged (-want +got):\n%s", diff)
	}
}

func TestScriptErrorAtFileLine(t *testing.T) {
	h := start(t, doc(`<script><![CDATA[
    greetings = nil
    function greet(who)
      greetings = greetings + 1
      return who
    end
]]></script>`, `<state name="s">
<rule><key>hi</key>
  <script>
    local x = 1
    greet("me")
  </script>
  `+msg("not reached")+`
</rule>
</state>`))
	h.take()
	h.event("chat", "hi")
	if got := h.sends(); len(got) != 0 {
		t.Errorf("the list went on after a script error: %q", got)
	}
	want := []string{"script failed: t.seatml:9: attempt to perform arithmetic on nil"}
	got := h.logged(zapcore.ErrorLevel)
	if len(got) != 1 || !strings.HasPrefix(got[0], "script failed: t.seatml:9: ") {
		t.Errorf("logged %q, want one error at line 9 (the arithmetic in greet), like %q", got, want)
	}
}

func TestVarsResultsAndGlobals(t *testing.T) {
	h := start(t, doc(`<var name="n" value=" 42 "/><var name="hex" value="0x10"/><var name="s" value="4 2"/><var name="e" value=""/>
<script>shared = "from general"</script>`, `<state name="s">
<onentry><script>entry_data = tostring(rtc_in_data)</script></onentry>`+
		rule("", `<key>types</key><script sendto="chat">return type(n) .. n + 1 .. type(hex) .. hex .. type(s) .. "[" .. e .. "]"</script>`)+
		rule("", `<key>shared</key><script sendto="chat">return shared .. "/" .. entry_data</script>`)+
		rule("", `<key>rtc</key><script sendto="chat">rtc_result = "from rtc_result"; return "from return"</script><script sendto="chat">return rtc_result == nil</script>`)+
		rule("", `<key>num</key><script sendto="chat">return 1.5</script><script sendto="chat">return 3</script><script sendto="chat">return true</script><script sendto="chat">return nil</script>`)+
		rule("", `<key>table</key><script sendto="chat">return {}</script>`+msg("not reached"))+
		rule("", `<key>falsy</key><script>rtc_result = false</script>`+msg("list goes on"))+
		`</state>`))
	h.take()
	for _, e := range []string{"types", "shared", "rtc", "num", "table", "falsy"} {
		h.event("chat", e)
	}
	want := []string{
		"chat:number43number16string[]",
		"chat:from general/nil",
		"chat:from rtc_result", "chat:true",
		"chat:1.5", "chat:3", "chat:true",
		"chat:list goes on",
	}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The event globals are answered by the globals table's metatable: they
// read as before, an assignment holds until the next call, other globals
// are plain, and the metatable cannot be seen or replaced.
func TestEventGlobalsAreAnsweredPerCall(t *testing.T) {
	h := start(t, doc(`<script>function text_of() return rtc_in_data end</script>`, `<state name="s">`+
		rule("", `<key>assign</key><script sendto="chat">rtc_in_data = "mine"; event = 1; return rtc_in_data .. "," .. event .. "," .. text_of()</script><script sendto="chat">return rtc_in_data</script>`)+
		rule("", `<key>after</key><script sendto="chat">return rtc_in_data .. "," .. type(event) .. "," .. event.text .. "," .. web_in_data</script>`)+
		rule("", `<key>plain</key><script>fresh = nil; fresh = 5; unset = nil</script><script sendto="chat">return fresh .. "," .. tostring(unset) .. "," .. tostring(rawget(_G, "fresh"))</script>`)+
		rule("", `<key>meta</key><script sendto="chat">return tostring(getmetatable(_G)) .. "," .. tostring(pcall(setmetatable, _G, {}))</script>`)+
		`</state>`))
	h.take()
	for _, e := range []string{"assign", "after", "plain", "meta"} {
		h.event("chat", e)
	}
	want := []string{"chat:mine,1,mine", "chat:assign", "chat:after,userdata,after,after", "chat:5,nil,5", "chat:false,false"}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEventTableAndReply(t *testing.T) {
	h := start(t, doc("", `<state name="s">`+
		rule(`source="chat"`, `<key>hi</key><script sendto="chat">return event.source .. "|" .. event.text .. "|" .. event.key .. "|" .. #event.captures .. "|" .. event.time</script>`)+
		rule("", `<key>reply</key><script>seat.reply("x")</script>`+msg("not reached"))+
		`</state>`))
	h.take()
	h.event("chat", "hi there")
	h.event("chat", "reply")
	want := []string{"chat:chat|hi there|hi|0|1767323045"}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	errs := h.logged(zapcore.ErrorLevel)
	if len(errs) != 1 || !strings.Contains(errs[0], "seat.reply: the current event has no connection to reply to") {
		t.Errorf("errors %q", errs)
	}
}

func TestWidgetsFromLua(t *testing.T) {
	h := start(t, doc("", `<state name="s">
<input id="name">  Ann  </input>
<text id="log">line1</text>
<button label="OK"/>`+
		rule("", `<key>read</key><script sendto="chat">return seat.get_entry("s:name") .. "/" .. seat.get_text("s:log") .. "/" .. seat.getText("s:log")</script>`)+
		rule("", `<key>write</key><script>seat.setEntry("s:name", "Bob"); seat.append_text("s:log", "+2"); seat.appendText("s:log", "+3")</script><message sendto="chat" input="s:name"/><message sendto="chat" input="s:log"/>`)+
		rule("", `<key>clear</key><script>seat.clear_text("s:log")</script><message sendto="chat" input="s:log"/>`)+
		rule("", `<key>bad</key><script>seat.get_entry("s:log")</script>`)+
		rule("", `<key>unknown</key><script>seat.get_entry("s:nope")</script>`)+
		`</state>`))
	h.take()
	for _, e := range []string{"read", "write", "clear", "bad", "unknown"} {
		h.event("chat", e)
	}
	want := []string{"chat:Ann/line1/line1", "chat:Bob", "chat:line1+2+3", "chat:"}
	if diff := cmp.Diff(want, h.sends()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	errs := h.logged(zapcore.ErrorLevel)
	if len(errs) != 2 || !strings.Contains(errs[0], `widget "s:log" is a text, not an input`) || !strings.Contains(errs[1], `unknown widget "s:nope"`) {
		t.Errorf("errors %q", errs)
	}
}

func TestSeatExit(t *testing.T) {
	prog, diags := seatml.LoadBytes("t.seatml", []byte(doc("", `<state name="s"><onexit>`+msg("bye")+`</onexit>`+
		rule("", `<key>quit</key><script>seat.exit(3)</script>`+msg("rest of the list"))+`</state>`)), seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	var trace []string
	m, err := New(prog, Options{Clock: NewFakeClock(epoch), Trace: func(s string) { trace = append(trace, s) }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(context.Background()) }()
	<-m.Ready()
	if err := m.Deliver(context.Background(), eventOf("chat", "quit")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		ee, ok := err.(*ExitError)
		if !ok || ee.Code != 3 {
			t.Fatalf("Run = %v, want exit code 3", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("seat.exit did not end the run")
	}
	want := []string{"lua:open", "general", "adaptors:open", "enter:s", "fire:t.seatml:7", "send:chat:rest of the list",
		"exit:s", "send:chat:bye", "adaptors:close", "lua:close"}
	if diff := cmp.Diff(want, trace); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOnLoadAndSetupErrors(t *testing.T) {
	prog, diags := seatml.LoadBytes("t.seatml", []byte(doc(`<script>function onLoad() seat.send("chat", "too early"); loaded = true end</script>`,
		`<state name="s">`+rule("", `<key>q</key><script sendto="chat">return tostring(loaded)</script>`)+`</state>`)), seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	if _, err := New(prog, Options{}); err != nil {
		t.Fatalf("onLoad sending before adaptors open must be logged, not fail: %v", err)
	}
	prog, _ = seatml.LoadBytes("t.seatml", []byte(doc(`<script>
error("boom")</script>`, `<state name="s"/>`)), seatml.LoadOptions{})
	_, err := New(prog, Options{})
	if err == nil || err.Error() != "t.seatml:7: boom" {
		t.Errorf("general script error = %v, want t.seatml:7: boom", err)
	}
	prog, _ = seatml.LoadBytes("t.seatml", []byte(doc(`<script>function onLoad()
  local x = nil + 1
end</script>`, `<state name="s"/>`)), seatml.LoadOptions{})
	_, err = New(prog, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "t.seatml:7: onLoad: ") {
		t.Errorf("onLoad error = %v", err)
	}
}

func TestNilCallsNameTheCulprit(t *testing.T) {
	// Issue 12: gopher-lua says "attempt to call a non-function object";
	// the message names what was nil, says when the sandbox removed it,
	// and suggests the nearest seat function. (seat check refuses such
	// calls unless the behavior defines the function itself: this one
	// does, in a branch never taken, so they reach the run.)
	h := start(t, doc(`<script>function greet(who) return "hi " .. who end; if false then function seat.replly() end; function os.execute() end; function math.round() end end</script>`, `<state name="s">`+
		rule("", `<key>a</key><script>seat.replly("hi")</script>`)+
		rule("", `<key>b</key><script>os.execute("ls")</script>`)+
		rule("", `<key>c</key><script>io.write("x")</script>`)+
		rule("", `<key>d</key><script>local s = gret("you")</script>`)+
		rule("", `<key>e</key><script>require("socket")</script>`)+
		// Issue 20: a name inside a string ("chat") was taken for the call.
		rule("", `<key>f</key><script>seat.send("chat", tostring(round(2.5)))</script>`)+
		rule("", `<key>g</key><script>seat.send("chat", "x" .. math.round(2.5))</script>`)+
		`</state>`))
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		h.event("chat", k)
	}
	want := []string{
		`script failed: t.seatml:7: attempt to call seat.replly, which is nil: seat has no "replly"; did you mean seat.reply?`,
		`script failed: t.seatml:8: attempt to call os.execute, which the sandbox removes (os keeps only time, clock and date)`,
		`script failed: t.seatml:9: attempt to index io, which the sandbox removes (scripts have no io, require, package, debug or coroutine; os keeps time, clock and date)`,
		`script failed: t.seatml:10: attempt to call gret, which is nil (a global not defined when this ran; did you mean greet?)`,
		`script failed: t.seatml:11: attempt to call require, which the sandbox removes (scripts have no io, require, package, debug or coroutine; os keeps time, clock and date)`,
		`script failed: t.seatml:12: attempt to call round, which is nil (a global not defined when this ran; Lua has no round: write math.floor(x + 0.5))`,
		`script failed: t.seatml:13: attempt to call math.round, which is nil (Lua has no math.round: write math.floor(x + 0.5))`,
	}
	if diff := cmp.Diff(want, h.logged(zapcore.ErrorLevel)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestNilOperandsNameTheCulprit: gopher-lua's "cannot perform concat
// operation between string and nil" and "__len undefined" name nothing;
// the message names the nil variable or field (issue 21).
func TestNilOperandsNameTheCulprit(t *testing.T) {
	h := start(t, doc(`<script>visitor = {}; visitorName = "x"</script>`, `<state name="s">`+
		rule("", `<key>a</key><script>seat.reply("さようなら、" .. visitorname)</script>`)+
		rule("", `<key>b</key><script>return #words</script>`)+
		rule("", `<key>c</key><script>count = count + 1</script>`)+
		rule("", `<key>d</key><script>return visitor.name .. "様"</script>`)+
		rule("", `<key>e</key><script>local t = {}; return t.count * 2</script>`)+
		rule("", `<key>f</key><script>return visitor.address.city</script>`)+
		`</state>`))
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		h.event("chat", k)
	}
	want := []string{
		`script failed: t.seatml:7: visitorname is nil (a global not defined when this ran; did you mean visitorName?), in ` + "`..`",
		`script failed: t.seatml:8: words is nil (a global not defined when this ran; check its spelling), in ` + "`#`",
		`script failed: t.seatml:9: count is nil (a global not defined when this ran; check its spelling), in ` + "`+`",
		`script failed: t.seatml:10: visitor.name is nil, in ` + "`..`",
		`script failed: t.seatml:11: t.count is nil, in ` + "`*`" + ` (cannot perform mul operation between nil and number)`,
		`script failed: t.seatml:12: attempt to index visitor.address, which is nil`,
	}
	if diff := cmp.Diff(want, h.logged(zapcore.ErrorLevel)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestMisspelledLibraryIsSuggested: a misspelled library name gets the
// library suggested, though the libraries open on first use and are not
// among the globals until then (before the fix: "check its spelling").
func TestMisspelledLibraryIsSuggested(t *testing.T) {
	h := start(t, doc(``, `<state name="s">`+
		rule("", `<key>a</key><script>seat.reply(tostring(maht.floor(1.5)))</script>`)+
		rule("", `<key>b</key><script>seat.reply(strng.upper("x"))</script>`)+
		rule("", `<key>c</key><script>seat.reply(tabel.concat({"x"}))</script>`)+
		rule("", `<key>d</key><script>slef.count = 1</script>`)+
		`</state>`))
	for _, k := range []string{"a", "b", "c", "d"} {
		h.event("chat", k)
	}
	want := []string{
		`script failed: t.seatml:7: attempt to index maht, which is nil (a global not defined when this ran; did you mean math?)`,
		`script failed: t.seatml:8: attempt to index strng, which is nil (a global not defined when this ran; did you mean string?)`,
		`script failed: t.seatml:9: attempt to index tabel, which is nil (a global not defined when this ran; did you mean table?)`,
		`script failed: t.seatml:10: attempt to index slef, which is nil (a global not defined when this ran; did you mean self?)`,
	}
	if diff := cmp.Diff(want, h.logged(zapcore.ErrorLevel)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestNilGlobalSetToNilSaysWhere: a global assigned nil (a capture that
// did not match) is not "a global not defined": the message says where it
// was set to nil, or where it was set before something set it to nil; one
// never assigned keeps the old words, with assigned names as suggestions.
func TestNilGlobalSetToNilSaysWhere(t *testing.T) {
	h := start(t, doc(`<script>visitor = "佐藤"</script>`, `<state name="s">`+
		rule("", `<key>a</key><script>guest = string.match(event.text, "(%d+)番")</script>`)+
		rule("", `<key>b</key><script>seat.reply(guest .. "様")</script>`)+
		rule("", `<key>c</key><script>visitor = nil</script>`)+
		rule("", `<key>d</key><script>return visitor .. "様"</script>`)+
		rule("", `<key>e</key><script>return guest.name</script>`)+
		rule("", `<key>f</key><script>return #gust</script>`)+
		`</state>`))
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		h.event("chat", k)
	}
	want := []string{
		`script failed: t.seatml:8: guest is nil (a global set to nil at t.seatml:7), in ` + "`..`",
		`script failed: t.seatml:10: visitor is nil (a global set at t.seatml:6, then set to nil), in ` + "`..`",
		`script failed: t.seatml:11: attempt to index guest, which is nil (a global set to nil at t.seatml:7)`,
		`script failed: t.seatml:12: gust is nil (a global not defined when this ran; did you mean guest?), in ` + "`#`",
	}
	if diff := cmp.Diff(want, h.logged(zapcore.ErrorLevel)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLuaNamesGetSuggestions(t *testing.T) {
	h := start(t, doc("", `<state name="talking">`+
		rule("", `<key>a</key><script>seat.send("caht", "x")</script>`)+
		rule("", `<key>b</key><script>seat.transition("talkng")</script>`)+
		`</state>`))
	h.event("chat", "a")
	h.event("chat", "b")
	got := h.logged(zapcore.ErrorLevel)
	if len(got) != 2 || !strings.Contains(got[0], `seat.send: "caht" is not a declared adaptor; did you mean "chat"?`) ||
		got[1] != `transition to an unknown state refused; staying; did you mean "talking"?` {
		t.Errorf("errors %q", got)
	}
}

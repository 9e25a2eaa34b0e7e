package seattest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// run writes a behavior and a transcript into a directory and runs it.
func run(t *testing.T, behavior, transcript string) (*Result, string) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b.seatml"), []byte(behavior), 0o644)
	file := filepath.Join(dir, "b.seattest")
	os.WriteFile(file, []byte(transcript), 0o644)
	var verbose strings.Builder
	res, err := RunFile(file, Options{Verbose: &verbose})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res, verbose.String()
}

func mustPass(t *testing.T, res *Result, verbose string) {
	t.Helper()
	if res.Failure != nil {
		var b strings.Builder
		res.Report(&b)
		t.Fatalf("%s\n%s", b.String(), verbose)
	}
}

const chain = `<seatml><general name="c"><adaptor name="io" type="stdio"/></general>
<state name="a"><ontimeout timeout="1"><message sendto="io">a ends</message><statetransition>b</statetransition></ontimeout></state>
<state name="b"><onentry><message sendto="io">b begins</message></onentry>
  <ontimeout timeout="2"><statetransition>c</statetransition></ontimeout></state>
<state name="c"><onentry><message sendto="io">c begins</message></onentry></state>
</seatml>`

// TestTimersFireAtTheirTime: one advance across a chain of timeouts runs
// each at its own virtual time, so a state entered by a timeout keeps its
// full timeout.
func TestTimersFireAtTheirTime(t *testing.T) {
	res, v := run(t, chain, "+10s\n< a ends\n< b begins\n< c begins\n= c\n")
	mustPass(t, res, v)
	for _, want := range []string{"1s     io< a ends", "1s     io< b begins", "3s     io< c begins"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q in\n%s", want, v)
		}
	}
	// Short of the second timeout, c is not entered.
	res, v = run(t, chain, "+2900ms\n< a ends\n< b begins\n= b\n+100ms\n< c begins\n")
	mustPass(t, res, v)
}

// TestOnexecTicks: a rate of 2 Hz ticks four times in two seconds.
func TestOnexecTicks(t *testing.T) {
	b := `<seatml><general name="t" rate="2"><adaptor name="io" type="stdio"/><script>n = 0</script></general>
<state name="s"><onexec><script sendto="io">n = n + 1; return "tick " .. n</script></onexec></state></seatml>`
	res, v := run(t, b, "+2s\n< tick 1\n< tick 2\n< tick 3\n<~ ^tick 4$\n")
	mustPass(t, res, v)
}

// TestPeers: replies go to the peer that spoke, a broadcast to all;
// event.peer names the peer; onconnect and ondisconnect run.
func TestPeers(t *testing.T) {
	b := `<seatml><general name="p"><adaptor name="chat" type="socket" role="server" port="0"/>
<onconnect source="chat"><script>seat.reply("hello " .. event.peer)</script></onconnect>
<ondisconnect source="chat"><message sendto="chat">someone left</message></ondisconnect></general>
<state name="s"><rule source="chat"><key>who</key><script>seat.reply("you are " .. event.peer)</script></rule></state></seatml>`
	res, v := run(t, b, "@connect chat ann\n< hello ann\n@connect chat\n< hello peer1\n> who\n< you are peer1\n@disconnect chat peer1\n< someone left\n> who\n< you are ann\n")
	mustPass(t, res, v)
	if !strings.Contains(v, "chat< you are ann   (a reply to ann)") {
		t.Errorf("the reply did not go to ann:\n%s", v)
	}
	res, _ = run(t, b, "@disconnect chat bob\n")
	if res.Failure == nil || res.Failure.What != "no peer bob is connected to chat" {
		t.Errorf("disconnecting a peer never connected: %+v", res.Failure)
	}
}

// TestMemoryKey: a memory key that is no sensor is written at once and
// fires its rule without moving the clock.
func TestMemoryKey(t *testing.T) {
	b := `<seatml><general name="m"><adaptor name="io" type="stdio"/></general>
<state name="s"><rule source="memory"><key>Dialog/Heard</key><script sendto="io">return "heard " .. event.text</script></rule></state></seatml>`
	res, v := run(t, b, "memory> Dialog/Heard=yes\n< heard yes\n")
	mustPass(t, res, v)
	if !strings.Contains(v, "0s     io< heard yes") {
		t.Errorf("the key was not handled at once:\n%s", v)
	}
}

// TestStoppedBehavior: after seat.exit, input fails with the reason.
func TestStoppedBehavior(t *testing.T) {
	b := `<seatml><general name="x"><adaptor name="io" type="stdio"/></general>
<state name="s"><rule><key>quit</key><message sendto="io">bye</message><script>seat.exit(0)</script></rule></state></seatml>`
	res, _ := run(t, b, "> quit\n< bye\n> hello\n")
	if res.Failure == nil || !strings.Contains(res.Failure.What, "the behavior has stopped") || res.Failure.Step.Pos.Line != 3 {
		t.Errorf("input after seat.exit: %+v", res.Failure)
	}
}

// TestScriptErrorsReported: what the behavior logs comes with a failure.
func TestScriptErrorsReported(t *testing.T) {
	b := `<seatml><general name="e"><adaptor name="io" type="stdio"/></general>
<state name="s"><rule><key>go</key><script>nosuch.call()</script><message sendto="io">after</message></rule></state></seatml>`
	res, _ := run(t, b, "> go\n< done\n")
	var out strings.Builder
	res.Report(&out)
	if res.Failure == nil || !strings.Contains(out.String(), "the behavior logged:") || !strings.Contains(out.String(), "nosuch") {
		t.Errorf("report:\n%s", out.String())
	}
}

// TestWarningsOfAPass: a transcript that passes while the behavior logged
// an error (a Lua error, which raised error.execution) says so on its ok
// line and lists what was logged; before, it said only "ok".
func TestWarningsOfAPass(t *testing.T) {
	b := `<seatml><general name="e"><adaptor name="io" type="stdio"/></general>
<state name="s"><rule><key>go</key><message sendto="io">はい</message><script>nosuch.call()</script></rule></state></seatml>`
	res, v := run(t, b, "> go\n< はい\n")
	mustPass(t, res, v)
	var out strings.Builder
	res.Report(&out)
	got := out.String()
	if !strings.HasPrefix(got, "ok   ") || !strings.Contains(strings.SplitN(got, "\n", 2)[0], "  (1 warning)") ||
		!strings.Contains(got, "\n    the behavior logged:\n        error\tscript failed") || !strings.Contains(got, "attempt to index nosuch") {
		t.Errorf("report:\n%s", got)
	}
	// Without any, the ok line is as it was.
	res, v = run(t, b, "> nothing\n")
	mustPass(t, res, v)
	out.Reset()
	res.Report(&out)
	if got := out.String(); strings.Contains(got, "warning") || strings.Count(got, "\n") != 1 {
		t.Errorf("report of a clean pass:\n%s", got)
	}
}

func TestParse(t *testing.T) {
	tr, diags := Parse("x.seattest", []byte("\ufeff# c\nbehavior: ../b.seatml\n  > こんにちは\nio> \n< a  b \nio<~ ^a\n= 待機\n+1m30s\n@connect web alice\n@disconnect web\nmemory> A/B = 3\ngui:Begin session>\ngui:say> hi\n...\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if tr.Behavior != "../b.seatml" || len(tr.Steps) != 12 {
		t.Fatalf("%+v", tr)
	}
	want := []struct {
		kind          Kind
		adaptor, text string
	}{
		{Send, "", "こんにちは"}, {Send, "io", ""}, {Expect, "", "a  b "}, {ExpectRe, "io", "^a"}, {State, "", "待機"},
		{Advance, "", ""}, {Connect, "web", "alice"}, {Disconnect, "web", ""}, {Memory, "memory", "A/B = 3"},
		{Widget, "Begin session", ""}, {Widget, "say", "hi"}, {Skip, "", ""},
	}
	for i, w := range want {
		s := tr.Steps[i]
		if s.Kind != w.kind || s.Adaptor != w.adaptor || s.Text != w.text {
			t.Errorf("step %d (%s): %+v, want %+v", i, s.Line, s, w)
		}
	}
	if s := tr.Steps[0]; s.Pos.Line != 3 || s.Pos.Col != 3 {
		t.Errorf("position %v", s.Pos)
	}
	if s := tr.Steps[5]; s.Dur.Seconds() != 90 {
		t.Errorf("+1m30s is %v", s.Dur)
	}
	if s := tr.Steps[8]; s.Key != "A/B" || s.Value != "3" {
		t.Errorf("memory step %+v", s)
	}
	for _, bad := range []string{"", "# only a comment\n", "\xff> x\n", "+0s\n", "=\n", "@wave x\n", "memory> nokey\n", "gui:> x\n", "what\n"} {
		if tr, diags := Parse("x.seattest", []byte(bad)); tr != nil || !diags.HasErrors() {
			t.Errorf("%q parsed", bad)
		}
	}
}

// BenchmarkKioskTranscript runs the kiosk's 30-step transcript (two
// timeouts of 20 and 30 s among them): the figure behind "a transcript
// runs in milliseconds" in docs/tools.md.
func BenchmarkKioskTranscript(b *testing.B) {
	for b.Loop() {
		res, err := RunFile("../../examples/kiosk.seattest", Options{})
		if err != nil || res.Failure != nil {
			b.Fatalf("%v %+v", err, res.Failure)
		}
	}
}

// TestSessionsShareDevices: two sessions drive the one simulated robot;
// the second's higher-priority motion takes the arm from the first, which
// is told (lost), and the second's ends (done), each in its own session.
func TestSessionsShareDevices(t *testing.T) {
	b := `<seatml><general name="arms" scripts="` + scriptsDir(t) + `">
<adaptor name="chat" type="socket" role="server" port="0" session="peer"/>
<rule source="chat"><key>wave</key><motion name="wave" script="NaoWave" priority="5"/></rule>
<rule source="chat"><key>stand</key><motion name="stand" script="Stand" priority="6" duration="1000"/></rule>
<rule source="motion"><key>(done|lost):</key><script>seat.reply(event.key .. " " .. event.text)</script></rule>
</general><state name="s"/></seatml>`
	res, v := run(t, b, `@connect chat ann
@connect chat bob
chat@ann> wave
+200ms
chat@bob> stand
+20ms
<~ ^lost:wave
+1500ms
< done:stand completed
...
`)
	mustPass(t, res, v)
	if !strings.Contains(v, "(a reply to ann)") || !strings.Contains(v, "done:stand completed   (a reply to bob)") {
		t.Errorf("the outcomes did not reach their own sessions:\n%s", v)
	}
}

func scriptsDir(t *testing.T) string {
	dir, err := filepath.Abs("../../examples/scripts")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLongSteps: a + step runs its onexec ticks in the machine without a
// round trip each, so two minutes at 1000 Hz (120,000 ticks, every one
// run) take well under the step limit (an hour runs in under 2 s); a step with more ticks than the
// limit allows fails with where it got to; and a cancelled context (seat
// test on Ctrl-C) ends the step under way as interrupted.
func TestLongSteps(t *testing.T) {
	b := `<seatml><general name="t" rate="1000"><adaptor name="io" type="stdio"/><script>n = 0</script></general>
<state name="s"><onexec><script>n = n + 1</script></onexec>
<rule><key>count</key><script sendto="io">return tostring(n)</script></rule></state></seatml>`
	res, v := run(t, b, "+2m\n> count\n< 120000\n")
	mustPass(t, res, v)

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b.seatml"), []byte(b), 0o644)
	file := filepath.Join(dir, "b.seattest")
	os.WriteFile(file, []byte("+1000000h\n> count\n< 1\n"), 0o644)
	start := time.Now()
	res, err := RunFile(file, Options{StepTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure == nil || !strings.Contains(res.Failure.What, "the step did not end within 1s of real time: it reached +") {
		t.Fatalf("failure %+v", res.Failure)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the step limit of 1 s ended the step after %v", d)
	}

	// An onexec that takes 8 ms: the limit still ends the + step itself,
	// not the step after it.
	slow := `<seatml><general name="t" rate="10"><adaptor name="io" type="stdio"/></general>
<state name="s"><onexec><script>local t = os.clock(); while os.clock() - t &lt; 0.008 do end</script></onexec></state></seatml>`
	os.WriteFile(filepath.Join(dir, "b.seatml"), []byte(slow), 0o644)
	os.WriteFile(file, []byte("+20m\n> x\n"), 0o644)
	res, err = RunFile(file, Options{StepTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure == nil || res.Failure.Step.Line != "+20m" || !strings.Contains(res.Failure.What, "did not end within 1s") {
		t.Fatalf("failure %+v", res.Failure)
	}
	os.WriteFile(filepath.Join(dir, "b.seatml"), []byte(b), 0o644)
	os.WriteFile(file, []byte("+1000000h\n> count\n< 1\n"), 0o644)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err = RunFile(file, Options{Context: ctx})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure == nil || !strings.HasPrefix(res.Failure.What, "interrupted at +") {
		t.Fatalf("failure %+v", res.Failure)
	}
}

// nested is a behavior with a compound state.
const nested = `<seatml><general name="n"><adaptor name="io" type="stdio"/></general>
<state name="接客" initial="挨拶">
  <state name="挨拶"><rule><key>こんにちは</key><message sendto="io">ご用件は?</message><statetransition>用件</statetransition></rule></state>
  <state name="用件"/>
</state>
</seatml>`

// TestStateOfANestedBehavior: "= NAME" holds for the active innermost
// state and for every state around it; a failure lists the active states.
func TestStateOfANestedBehavior(t *testing.T) {
	res, v := run(t, nested, "= 挨拶\n= 接客\nio> こんにちは\n< ご用件は?\n= 用件\n= 接客\n")
	mustPass(t, res, v)
	res, _ = run(t, nested, "io> こんにちは\n< ご用件は?\n= 挨拶\n")
	if res.Failure == nil || res.Failure.Got != "用件 (active: 接客, 用件)" {
		t.Errorf("failure %+v; want one naming 用件 and the active states", res.Failure)
	}
}

// document is an SCXML document with a parallel state, a named event
// with data, and an event name with a dot.
const document = `<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat"
       version="1.0" datamodel="lua" name="受付" initial="待機">
  <seat:adaptor name="io" type="stdio"/>
  <state id="待機">
    <transition event="呼び出し" target="稼働">
      <send type="seat" target="io"><content expr="'番号 ' .. tostring(_event.data and _event.data['番号'])"/></send>
    </transition>
  </state>
  <parallel id="稼働">
    <state id="対話">
      <state id="用件"><transition event="案内.終わり" target="確認"/></state>
      <state id="確認"/>
    </state>
    <state id="見守り"><state id="平常"/></state>
  </parallel>
</scxml>`

// runFiles writes files into a directory and runs the transcript among
// them.
func runFiles(t *testing.T, transcript string, files map[string]string) (*Result, string, error) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	var verbose strings.Builder
	res, err := RunFile(filepath.Join(dir, transcript), Options{Verbose: &verbose})
	return res, verbose.String(), err
}

// TestEventsAndConfigurations: @event NAME [JSON] hands an SCXML document
// a named external event with its data; == A, B checks the exact set of
// active states, in any order, and a failure says which are missing and
// which are active too. Before, a transcript could only send lines
// (io.line) and check one state at a time.
func TestEventsAndConfigurations(t *testing.T) {
	pass := "== 待機\n@event 呼び出し {\"番号\": 7}\n< 番号 7\n== 稼働, 対話, 用件, 見守り, 平常\n@event 案内.終わり\n== 平常, 確認, 対話, 見守り, 稼働\n= 確認\n"
	res, v, err := runFiles(t, "b.seattest", map[string]string{"b.scxml": document, "b.seattest": pass})
	if err != nil {
		t.Fatal(err)
	}
	mustPass(t, res, v)
	// No data: _event.data is nil.
	res, v, err = runFiles(t, "b.seattest", map[string]string{"b.scxml": document, "b.seattest": "@event 呼び出し\n< 番号 nil\n"})
	if err != nil {
		t.Fatal(err)
	}
	mustPass(t, res, v)

	res, _, err = runFiles(t, "b.seattest", map[string]string{"b.scxml": document, "b.seattest": "@event 呼び出し {\"番号\": 1}\n< 番号 1\n== 稼働, 対話, 確認, 見守り, 平常\n"})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Failure
	if f == nil || f.What != "wrong active states (not active: 確認; active too: 用件)" || f.Want != "稼働, 対話, 確認, 見守り, 平常" || f.Got != "稼働, 対話, 用件, 見守り, 平常" || f.Step.Pos.Line != 3 {
		t.Errorf("failure %+v", f)
	}
	var out strings.Builder
	res.Report(&out)
	if !strings.Contains(out.String(), "b.seattest:3: == 稼働, 対話, 確認, 見守り, 平常\n        wrong active states (not active: 確認; active too: 用件)\n") {
		t.Errorf("report:\n%s", out.String())
	}

	// A nested SEATML behavior's configuration too.
	res, v = run(t, nested, "== 接客, 挨拶\nio> こんにちは\n< ご用件は?\n== 用件, 接客\n")
	mustPass(t, res, v)

	// Bad input: a state the document does not have, an @event to a
	// SEATML behavior, JSON that is not.
	_, _, err = runFiles(t, "b.seattest", map[string]string{"b.scxml": document, "b.seattest": "== 稼働, 対話x\n"})
	if err == nil || !strings.Contains(err.Error(), `b.seattest:1:1: the behavior has no state "対話x"; did you mean "対話"?`) {
		t.Errorf("unknown state: %v", err)
	}
	_, _, err = runFiles(t, "b.seattest", map[string]string{"b.seatml": nested, "b.seattest": "@event 呼び出し\n"})
	if err == nil || !strings.Contains(err.Error(), "b.seattest:1:1: @event sends an SCXML document a named event;") {
		t.Errorf("@event to SEATML: %v", err)
	}
	for text, want := range map[string]string{
		"@event 呼び出し {番号: 1}\n": `@event 呼び出し: its data must be JSON`,
		"@event\n":              "@event wants an event's name",
		"== 稼働,,対話\n":           "== wants every active state, separated by commas",
		"== 稼働, 稼働\n":           "== names 稼働 twice",
	} {
		_, diags := Parse("x.seattest", []byte(text))
		if !strings.Contains(diags.Error(), "x.seattest:1:1: "+want) {
			t.Errorf("%q: %v, want %s", text, diags.Error(), want)
		}
	}
}

// TestDeviceEventMessageWithinACycle: a message that a device event causes
// comes at a control cycle, and a recording's robot and the simulated one
// do not share the cycles' phase: a replay of reception's battery failed
// when the simulated cycle fell just after the recorded time ("expected a
// message, got none", 2 runs in 10 under load). An expectation not yet
// met waits for one control cycle (10 ms) while the device loop runs,
// and no longer.
func TestDeviceEventMessageWithinACycle(t *testing.T) {
	b := `<seatml><general name="d"><adaptor name="io" type="stdio"/>
<rule source="io"><key>電池 .+</key><script>seat.set("Battery/Charge/Sensor", tonumber(event.text:match("電池 ([%d.]+)")))</script></rule></general>
<state name="s"><rule source="memory"><key>Device/SubDeviceList/Battery/Charge/Sensor/Value</key>
<cond>tonumber(event.text) &gt;= 0.8</cond><message sendto="io">お待たせしました。</message></rule></state></seatml>`
	res, v := run(t, b, "> 電池 0.9\n< お待たせしました。\n")
	mustPass(t, res, v)
	if !strings.Contains(v, "io< お待たせしました。") {
		t.Errorf("no message in\n%s", v)
	}
	// Nothing comes: the step fails after that one cycle.
	res, v = run(t, b, "> 電池 0.1\n< お待たせしました。\n")
	if res.Failure == nil || res.Failure.What != "expected a message, got none" {
		t.Fatalf("want a failure, got %+v\n%s", res.Failure, v)
	}
}

// TestSet: @set gives a Lua variable a value, as the debugger's set does
// (a replay's transcript has it where the recording had it): a rule's
// cond and script see it. Bad names and values are refused where they
// are written, and a behavior it cannot set is refused before it runs.
func TestSet(t *testing.T) {
	behavior := `<seatml><general name="b"><adaptor name="io" type="socket" role="server" port="0"/><script>guest = "山田"; visitor = {tags = {}}</script></general>
<state name="s">
  <rule><key>名前</key><cond>guest ~= "nobody"</cond><script>seat.send("io", guest .. "様 " .. tostring(visitor.age))</script></rule>
  <rule><key>名前</key><message sendto="io">いません</message></rule>
</state></seatml>`
	res, v, err := runFiles(t, "b.seattest", map[string]string{"b.seatml": behavior, "b.seattest": `> 名前
< 山田様 nil
@set guest "田中"
@set visitor.age 42
> 名前
< 田中様 42
@set guest "nobody"
> 名前
< いません
`})
	if err != nil {
		t.Fatal(err)
	}
	mustPass(t, res, v)
	res, _, err = runFiles(t, "b.seattest", map[string]string{"b.seatml": behavior, "b.seattest": "@set visitor.tags.x.y 1\n"})
	if err != nil || res.Failure == nil || !strings.Contains(res.Failure.What, "visitor.tags.x is not a table") {
		t.Errorf("a field of no table: %+v, %v", res, err)
	}
	for text, want := range map[string]string{
		"@set guest 田中\n": `@set: the value is not JSON`,
		"@set 名前 \"x\"\n": `@set: "名前" is not a Lua variable`,
		"@set guest\n":    "@set wants a Lua variable and its value as JSON",
	} {
		_, diags := Parse("x.seattest", []byte(text))
		if !strings.Contains(diags.Error(), "x.seattest:1:1: "+want) {
			t.Errorf("%q: %v, want %s", text, diags.Error(), want)
		}
	}
	_, _, err = runFiles(t, "b.seattest", map[string]string{"b.scxml": `<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua"><state id="a"/></scxml>`, "b.seattest": "@set x 1\n"})
	if err == nil || !strings.Contains(err.Error(), "b.seattest:1:1: @set sets a Lua variable of a SEATML behavior without sessions") {
		t.Errorf("@set in SCXML: %v", err)
	}
}

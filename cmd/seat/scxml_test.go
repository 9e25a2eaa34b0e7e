package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seatml/seat/interpreter/scxml/irptest"
)

// reception is an SCXML document with Japanese ids and events, a nested
// dialogue, a delayed event on the real clock and a top-level final.
const receptionSCXML = `<?xml version="1.0" encoding="UTF-8"?>
<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" initial="受付">
  <datamodel><data id="count" expr="0"/></datamodel>
  <state id="受付" initial="挨拶">
    <onentry><send event="時間切れ" delay="300ms"/></onentry>
    <state id="挨拶">
      <onentry><raise event="こんにちは"/></onentry>
      <transition event="こんにちは" target="案内"><assign location="count" expr="count + 1"/></transition>
    </state>
    <state id="案内"/>
    <transition event="時間切れ" cond="In('案内') and count == 1" target="pass"/>
    <transition event="*" target="fail"/>
  </state>
  <final id="pass"><onentry><log label="結果" expr="'合格'"/></onentry></final>
  <final id="fail"/>
</scxml>
`

// TestRunSCXMLDocument runs an SCXML document on the real binary: it ends
// by itself at its top-level final state, with exit status 0 and a
// "finished" line naming the state, without waiting for standard input
// (which stays open here).
func TestRunSCXMLDocument(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "受付.scxml")
	if err := os.WriteFile(file, []byte(receptionSCXML), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runBinary(t, "", "check", file); code != 0 {
		t.Fatalf("seat check: exit %d: %s", code, out)
	}
	cmd := exec.Command(os.Args[0], "run", "--log-format=json", file)
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	stdin, err := cmd.StdinPipe() // never closed: the run must not wait for it
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, cmd, 20*time.Second, stderr); err != nil {
		t.Fatalf("seat run: %v\n%s", err, stderr.String())
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("ended after %v, before the 300ms delayed event could fire", d)
	}
	var finished, logged bool
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON log line: %q", line)
		}
		switch rec["msg"] {
		case "finished":
			finished = rec["final"] == "pass"
		case "log":
			logged = rec["label"] == "結果" && rec["text"] == "合格"
		}
	}
	if !finished || !logged {
		t.Errorf("want a log line 結果 合格 and finished with final \"pass\":\n%s", stderr.String())
	}
}

// TestCheckSCXMLErrors: a bad SCXML document is refused by seat check
// with file:line:col, counting columns in characters, and a suggestion.
func TestCheckSCXMLErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.scxml")
	doc := strings.Replace(receptionSCXML, `target="案内"><assign`, `target="案内所"><assign`, 1)
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runBinary(t, "", "check", file)
	want := file + `:8:41: no state "案内所"; did you mean "案内"?`
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("exit %d, output:\n%s\nwant %s", code, out, want)
	}
	out, code = runBinary(t, "", "run", file)
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("seat run: exit %d, output:\n%s", code, out)
	}
}

// TestCheckSCXMLDataNames: a Japanese data id is refused at load with a
// reason (Lua's names are ASCII), not at run time as a Lua syntax error.
func TestCheckSCXMLDataNames(t *testing.T) {
	file := filepath.Join(t.TempDir(), "names.scxml")
	doc := strings.Replace(receptionSCXML, `<data id="count"`, `<data id="回数"`, 1)
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runBinary(t, "", "check", file)
	want := file + `:3:24: data id "回数" is not a Lua variable name`
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("exit %d, output:\n%s\nwant %s", code, out, want)
	}
}

// TestRunIRPOnTheRealClock runs, through the real binary and on the real
// clock, W3C tests whose outcome hangs on the order of delayed events
// across sessions (TestIRP runs them on a virtual clock): 175 (delayexpr
// read when sent), 207 (a delayed event in a child cannot be cancelled
// by its parent), 252 (a cancelled invocation's events are not
// processed) and 236 (done.invoke comes last).
func TestRunIRPOnTheRealClock(t *testing.T) {
	dir := irptest.Find(t)
	for _, id := range []string{"175", "207", "236", "252"} {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			out, code := runBinary(t, "", "run", "--log-format=json", filepath.Join(dir, "lua", "test"+id+".scxml"))
			if code != 0 || !strings.Contains(out, `"msg":"finished"`) || !strings.Contains(out, `"final":"pass"`) {
				t.Errorf("exit %d:\n%s", code, out)
			}
		})
	}
}

// TestCheckSCXMLStructure: seat check finds what a schema would, each at
// its line and column (characters, Japanese included) with a suggestion
// where one fits: misspelt elements and attributes, elements out of place,
// missing or clashing attributes, bad enumerations and delays, history
// and initial misuse. Before, all of these loaded without a word and ran
// differently from what was written.
func TestCheckSCXMLStructure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "構造.scxml")
	os.WriteFile(file, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:ext="urn:x-other" version="1.0" datamodel="lua">
  <state id="受付" ext:note="他の道具のもの">
    <transiton event="挨拶" target="案内"/>
    <transition evnet="挨拶" target="案内"/>
    <transition event="挨拶" type="outer" target="案内"/>
    <onentry><send event="e" eventexpr="'e'" delay="2 minutes"/><raise/></onentry>
    <ext:anything/>
  </state>
  <state id="案内" initial="子">
    <history id="履歴"><transition event="戻る" target="案内"/></history>
  </state>
  <final id="終"><state id="中"/></final>
  <state id="葉"><initial><transition target="終"/></initial></state>
  <state id="引数"><onentry><send event="x"><param name="p"/></send></onentry></state>
</scxml>
`), 0o644)
	out, code := runBinary(t, "", "check", file)
	for _, want := range []string{
		":3:5: <transiton> is not an SCXML element; did you mean <transition>?",
		`:4:17: <transition> has no attribute "evnet"; did you mean "event"?`,
		`:5:34: type="outer": it is one of external or internal`,
		":6:30: <send> has both event and eventexpr: give one",
		`:6:53: delay "2 minutes" is not a time such as "1s", "500ms" or ".5s"`,
		":6:65: <raise> needs the event attribute",
		`:9:18: state "案内" has no child states for initial to name`,
		":10:34: the <transition> of <history> may not have an event: it is taken on entry",
		":12:17: <state> cannot be in <final>: <final> may hold <onentry>, <onexit> or <donedata>",
		`:13:3: state "葉" has an <initial> but no child states`,
		":14:43: <param> needs exactly one of expr, location",
	} {
		if !strings.Contains(out, file+want) {
			t.Errorf("output lacks %s%s", file, want)
		}
	}
	if code != 1 || strings.Contains(out, "ext:") || strings.Contains(out, "anything") {
		t.Errorf("exit %d (want 1), or the other namespace's element or attribute was reported:\n%s", code, out)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// TestCheckSCXMLLua: a Lua syntax error in a document is a warning at its
// place (the document runs, and evaluating the expression raises
// error.execution, as SCXML asks); a run-time error names the file, line
// and column of the expression (real binary).
func TestCheckSCXMLLua(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lua.scxml")
	os.WriteFile(file, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua">
  <datamodel><data id="count" expr="0"/></datamodel>
  <state id="受付">
    <onentry><log label="名前" expr="visitor.name"/></onentry>
    <transition event="error.execution" cond="count ==" target="終"/>
    <transition event="error.execution" target="終"/>
  </state>
  <final id="終"/>
</scxml>
`), 0o644)
	out, code := runBinary(t, "", "check", file)
	want := file + `:5:55: warning: lua: cond "count ==": the expression is incomplete at its end (a missing operand or closing parenthesis?); evaluating it raises error.execution`
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, output:\n%s\nwant %s", code, out, want)
	}
	out, code = runBinary(t, "", "run", file)
	want = file + `:4:36: expr \"visitor.name\": attempt to index a non-table object(nil) with key 'name'`
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, `"final": "終"`) {
		t.Errorf("seat run: exit %d, output:\n%s", code, out)
	}
}

// TestCheckSCXMLEveryProblemAtOnce: errors of every kind come in one
// run: a misspelt element does not hide a misspelt target or a Japanese
// data id; the wrong root namespace is refused; names and values that
// cannot work are errors.
func TestCheckSCXMLEveryProblemAtOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "全部.scxml")
	os.WriteFile(file, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua">
  <datamodel><data id="名前"/><data id="k" expr="1" src="k.json"/></datamodel>
  <state id="受付">
    <transiton event="挨拶"/>
    <transition event="挨拶" target="終わり"/>
    <transition event="" target="終"/>
    <onentry><raise event="人 検出"/><send target="#_parent"/><assign location="x"/><send event="e" delay="1e3ms"/></onentry>
    <onentry><if cond="true"><else/><elseif cond="false"/></if></onentry>
  </state>
  <final id="終"/>
</scxml>
`), 0o644)
	out, code := runBinary(t, "", "check", file)
	for _, want := range []string{
		`:2:24: data id "名前" is not a Lua variable name`,
		":2:29: <data> has more than one of expr, src and content",
		":4:5: <transiton> is not an SCXML element",
		`:5:36: no state "終わり"`,
		":6:24: event is empty: leave it out for an eventless transition",
		`:7:28: event name "人 検出": an event name is one word`,
		":7:35: <send> needs an event or eventexpr attribute",
		":7:60: <assign> needs an expr or content",
		`:7:105: delay "1e3ms" is not a time`,
		":8:37: <elseif> after <else>: <else> comes last",
	} {
		if !strings.Contains(out, file+want) {
			t.Errorf("output lacks %s%s", file, want)
		}
	}
	if code != 1 || t.Failed() {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
	other := filepath.Join(dir, "other.scxml")
	os.WriteFile(other, []byte(`<scxml xmlns="http://example.com/not-scxml" version="1.0"><state id="a"/></scxml>`), 0o644)
	out, code = runBinary(t, "", "check", other)
	if want := other + `:1:1: <scxml> is in the namespace "http://example.com/not-scxml"`; code != 1 || !strings.Contains(out, want) {
		t.Errorf("exit %d, output:\n%s\nwant %s", code, out, want)
	}
}

// TestRunSCXMLStoppedByABound: a document that a bound stops (here a
// macrostep over the microstep bound) is not a finish: seat run says so
// and exits 1 (before: "finished" with an empty final, exit 0).
func TestRunSCXMLStoppedByABound(t *testing.T) {
	file := filepath.Join(t.TempDir(), "回転.scxml")
	os.WriteFile(file, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua">
  <state id="回転"><transition target="回転"/></state>
</scxml>
`), 0o644)
	out, code := runBinary(t, "", "run", file)
	if code != 1 || strings.Contains(out, "finished") || !strings.Contains(out, "stopped without reaching a final state") || !strings.Contains(out, "too many microsteps") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

// TestRunSCXMLEndOfInputWaitsForItsQueue: standard input's end ends a
// document's run once what was queued is handled, its own events too: a
// line that starts 20,000 events of the document's own still gets its
// answer, also when a delayed event falls due meanwhile. (The end of
// input used to win over the document's queue, which it works through a
// slice at a time: nothing was printed, exit 0.)
func TestRunSCXMLEndOfInputWaitsForItsQueue(t *testing.T) {
	file := filepath.Join(t.TempDir(), "数える.scxml")
	os.WriteFile(file, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua" initial="待機">
  <seat:adaptor name="端末" type="stdio"/>
  <datamodel><data id="n" expr="0"/></datamodel>
  <state id="待機"><transition event="端末.line" cond="_event.data.text == '数えて'" target="数える"><assign location="n" expr="0"/></transition></state>
  <state id="数える">
    <onentry><send event="一つ"/></onentry>
    <transition event="一つ" cond="n &lt; 20000" target="数える"><assign location="n" expr="n + 1"/></transition>
    <transition event="一つ" target="待機"><script>seat.send("端末", "数えた " .. n)</script></transition>
  </state>
</scxml>
`), 0o644)
	stdout, stderr, code := runBinaryIO(t, "数えて\n", "run", file)
	if code != 0 || stdout != "数えた 20000\n" {
		t.Errorf("exit %d, output %q\n%s", code, stdout, stderr)
	}
	// A delayed event that falls due while the document counts fires in
	// its place, and the count still ends (it used to stop the waiting:
	// the run ended mid-count).
	data, _ := os.ReadFile(file)
	os.WriteFile(file, []byte(strings.Replace(string(data), `<assign location="n" expr="0"/></transition>`,
		`<assign location="n" expr="0"/><send event="合図" delay="5ms"/></transition>`, 1)), 0o644)
	stdout, stderr, code = runBinaryIO(t, "数えて\n", "run", file)
	if code != 0 || stdout != "数えた 20000\n" {
		t.Errorf("with a delayed event: exit %d, output %q\n%s", code, stdout, stderr)
	}
}

// TestRunSCXMLDelayedSends: on the real clock, delayed events wait on the
// machine's one timer list: two due at once come in the order sent, a
// cancelled one never comes, one sent later but due sooner comes first,
// and a final state ends the run with nothing pending.
func TestRunSCXMLDelayedSends(t *testing.T) {
	file := filepath.Join(t.TempDir(), "合図.scxml")
	os.WriteFile(file, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua" initial="待つ">
  <seat:adaptor name="端末" type="stdio"/>
  <state id="待つ">
    <onentry>
      <send event="終わり" delay="300ms"/>
      <send event="一" delay="100ms"/>
      <send id="消" event="消える" delay="100ms"/>
      <send event="二" delay="100ms"/>
      <send event="先" delay="20ms"/>
      <cancel sendid="消"/>
    </onentry>
    <transition event="一"><script>seat.send("端末", "一つ目")</script></transition>
    <transition event="二"><script>seat.send("端末", "二つ目")</script></transition>
    <transition event="先"><script>seat.send("端末", "先に")</script></transition>
    <transition event="消える"><script>seat.send("端末", "消えたはず")</script></transition>
    <transition event="終わり" target="済"/>
  </state>
  <final id="済"/>
</scxml>
`), 0o644)
	// Standard input stays open: its end would end the run at once.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "run", file)
	cmd.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil || stdout.String() != "先に\n一つ目\n二つ目\n" || !strings.Contains(stderr.String(), "finished") {
		t.Errorf("%v, output %q\n%s", err, stdout.String(), stderr.String())
	}
}

// TestCheckSCXMLReachAndTargets: seat check warns of a state no
// transition or initial state leads to (the outermost one of a group),
// and refuses a transition whose targets cannot be active together, with
// positions.
func TestCheckSCXMLReachAndTargets(t *testing.T) {
	file := filepath.Join(t.TempDir(), "到達.scxml")
	os.WriteFile(file, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" initial="受付">
  <state id="受付">
    <transition event="並行" target="右 左"/>
    <transition event="二つ" target="甲 乙"/>
  </state>
  <parallel id="両方">
    <state id="右"/>
    <state id="左"/>
  </parallel>
  <state id="組">
    <state id="甲"/>
    <state id="乙"/>
  </state>
  <state id="離れ"><state id="奥"/></state>
</scxml>
`), 0o644)
	out, code := runBinary(t, "", "check", file)
	for _, want := range []string{
		`:2:3: state "受付": a transition's targets "甲" and "乙" cannot be active together: both are inside "組", which is not a <parallel>`,
	} {
		if !strings.Contains(out, file+want) {
			t.Errorf("output lacks %s%s\n%s", file, want, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1:\n%s", code, out)
	}
	os.WriteFile(file, []byte(strings.Replace(`<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" datamodel="lua" initial="受付">
  <state id="受付">
    <transition event="並行" target="右 左"/>
  </state>
  <parallel id="両方">
    <state id="右"/>
    <state id="左"/>
  </parallel>
  <state id="離れ"><state id="奥"/></state>
</scxml>
`, "\n", "\n", -1)), 0o644)
	out, code = runBinary(t, "", "check", file)
	if code != 0 || !strings.Contains(out, file+`:9:3: warning: state "離れ" is never entered: no transition or initial state leads to it`) ||
		strings.Contains(out, "奥") || strings.Contains(out, `"右"`) || strings.Contains(out, `"左"`) {
		t.Errorf("exit %d, want 0 and one warning, for 離れ alone:\n%s", code, out)
	}
}

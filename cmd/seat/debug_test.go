package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/ros/rostest"
	"github.com/seatml/seat/adaptors/web/webtest"
)

// TestDebuggerOnTheRealBinary: the reception robot on the real binary,
// with seat ctl's debugger, in Japanese. A breakpoint on 確認 stops the
// conversation there; show names where, the visitor's name in the Lua
// globals and 確認's countdown; what the visitor says meanwhile waits in
// the queue; the name is changed, and after continue the waiting はい is
// answered with it; an event sent with seat ctl send fires its rule.
func TestDebuggerOnTheRealBinary(t *testing.T) {
	port, staff, control := freePortNumber(t), freePortNumber(t), freePort(t)
	_, log := startSeat(t, "run", "--control", control, "--set", "音声.port="+port, "--set", "係員.port="+staff, "../../examples/reception.seatml")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	waitFor(t, func() bool { return strings.Contains(log.String(), "\tcontrol API\t") })
	ctl := func(args ...string) string { t.Helper(); return ctlOK(t, control, args...) }
	visitor := talk(t, port)
	say, hear := visitor.say, visitor.hear
	if out := ctl("break", "受付", "state", "確認"); !strings.Contains(out, "1   entering 確認 (hits 0)") {
		t.Errorf("break:\n%s", out)
	}
	say("こんにちは")
	hear("いらっしゃいませ。本日はどのようなご用件でしょうか。")
	say("山田さんと約束があります")
	hear("山田様ですね。お約束の方でよろしいですか。")
	var out string
	waitFor(t, func() bool {
		out = ctl("show", "受付")
		return strings.Contains(out, "受付: paused (breakpoint 1: entering 確認) at entering 確認")
	})
	for _, want := range []string{`(?m)^globals +guest = "山田"$`, `(?m)^ +visitors = 1$`, `(?m)^timers +timeout of 確認 in 1[45](\.\d+)?s$`, `(?m)^event +音声: 山田さんと約束があります$`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("show: no %s in\n%s", want, out)
		}
	}
	say("はい") // waits: the behavior is paused
	waitFor(t, func() bool { return strings.Contains(ctl("show", "受付"), "queue       音声: はい") })
	ctl("set", "受付", "guest", `"田中"`)
	ctl("clear", "受付")
	// A step answers where it stopped: the next event queued (はい, or the
	// nod's end if it came first).
	if out := ctl("step", "受付"); !regexp.MustCompile(`受付: paused \(stepped to the next event\) at event (音声: はい|motion: completed)\n`).MatchString(out) {
		t.Errorf("step:\n%s", out)
	}
	if out := ctl("continue", "受付"); !strings.Contains(out, "受付: running") {
		t.Errorf("continue:\n%s", out)
	}
	hear("田中様をお呼びします。少々お待ちください。")
	hear("いらっしゃいませ。本日はどのようなご用件でしょうか。") // はい went to 用件
	// An event sent with seat ctl, as if the visitor had said it.
	ctl("send", "受付", "音声", "トイレはどこ")
	hear("お手洗いは廊下の突き当たり、右側です。")
	waitFor(t, func() bool { // the log comes through a pipe: it may lag behind the answer
		return strings.Contains(log.String(), "debugger: set") && strings.Contains(log.String(), "debugger: event sent")
	})
}

// TestPausedTimerOnTheRealBinary: a countdown paused at 3 s of 10 s fires
// 7 s after continue, on the real binary, in real time.
func TestPausedTimerOnTheRealBinary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "待つ.seatml")
	os.WriteFile(file, []byte(`<seatml><general name="待つ"><adaptor name="窓口" type="socket" role="server" port="0"/></general>
<state name="待機"><ontimeout timeout="10"><message sendto="窓口">時間です</message></ontimeout></state></seatml>`), 0o644)
	control := freePort(t)
	_, log := startSeat(t, "run", "--control", control, file)
	port := loggedPort(t, log, "\tcontrol API\t")
	peer := dialSeat(t, port)
	r := bufio.NewReader(peer)
	started := time.Now() // the countdown started a little before
	time.Sleep(3*time.Second - time.Since(started))
	if _, errOut, code := ctlAt(control, "pause", "待つ"); code != 0 {
		t.Fatal(errOut)
	}
	paused := time.Now()
	out, _, _ := ctlAt(control, "show", "待つ")
	m := regexp.MustCompile(`timeout in ([\d.]+)s`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("show:\n%s", out)
	}
	left, _ := time.ParseDuration(m[1] + "s")
	time.Sleep(2 * time.Second) // a pause longer than nothing: the clock is held
	if _, errOut, code := ctlAt(control, "continue", "待つ"); code != 0 {
		t.Fatal(errOut)
	}
	resumed := time.Now()
	peer.SetDeadline(time.Now().Add(30 * time.Second))
	line, err := r.ReadString('\n')
	if err != nil || line != "時間です\n" {
		t.Fatalf("got %q, %v", line, err)
	}
	after := time.Since(resumed)
	t.Logf("paused with %v left (after %v), fired %v after continue", left, paused.Sub(started), after)
	if left < 6*time.Second || left > 8*time.Second || after < left-500*time.Millisecond || after > left+2*time.Second {
		t.Errorf("paused with %v left; fired %v after continue, want about %v", left, after, left)
	}
}

// TestMonitorDebuggerOnTheRealBinary: the reception robot's monitor in
// headless Chromium is its debugger. A click on 確認 in the graph sets a
// breakpoint; the conversation stops there and the page says so, with the
// visitor's name among the variables; the name is changed in the panel;
// a step lets the visitor's はい through and stops at the next event; on
// continue the robot answers with the new name. Screenshots of the
// paused page are kept as the test's artifacts (-update writes
// docs/debugger.png, which the README shows).
func TestMonitorDebuggerOnTheRealBinary(t *testing.T) {
	port, staff, control := freePortNumber(t), freePortNumber(t), freePort(t)
	_, log := startSeat(t, "run", "--control", control, "--set", "音声.port="+port, "--set", "係員.port="+staff, "../../examples/reception.seatml")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	waitFor(t, func() bool { return strings.Contains(log.String(), "\tmonitor\t") })

	b := webtest.Start(t)
	b.SetViewport(1400, 1000)
	b.Navigate("http://" + control + "/monitor/")
	sec := `document.querySelector('section[data-behavior="受付"]')`
	b.WaitFor("the debugger's panel", sec+` != null && `+sec+`.querySelector('.debug .dstate') != null && `+sec+`.querySelector('.graph g.node[data-state="確認"]') != null`)
	b.Click(`section[data-behavior="受付"] .graph g.node[data-state="確認"]`)
	b.WaitFor("the breakpoint listed and drawn", sec+`.querySelector('ul.bps').textContent.includes('entering 確認') && `+sec+`.querySelector('.graph g.node[data-state="確認"]').classList.contains('bp')`)

	visitor := talk(t, port)
	say, hear := visitor.say, visitor.hear
	say("こんにちは")
	hear("いらっしゃいませ。本日はどのようなご用件でしょうか。")
	say("山田さんと約束があります")
	hear("山田様ですね。お約束の方でよろしいですか。")
	guest := sec + `.querySelector('.inspect tr[data-variable="guest"] td.value')`
	b.WaitFor("the page paused at 確認 with the visitor's name", sec+`.classList.contains('paused') && `+sec+`.querySelector('.debug .dstate').textContent.includes('breakpoint 1: entering 確認') && `+guest+` != null && `+guest+`.textContent === '"山田"'`)
	b.WaitFor("確認's countdown held", sec+`.querySelector('.inspect table.where').textContent.includes('timeout of 確認 in 1')`)
	say("はい") // waits in the queue while paused
	b.WaitFor("the はい queued", sec+`.querySelector('.inspect table.where').textContent.includes('音声: はい')`)
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "debugger-paused.png"), b.Screenshot(), 0o644); err != nil {
		t.Error(err)
	}

	b.Click(`section[data-behavior="受付"] .inspect tr[data-variable="guest"] td.value`)
	b.WaitFor("the value's editor", guest+`.querySelector('input') != null`)
	b.Eval(guest + `.querySelector('input').value = ''`)
	b.TypeText(`section[data-behavior="受付"] .inspect tr[data-variable="guest"] td.value input`, `"田中"`, true)
	b.WaitFor("the name changed", guest+` != null && `+guest+`.textContent === '"田中"'`)
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "debugger-set.png"), b.Screenshot(), 0o644); err != nil {
		t.Error(err)
	}
	if *update {
		os.WriteFile("../../docs/debugger.png", b.Screenshot(), 0o644)
	}

	// A step goes on to the next event: the queued はい, where it stops
	// before handling it.
	b.Click(`section[data-behavior="受付"] .debug button[data-op="step"]`)
	b.WaitFor("stopped at the next event", sec+`.querySelector('.debug .dstate').textContent.includes('stepped to the next event') && `+sec+`.querySelector('.debug .dstate').textContent.includes('音声: はい')`)
	b.Click(`section[data-behavior="受付"] ul.bps button.clear`)
	b.WaitFor("the breakpoint cleared", sec+`.querySelector('ul.bps li.none') != null && !`+sec+`.querySelector('.graph g.node[data-state="確認"]').classList.contains('bp')`)
	b.Click(`section[data-behavior="受付"] .debug button[data-op="continue"]`)
	hear("田中様をお呼びします。少々お待ちください。")
	b.WaitFor("running again", `!`+sec+`.classList.contains('paused') && `+sec+`.querySelector('.debug .dstate').textContent.startsWith('running')`)
	b.WaitFor("the set and the pause in the log", sec+`.querySelector('.log tr.line.set') != null && `+sec+`.querySelector('.log tr.line.set').textContent.includes('debugger set guest = "田中"') && `+sec+`.querySelector('.log tr.line.paused') != null`)

	// A rule fired in the log stops the behavior when it fires again.
	hear("いらっしゃいませ。本日はどのようなご用件でしょうか。")
	say("トイレはどこ")
	hear("お手洗いは廊下の突き当たり、右側です。")
	line := ruleLine(t, "../../examples/reception.seatml", "(トイレ|お手洗い)")
	toilet := fmt.Sprintf(`section[data-behavior="受付"] .log tr.line.fire button.bp[data-at$=":%d"]`, line)
	b.WaitFor("the rule fired in the log", fmt.Sprintf(`document.querySelector(%q) != null`, toilet))
	b.Click(toilet)
	b.WaitFor("the rule's breakpoint", fmt.Sprintf(`document.querySelector(%q).classList.contains('on') && %s.querySelector('ul.bps').textContent.includes('rule at reception.seatml:%d')`, toilet, sec, line))
	say("お手洗いはどこ")
	b.WaitFor("stopped at the rule", fmt.Sprintf(`%s.querySelector('.debug .dstate').textContent.includes('breakpoint 2: rule at ../../examples/reception.seatml:%d')`, sec, line))
	// An event sent from the panel, as if the visitor had said it: it
	// waits behind the pause.
	b.Eval(sec + `.querySelector('form.send select').value = "音声"`)
	b.TypeText(`section[data-behavior="受付"] form.send input`, "さようなら", true)
	b.WaitFor("the event queued", sec+`.querySelector('.inspect table.where').textContent.includes('音声: さようなら')`)
	b.Click(`section[data-behavior="受付"] .debug button[data-op="continue"]`)
	hear("お手洗いは廊下の突き当たり、右側です。")
	hear("ありがとうございました。お気をつけて。")
	for _, want := range []string{"debugger: breakpoint set", "debugger: set", "debugger: event sent"} {
		waitFor(t, func() bool { return strings.Contains(log.String(), want) })
	}
}

// ruleLine is the line of the <rule> tag before the first line of file
// holding text.
func ruleLine(t *testing.T, file, text string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rule := 0
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "<rule") {
			rule = i + 1
		}
		if strings.Contains(l, text) {
			return rule
		}
	}
	t.Fatalf("%s holds no %q", file, text)
	return 0
}

// TestDebuggerRecordingReplays: what the debugger does is recorded, and
// a replay of the recording does it again. A behavior paused for longer
// than its countdown had left, with a variable set meanwhile, answers
// with the new value before the countdown ends; the replay sets the
// variable at the same point and leaves the pause's time out of its
// clock (else the countdown would end before the second question), and
// matches.
func TestDebuggerRecordingReplays(t *testing.T) {
	dir := t.TempDir()
	file, rec := filepath.Join(dir, "記録.seatml"), filepath.Join(dir, "記録.jsonl")
	os.WriteFile(file, []byte(`<seatml><general name="記録"><adaptor name="窓口" type="socket" role="server" port="0"/><script>guest = "山田"</script></general>
<state name="待機">
  <ontimeout timeout="3"><message sendto="窓口">時間切れ</message><statetransition>終了</statetransition></ontimeout>
  <rule><key>名前</key><script>seat.send("窓口", guest .. "様")</script></rule>
</state>
<state name="終了"/></seatml>`), 0o644)
	control := freePort(t)
	cmd, log := startSeat(t, "run", "--control", control, "--record", rec, file)
	port := loggedPort(t, log, "\tcontrol API\t")
	peer := dialSeat(t, port)
	r := bufio.NewReader(peer)
	peer.SetDeadline(time.Now().Add(30 * time.Second))
	ask := func(want string) {
		t.Helper()
		peer.Write([]byte("名前\n"))
		if line, err := r.ReadString('\n'); err != nil || line != want+"\n" {
			t.Fatalf("heard %q (%v), want %q", line, err, want)
		}
	}
	ctl := func(args ...string) { t.Helper(); ctlOK(t, control, args...) }
	ask("山田様")
	ctl("pause", "記録")
	ctl("set", "記録", "guest", `"田中"`)
	time.Sleep(3500 * time.Millisecond) // paused longer than the countdown had left
	ctl("continue", "記録")
	ask("田中様")
	cmd.Process.Signal(syscall.SIGINT)
	if err := waitExit(t, cmd, 20*time.Second, log); err != nil {
		t.Fatalf("seat run: %v\n%s", err, log.String())
	}
	data, _ := os.ReadFile(rec)
	for _, want := range []string{`"kind":"set","behavior":"記録","text":"\"田中\"","key":"guest"`, `"kind":"paused","behavior":"記録","text":"3.`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the recording has no %s:\n%s", want, data)
		}
	}
	stdout, errOut, code := runSeat("replay", rec)
	if code != 0 || !strings.Contains(stdout, "2 inputs, 2 messages match") {
		t.Errorf("replay: exit %d\n%s%s", code, stdout, errOut)
	}
	// Its transcript sets the variable where the debugger did.
	got, errOut, code := runSeat("test", "--from", rec)
	if code != 0 || !strings.Contains(got, "\n@set guest \"田中\"\n") {
		t.Errorf("seat test --from: exit %d, no @set guest in\n%s%s", code, got, errOut)
	}
}

// TestTimelineOnTheRealBinary: time travel over a recording. The
// reception robot runs on the real binary with --record while a visitor
// reaches 確認 and answers はい; the monitor's page, in headless
// Chromium, opens the recording with its file picker, and the slider
// scrubs to the step where the visitor gave a name: the graph highlights
// 確認, the variables hold "山田", and the panel shows what the robot
// said. seat replay --until stops at the same step and shows the same.
func TestTimelineOnTheRealBinary(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "受付.jsonl")
	port, staff, control := freePortNumber(t), freePortNumber(t), freePort(t)
	_, log := startSeat(t, "run", "--control", control, "--record", rec, "--set", "音声.port="+port, "--set", "係員.port="+staff, "../../examples/reception.seatml")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	waitFor(t, func() bool { return strings.Contains(log.String(), "\tmonitor\t") })
	visitor := talk(t, port)
	for _, x := range [][2]string{{"こんにちは", "いらっしゃいませ。本日はどのようなご用件でしょうか。"}, {"山田さんと約束があります", "山田様ですね。お約束の方でよろしいですか。"}, {"はい", "山田様をお呼びします。少々お待ちください。"}} {
		visitor.say(x[0])
		visitor.hear(x[1])
	}
	// The recording is flushed every 100 ms: wait for the answer to はい.
	waitFor(t, func() bool {
		data, _ := os.ReadFile(rec)
		return strings.Contains(string(data), "山田様をお呼びします")
	})

	b := webtest.Start(t)
	b.SetViewport(1400, 1000)
	b.Navigate("http://" + control + "/monitor/")
	b.WaitFor("the page", `document.querySelector('#recording-file') != null && document.querySelector('section[data-behavior="受付"] .graph svg') != null`)
	var doc struct {
		Root struct {
			NodeID int `json:"nodeId"`
		} `json:"root"`
	}
	json.Unmarshal(b.Call("DOM.getDocument", map[string]any{"depth": 0}), &doc)
	var input struct {
		NodeID int `json:"nodeId"`
	}
	json.Unmarshal(b.Call("DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": "#recording-file"}), &input)
	b.Call("DOM.setFileInputFiles", map[string]any{"nodeId": input.NodeID, "files": []string{rec}})
	tl := `document.querySelector('section.timeline')`
	b.WaitFor("the timeline", tl+` != null && `+tl+`.querySelector('.graph svg') != null && `+tl+`.querySelector('input[type=range]').max > 5`)
	// Scrub to the step after the name was given, as a hand on the slider would.
	n := b.Eval(`timeline.tl.frames.findIndex(f => f.line === '音声> 山田さんと約束があります')`).(float64)
	if n < 1 {
		t.Fatalf("no step gives the name: %v", b.Eval(`JSON.stringify(timeline.tl.frames.map(f => f.line))`))
	}
	b.Eval(fmt.Sprintf(`(() => { const s = %s.querySelector('input[type=range]'); s.value = %v; s.dispatchEvent(new Event('input')); })()`, tl, n))
	b.WaitFor("確認 at that step", tl+`.querySelector('.graph g.node.current[data-state="確認"]') != null && `+tl+`.querySelector('tr[data-variable="guest"] td.value').textContent === '"山田"' && `+tl+`.querySelector('table.where').textContent.includes('音声< 山田様ですね。お約束の方でよろしいですか。')`)
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "timeline.png"), b.Screenshot(), 0o644); err != nil {
		t.Error(err)
	}
	if *update {
		os.WriteFile("../../docs/timeline.png", b.Screenshot(), 0o644)
	}
	// One step back: the name is not given yet.
	b.Click(`section.timeline .scrub button[data-go="-1"]`)
	b.WaitFor("the step before", tl+`.querySelector('tr[data-variable="guest"]') == null && `+tl+`.querySelector('.graph g.node.current[data-state="用件"]') != null`)
	// The last step: はい answered, back in 用件.
	b.Eval(fmt.Sprintf(`(() => { const s = %s.querySelector('input[type=range]'); s.value = s.max; s.dispatchEvent(new Event('input')); })()`, tl))
	b.WaitFor("the end", tl+`.querySelector('.graph g.node.current[data-state="用件"]') != null && `+tl+`.querySelector('tr[data-variable="visitors"] td.value').textContent === '1'`)

	// seat replay --until stops at the same step.
	out, errOut, code := runSeat("replay", "--until", strconv.Itoa(int(n)), rec)
	for _, want := range []string{"paused (seat replay --until: step " + strconv.Itoa(int(n)) + " of ", ") at 音声> 山田さんと約束があります\n", "\nstate       確認 (active: ", "\nglobals     guest = \"山田\"\n", "said        音声< 山田様ですね。お約束の方でよろしいですか。\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("seat replay --until %v: exit %d, no %q in\n%s%s", n, code, want, out, errOut)
		}
	}

	if _, errOut, code := runSeat("replay", "--until", "999", rec); code != 2 || !strings.Contains(errOut, "seat replay: --until 999: the replay has ") {
		t.Errorf("--until past the end: exit %d, %s", code, errOut)
	}

	// With --control it hands the replayed behavior over to the debugger
	// there: the name is changed, and the rest of the replay says what
	// the change did.
	exe, _ := os.Executable()
	debugAt := freePort(t)
	replay := exec.Command(exe, "replay", "--until", strconv.Itoa(int(n)), "--control", debugAt, rec)
	replay.Env = append(os.Environ(), "SEAT_TEST_MAIN=1")
	var replayOut, replayErr syncBuffer
	replay.Stdout, replay.Stderr = &replayOut, &replayErr
	if err := replay.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replay.Process.Kill(); replay.Wait() })
	waitFor(t, func() bool {
		return strings.Contains(replayOut.String(), "handed over to the debugger: seat ctl --control "+debugAt)
	})
	ctl := func(args ...string) string { t.Helper(); return ctlOK(t, debugAt, args...) }
	if out := ctl("show", "受付"); !strings.Contains(out, "受付: paused (seat replay --until: step "+strconv.Itoa(int(n))+") between events") || !strings.Contains(out, `globals     guest = "山田"`) || !strings.Contains(out, "state       確認") {
		t.Errorf("show at the step handed over:\n%s", out)
	}
	ctl("set", "受付", "guest", `"田中"`)
	ctl("continue", "受付")
	err := waitExit(t, replay, 20*time.Second, &replayErr)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(replayOut.String(), "replayed: 田中様をお呼びします。少々お待ちください。") {
		t.Errorf("the replay after the change: %v\n%s%s", err, replayOut.String(), replayErr.String())
	}
}

// TestDebuggerSendsAROSMessage: seat ctl send --json gives a behavior a
// sensor_msgs/Joy as if it had come from the ROS master (Debian's ROS 1
// master, on the real binary): its rule reads rtc_in_data and publishes a
// Twist, which rostopic echo sees; the recording holds the message as
// one, and replays.
func TestDebuggerSendsAROSMessage(t *testing.T) {
	m := rostest.Start(t)
	t.Setenv("ROS_MASTER_URI", m.URI)
	control := freePort(t)
	rec := filepath.Join(t.TempDir(), "joy.jsonl")
	cmd, _ := runROS(t, `<seatml><general name="ジョイ">
  <adaptor name="/turtle1/cmd_vel" type="ros_pub" datatype="geometry_msgs/Twist" size="1"/>
  <adaptor name="/joy" type="ros_sub" datatype="sensor_msgs/Joy"/>
</general>
<state name="運転">
  <rule source="/joy"><script>seat.publish("/turtle1/cmd_vel", {linear = {x = rtc_in_data.axes[2]}, angular = {z = rtc_in_data.axes[1]}})</script></rule>
</state></seatml>`, "運転", "--control", control, "--record", rec)
	got := m.EchoOne(t, "turtle1/cmd_vel", func() {
		if out, errOut, code := ctlAt(control, "send", "--json", "ジョイ", "/joy", `{"axes": [-0.5, 1.5], "buttons": [1, 0]}`); code != 0 {
			t.Errorf("seat ctl send --json: exit %d\n%s%s", code, out, errOut)
		}
	})
	if want := "linear: \n  x: 1.5\n  y: 0.0\n  z: 0.0\nangular: \n  x: 0.0\n  y: 0.0\n  z: -0.5"; !strings.Contains(got, want) {
		t.Errorf("rostopic echo /turtle1/cmd_vel printed:\n%s\nwithout\n%s", got, want)
	}
	if out, errOut, code := ctlAt(control, "send", "--json", "ジョイ", "/joy", `{"axes": [`); code == 0 || !strings.Contains(errOut, "the message is not YAML or JSON") {
		t.Errorf("a message that is not JSON: exit %d\n%s%s", code, out, errOut)
	}
	data := stopAndReplay(t, cmd, rec)
	if !strings.Contains(data, `"source":"/joy","text":"{\"axes\":[-0.5,1.5],\"buttons\":[1,0]}","message":true`) {
		t.Errorf("the recording does not hold the message as one:\n%s", data)
	}
}

// TestDebuggingASessionOnTheRealBinary: in a behavior with a session per
// peer, seat ctl --session PEER debugs that peer's session: a breakpoint
// stops it alone (the other visitor is answered meanwhile), show names
// its state and variables, set changes them, continue lets its queued
// input through; the behavior's own debugger says to name a session.
func TestDebuggingASessionOnTheRealBinary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "窓口.seatml")
	os.WriteFile(file, []byte(`<seatml><general name="窓口">
  <adaptor name="来客" type="socket" role="server" port="0" session="peer"/>
  <onconnect source="来客"><message sendto="来客">いらっしゃいませ</message></onconnect>
</general>
<state name="受付">
  <rule source="来客"><key>(.+)です$</key><script>guest = event.text:match("(.+)です$")</script><message sendto="来客">ご用件は?</message><statetransition>用件</statetransition></rule>
</state>
<state name="用件">
  <rule source="来客"><key>.</key><script>seat.send("来客", guest .. "様、承りました")</script><statetransition>受付</statetransition></rule>
</state></seatml>`), 0o644)
	control := freePort(t)
	_, log := startSeat(t, "run", "--control", control, file)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	port := loggedPort(t, log, "\tcontrol API\t")
	dial := func() *talker { return talk(t, port) }
	say := func(v *talker, text string) { t.Helper(); v.say(text) }
	hear := func(v *talker, want string) { t.Helper(); v.hear(want) }
	ctl := func(args ...string) string { t.Helper(); return ctlOK(t, control, args...) }
	a, b := dial(), dial()
	hear(a, "いらっしゃいませ")
	hear(b, "いらっしゃいませ")
	peerA := a.c.LocalAddr().String()
	if _, errOut, code := ctlAt(control, "show", "窓口"); code == 0 || !strings.Contains(errOut, "debugged a session at a time") || !strings.Contains(errOut, "--session PEER") {
		t.Errorf("show without --session: exit %d, %s", code, errOut)
	}
	if _, errOut, code := ctlAt(control, "--session", "127.0.0.1:1", "show", "窓口"); code == 0 || !strings.Contains(errOut, "no session of 127.0.0.1:1; the sessions are ") {
		t.Errorf("show of no session: exit %d, %s", code, errOut)
	}
	ctl("--session", peerA, "break", "窓口", "state", "用件")
	say(a, "山田です")
	hear(a, "ご用件は?")
	var out string
	waitFor(t, func() bool {
		out = ctl("--session", peerA, "show", "窓口")
		return strings.Contains(out, "窓口 "+peerA+": paused (breakpoint 1: entering 用件)")
	})
	if !strings.Contains(out, `globals     guest = "山田"`) {
		t.Errorf("show:\n%s", out)
	}
	say(a, "書類") // waits: a's session is paused
	say(b, "田中です")
	hear(b, "ご用件は?") // the other session goes on
	ctl("--session", peerA, "set", "窓口", "guest", `"佐藤"`)
	ctl("--session", peerA, "clear", "窓口")
	ctl("--session", peerA, "continue", "窓口")
	hear(a, "佐藤様、承りました")
	say(b, "書類")
	hear(b, "田中様、承りました")
}

// TestDebuggingAnSCXMLDocumentOnTheRealBinary: the reception robot
// written in SCXML, stopped on entering 確認 on the real binary: show
// gives its configuration, its datamodel (guest) and 確認's delayed
// event, held; the name is set, and after continue the robot uses it.
func TestDebuggingAnSCXMLDocumentOnTheRealBinary(t *testing.T) {
	port, staff, control := freePortNumber(t), freePortNumber(t), freePort(t)
	_, log := startSeat(t, "run", "--control", control, "--set", "音声.port="+port, "--set", "係員.port="+staff, "../../examples/reception.scxml")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	waitFor(t, func() bool { return strings.Contains(log.String(), "\tcontrol API\t") })
	ctl := func(args ...string) string { t.Helper(); return ctlOK(t, control, args...) }
	visitor := talk(t, port)
	say, hear := visitor.say, visitor.hear
	ctl("break", "受付", "state", "確認")
	say("こんにちは")
	hear("いらっしゃいませ。本日はどのようなご用件でしょうか。")
	say("山田さんと約束があります")
	hear("山田様ですね。お約束の方でよろしいですか。")
	var out string
	waitFor(t, func() bool {
		out = ctl("show", "受付")
		return strings.Contains(out, "受付: paused (breakpoint 1: entering 確認)")
	})
	for _, want := range []string{`guest = "山田"`, "state       確認 (active: 稼働, 対話, 会話, 接客, 確認, 見守り, 平常)", "visitors = 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("show: no %q in\n%s", want, out)
		}
	}
	ctl("set", "受付", "guest", `"田中"`)
	ctl("clear", "受付")
	ctl("break", "受付", "event", "はい")
	ctl("continue", "受付")
	say("はい") // stops before the document hears it: 確認's delayed event is armed, held
	waitFor(t, func() bool {
		out = ctl("show", "受付")
		return strings.Contains(out, "受付: paused (breakpoint 2: event matching \"はい\")")
	})
	if !regexp.MustCompile(`timers +delayed event 確認\.待ち in 1[45](\.\d+)?s`).MatchString(out) {
		t.Errorf("show at はい: no 確認's delayed event in\n%s", out)
	}
	ctl("clear", "受付")
	ctl("continue", "受付")
	hear("田中様をお呼びします。少々お待ちください。")
}

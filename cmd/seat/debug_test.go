package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
	ctl := func(args ...string) string {
		t.Helper()
		out, errOut, code := ctlAt(control, args...)
		if code != 0 {
			t.Fatalf("seat ctl %v: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	visitor := dialSeat(t, port)
	r := bufio.NewReader(visitor)
	visitor.SetDeadline(time.Now().Add(30 * time.Second))
	say := func(text string) { visitor.Write([]byte(text + "\n")) }
	hear := func(want string) {
		t.Helper()
		got, err := r.ReadString('\n')
		if got = strings.TrimSuffix(got, "\n"); got != want || err != nil {
			t.Fatalf("the visitor heard %q (%v), want %q", got, err, want)
		}
	}
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
	if out := ctl("continue", "受付"); !strings.Contains(out, "受付: running") {
		t.Errorf("continue:\n%s", out)
	}
	hear("田中様をお呼びします。少々お待ちください。")
	hear("いらっしゃいませ。本日はどのようなご用件でしょうか。") // はい went to 用件
	// An event sent with seat ctl, as if the visitor had said it.
	ctl("send", "受付", "音声", "トイレはどこ")
	hear("お手洗いは廊下の突き当たり、右側です。")
	if !strings.Contains(log.String(), "debugger: set") || !strings.Contains(log.String(), "debugger: event sent") {
		t.Errorf("the log does not say what the debugger did")
	}
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

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

// TestReloadKeepsStateOnTheRealBinary: the reception robot on the real
// binary, a visitor in 確認 (its name kept in a Lua global) on a socket.
// An edit and seat ctl reload carry the dialogue over: the same
// connection's はい is answered by the new version's text with the name
// the old one heard. A reload whose file no longer has 確認 says so and
// goes on in the state around it, entered anew; --fresh starts from the
// initial state.
func TestReloadKeepsStateOnTheRealBinary(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../examples/reception.seatml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "reception.seatml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	port, staff, control := freePortNumber(t), freePortNumber(t), freePort(t)
	_, log := startSeat(t, "run", "--control", control, "--set", "音声.port="+port, "--set", "係員.port="+staff, file)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	waitFor(t, func() bool { return strings.Contains(log.String(), "\tcontrol API\t") })
	visitor := talk(t, port)
	say, hear := visitor.say, visitor.hear
	ctl := func(args ...string) string { t.Helper(); return ctlOK(t, control, args...) }
	say("こんにちは")
	hear("いらっしゃいませ。本日はどのようなご用件でしょうか。")
	say("山田さんと約束があります")
	hear("山田様ですね。お約束の方でよろしいですか。")

	// An edit of what 確認 answers, reloaded mid-dialogue: 確認 is kept,
	// and so is guest; say, a function, is the new version's own.
	os.WriteFile(file, []byte(strings.Replace(string(src), "様をお呼びします。", "様をお呼びいたします。", 1)), 0o644)
	out := ctl("reload", "受付")
	if !strings.Contains(out, "went on where it was (") || !strings.Contains(out, "確認") || strings.Contains(out, "not carried over") {
		t.Errorf("seat ctl reload:\n%s", out)
	}
	say("はい")
	hear("山田様をお呼びいたします。少々お待ちください。")
	// はい went to 用件, whose onentry greets (it was entered, not kept).
	hear("いらっしゃいませ。本日はどのようなご用件でしょうか。")

	// Back to 確認, then a file without it: the dialogue goes on in the
	// state around it, 接客, entered anew at its initial state 用件.
	say("田中さんに会いに来ました")
	hear("田中様ですね。お約束の方でよろしいですか。")
	os.WriteFile(file, []byte(strings.NewReplacer(`"確認"`, `"確かめ"`, `>確認<`, `>確かめ<`).Replace(string(src))), 0o644)
	out = ctl("reload", "受付")
	if !strings.Contains(out, "not carried over: state 確認 is gone: entered 接客, the state around it") {
		t.Errorf("seat ctl reload without 確認:\n%s", out)
	}
	hear("いらっしゃいませ。本日はどのようなご用件でしょうか。")
	waitFor(t, func() bool { return strings.Contains(log.String(), "reload: not carried over") }) // the log, read as seat writes it

	// --fresh: the initial state, and guest forgotten.
	out = ctl("reload", "--fresh", "受付")
	if strings.Contains(out, "went on") || !strings.Contains(out, "待機") {
		t.Errorf("seat ctl reload --fresh:\n%s", out)
	}
}

// TestWatchOnTheRealBinary: seat run --watch reloads a behavior when its
// file is saved, where it was and with its peer connected; a save with
// an error is logged at its line and changes nothing.
func TestWatchOnTheRealBinary(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "受付.seatml")
	write := func(answer string) {
		os.WriteFile(file, []byte(`<seatml><general name="受付"><adaptor name="窓口" type="socket" role="server" port="0"/>
<script>visits = 0</script></general>
<state name="待機"><rule><key>こんにちは</key><script>visits = visits + 1</script><statetransition>会話</statetransition></rule></state>
<state name="会話"><rule><key>様子</key><script>seat.reply("`+answer+` " .. visits)</script></rule></state></seatml>`), 0o644)
	}
	write("v1")
	_, log := startSeat(t, "run", "--watch", file)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	port := loggedPort(t, log, "watching the behaviors' files")
	peer := dialSeat(t, port)
	r := bufio.NewReader(peer)
	ask := func(text string) string {
		t.Helper()
		peer.SetDeadline(time.Now().Add(10 * time.Second))
		peer.Write([]byte(text + "\n"))
		s, _ := r.ReadString('\n')
		return strings.TrimSuffix(s, "\n")
	}
	peer.Write([]byte("こんにちは\n"))
	if got := ask("様子"); got != "v1 1" {
		t.Fatalf("before: %q", got)
	}
	saved := time.Now()
	write("v2")
	waitFor(t, func() bool { return strings.Contains(log.String(), "saved file reloaded") })
	t.Logf("reloaded %v after the save (the watch looks every %v)", time.Since(saved).Round(time.Millisecond), 200*time.Millisecond)
	if got := ask("様子"); got != "v2 1" {
		t.Fatalf("after the save: %q, want v2 1 (会話 and visits kept)", got)
	}
	os.WriteFile(file, []byte(`<seatml><general name="受付"></general><state name="待機"><rule><key>x</key><statetransition>無い</statetransition></rule></state></seatml>`), 0o644)
	waitFor(t, func() bool { return strings.Contains(log.String(), "saved file has errors; not reloaded") })
	if !strings.Contains(log.String(), `受付.seatml:1:90: statetransition target \"無い\" is not a declared state`) {
		t.Errorf("the error is not logged at its line")
	}
	if got := ask("様子"); got != "v2 1" {
		t.Errorf("after a save with errors: %q, want v2 1", got)
	}
}

// TestReloadKeepsSessionsOnTheRealBinary: a behavior with a session per
// peer, reloaded on the real binary: both visitors stay connected, each
// session goes on in its own state with its own variables (one in 用件
// with its name, one still in 受付 without), under the new version's
// text; no welcome is said again. A session in a state the new file no
// longer has is reported by its peer. --fresh ends the sessions: the
// visitors connect again and are welcomed.
func TestReloadKeepsSessionsOnTheRealBinary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "窓口.seatml")
	src := `<seatml><general name="窓口">
  <adaptor name="来客" type="socket" role="server" port="0" session="peer"/>
  <onconnect source="来客"><message sendto="来客">いらっしゃいませ</message></onconnect>
</general>
<state name="受付">
  <rule source="来客"><key>(.+)です$</key><script>guest = event.text:match("(.+)です$")</script><message sendto="来客">ご用件は?</message><statetransition>用件</statetransition></rule>
</state>
<state name="用件">
  <ontimeout timeout="60"><message sendto="来客">お時間です</message></ontimeout>
  <rule source="来客"><key>どこ</key><script>seat.send("来客", guest .. "様は" .. seat.state() .. "にいます")</script></rule>
  <rule source="来客"><key>.</key><script>seat.send("来客", guest .. "様、承りました")</script><statetransition>受付</statetransition></rule>
</state></seatml>`
	os.WriteFile(file, []byte(src), 0o644)
	control, port := freePort(t), freePortNumber(t)
	_, log := startSeat(t, "run", "--control", control, "--set", "来客.port="+port, file) // a port that --fresh opens again
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	waitFor(t, func() bool { return strings.Contains(log.String(), "\tcontrol API\t") })
	dial := func() *talker { return talk(t, port) }
	say := func(v *talker, text string) { t.Helper(); v.say(text) }
	hear := func(v *talker, want string) { t.Helper(); v.hear(want) }
	ctl := func(args ...string) string { t.Helper(); return ctlOK(t, control, args...) }
	a, b := dial(), dial()
	hear(a, "いらっしゃいませ")
	hear(b, "いらっしゃいませ")
	say(a, "山田です")
	hear(a, "ご用件は?")
	waitFor(t, func() bool {
		out := ctl("sessions", "窓口")
		return strings.Contains(out, "用件") && strings.Contains(out, "受付")
	})

	os.WriteFile(file, []byte(strings.Replace(src, "承りました", "かしこまりました", 1)), 0o644)
	if out := ctl("reload", "窓口"); !strings.Contains(out, "every session went on where it was (2 open; seat ctl sessions 窓口)") || strings.Contains(out, "not carried over") || strings.Contains(out, "afresh") {
		t.Errorf("seat ctl reload:\n%s", out)
	}
	say(a, "どこ")
	hear(a, "山田様は用件にいます")
	say(a, "書類です")
	hear(a, "山田様、かしこまりました") // the new version's text, the old session's name
	say(b, "田中です")          // still in 受付: no welcome again, no name yet
	hear(b, "ご用件は?")
	say(b, "どこ")
	hear(b, "田中様は用件にいます")

	// A file without 用件: b's session is in it, and says so by its peer.
	os.WriteFile(file, []byte(strings.NewReplacer(`name="用件"`, `name="相談"`, `>用件<`, `>相談<`).Replace(src)), 0o644)
	out := ctl("reload", "窓口")
	if !regexp.MustCompile(`session 127\.0\.0\.1:\d+: state 用件 is gone, and the states around it: entered the initial state`).MatchString(out) {
		t.Errorf("seat ctl reload without 用件:\n%s", out)
	}
	say(b, "佐藤です") // in 受付 again, its name kept
	hear(b, "ご用件は?")

	// --fresh: the sessions end and the adaptor opens again.
	ctl("reload", "--fresh", "窓口")
	c := dial()
	hear(c, "いらっしゃいませ")
	b.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := b.r.ReadString('\n'); err == nil {
		t.Error("a visitor kept its connection across reload --fresh")
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nestedReception is a reception behavior with a nested dialogue whose
// rules apply in each of its states, a deep history that resumes it after
// an interruption, and a final state that ends the run.
const nestedReception = `<seatml>
<general name="受付ロボット">
  <adaptor name="客" type="socket" role="server" port="PORT"/>
  <rule><key>さようなら</key><message sendto="客">またね</message><statetransition>終わり</statetransition></rule>
</general>
<state name="接客" initial="挨拶">
  <rule><key>止まって</key><message sendto="客">止まります</message><statetransition>中断</statetransition></rule>
  <state name="挨拶">
    <rule><key>こんにちは</key><message sendto="客">ご用件は?</message><statetransition>用件</statetransition></rule>
  </state>
  <state name="用件">
    <rule><key>会議室</key><message sendto="客">三階です</message></rule>
  </state>
  <history name="再開" type="deep"/>
</state>
<state name="中断">
  <rule><key>続けて</key><message sendto="客">再開します</message><statetransition>再開</statetransition></rule>
</state>
<final name="終わり"/>
</seatml>
`

// TestNestedReceptionOverTCP runs a nested behavior through the real
// binary over TCP, in Japanese: the compound state's rule works in its
// child, the history resumes the dialogue where it was interrupted, and
// the top-level final state ends the run with status 0 and "finished".
func TestNestedReceptionOverTCP(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "受付.seatml")
	os.WriteFile(f, []byte(strings.Replace(nestedReception, "PORT", port, 1)), 0o644)
	if out, code := runBinary(t, "", "check", f); code != 0 || out != "" {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	cmd, log := startSeat(t, "run", "--log-format", "json", f)
	c := dialSeat(t, port)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	for _, step := range [][2]string{
		{"こんにちは", "ご用件は?"},
		{"止まって", "止まります"},
		{"続けて", "再開します"},
		{"会議室", "三階です"}, // 用件's rule: the dialogue resumed there, not at 挨拶
		{"さようなら", "またね"},
	} {
		c.Write([]byte(step[0] + "\n"))
		if l, err := r.ReadString('\n'); l != step[1]+"\n" {
			t.Fatalf("%s: got %q (%v), want %q\n%s", step[0], l, err, step[1], log.String())
		}
	}
	if err := waitExit(t, cmd, 10*time.Second, log); err != nil {
		t.Fatalf("seat run: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), `"msg":"finished","behavior":"受付ロボット","final":"終わり"`) {
		t.Errorf("no finished line naming 終わり:\n%s", log.String())
	}
}

// TestCheckNestedStates: seat check places the errors of nested states:
// an initial that names no state inside, a history with nothing to
// remember, a name used at two levels.
func TestCheckNestedStates(t *testing.T) {
	f := filepath.Join(t.TempDir(), "入れ子.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="入れ子"/>
<state name="外" initial="挨捗">
  <state name="挨拶"/>
  <state name="外"/>
</state>
<state name="一人"><history name="履歴"/></state>
<state name="案内" initial="再開"><state name="説明"/><state name="説明"/><history name="再開"/></state>
<state name="作業"><state name="start"/></state>
</seatml>
`), 0o644)
	out, code := runBinary(t, "", "check", f)
	for _, want := range []string{
		`:2:26: initial "挨捗": no such state; did you mean "挨拶"?`,
		`:4:3: state "外" is declared twice (first at 2:1)`,
		`:6:18: history "履歴" is not inside a state that holds states: it has nothing to remember`,
		`:7:27: initial "再開" is a history state, which starts from its parent's initial state: name a state`,
		`:7:49: state "説明" is declared twice (first at 7:31)`,
	} {
		if !strings.Contains(out, f+want) {
			t.Errorf("output lacks %s%s", f, want)
		}
	}
	if code != 1 || t.Failed() || strings.Count(out, "nothing to remember") != 1 {
		t.Errorf("exit %d (want 1), one history error; output:\n%s", code, out)
	}
}

// TestInternalEventsOnTheRealBinary: a raised event, a compound state's
// done.state and a script's error.execution reach the rules of source
// "event" through the real binary, in order, in Japanese.
func TestInternalEventsOnTheRealBinary(t *testing.T) {
	f := filepath.Join(t.TempDir(), "内部.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="内部">
  <adaptor name="端末" type="stdio"/>
  <rule source="event"><key>done.state.案内</key><message sendto="端末">案内 完了</message><statetransition>待機</statetransition></rule>
  <rule source="event"><key>error.execution</key><message sendto="端末">失敗を検知</message></rule>
</general>
<state name="案内">
  <rule><key>出発</key><raise event="案内.出発"/><message sendto="端末">出発します</message></rule>
  <rule source="event"><key>案内.出発</key><message sendto="端末">移動中</message></rule>
  <rule><key>壊す</key><script>undefined_fn()</script></rule>
  <rule><key>到着</key><statetransition>着いた</statetransition></rule>
  <state name="移動"/>
  <final name="着いた"/>
</state>
<state name="待機"><rule><key>.</key><message sendto="端末">待機中</message></rule></state>
</seatml>
`), 0o644)
	stdout, stderr, code := runBinaryIO(t, "出発\n壊す\n到着\n何か\n", "run", f)
	want := "出発します\n移動中\n失敗を検知\n案内 完了\n待機中\n"
	if code != 0 || stdout != want {
		t.Errorf("exit %d, stdout %q, want %q\n%s", code, stdout, want, stderr)
	}
}

// TestNestedSessions: with session="peer", each visitor's conversation
// has its own configuration and history (real binary, TCP, Japanese): one
// resumes where it was interrupted, the other where it had got to.
func TestNestedSessions(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "多人数.seatml")
	src := strings.Replace(nestedReception, `port="PORT"/>`, `port="PORT" session="peer"/>`, 1)
	os.WriteFile(f, []byte(strings.Replace(src, "PORT", port, 1)), 0o644)
	_, log := startSeat(t, "run", "--control", "127.0.0.1:0", f)
	type visitor struct {
		r    *bufio.Reader
		send func(string)
	}
	dial := func() visitor {
		c := dialSeat(t, port)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		return visitor{bufio.NewReader(c), func(s string) { c.Write([]byte(s + "\n")) }}
	}
	a, b := dial(), dial()
	for _, step := range []struct {
		v       visitor
		in, out string
	}{
		{a, "こんにちは", "ご用件は?"},
		{b, "止まって", "止まります"},
		{a, "止まって", "止まります"},
		{a, "続けて", "再開します"},
		{a, "会議室", "三階です"}, // a resumed in 用件
		{b, "続けて", "再開します"},
		{b, "こんにちは", "ご用件は?"}, // b resumed in 挨拶, where it was
	} {
		step.v.send(step.in)
		if l, err := step.v.r.ReadString('\n'); l != step.out+"\n" {
			t.Fatalf("%s: got %q (%v), want %q\n%s", step.in, l, err, step.out, log.String())
		}
	}
}

// TestNestedTimeoutsOnTheRealBinary: each region of a parallel state
// times out on its own, on the real clock, through the real binary; one
// region's timeout leaves for the final state, which ends the run.
func TestNestedTimeoutsOnTheRealBinary(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "見守り.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="見守り">
  <adaptor name="客" type="socket" role="server" port="`+port+`"/>
</general>
<state name="待機"><onconnect source="客"><statetransition>見守り中</statetransition></onconnect></state>
<parallel name="見守り中">
  <state name="電池"><ontimeout timeout="0.3"><message sendto="客">電池 確認</message></ontimeout></state>
  <state name="頭"><ontimeout timeout="1"><message sendto="客">頭 確認</message><statetransition>終わり</statetransition></ontimeout></state>
</parallel>
<final name="終わり"/>
</seatml>
`), 0o644)
	cmd, log := startSeat(t, "run", "--log-format", "json", f)
	c := dialSeat(t, port)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	var got []string
	for len(got) == 0 || got[len(got)-1] != "頭 確認" {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v\n%s", got, err, log.String())
		}
		got = append(got, strings.TrimSuffix(l, "\n"))
	}
	// 電池 every 0.3 s while 頭 counts its 1 s: had 電池's timeout restarted
	// 頭's, 頭 would never time out.
	if n := strings.Count(strings.Join(got, "|"), "電池 確認"); n < 2 || n != len(got)-1 {
		t.Errorf("got %q, want 電池 確認 at least twice, then 頭 確認", got)
	}
	if err := waitExit(t, cmd, 10*time.Second, log); err != nil || !strings.Contains(log.String(), `"final":"終わり"`) {
		t.Errorf("seat run: %v\n%s", err, log.String())
	}
}

// TestNestedCountdownOnTheRealBinary: the control API (what the monitor
// counts down) tells when a nested behavior's soonest timeout is due: a
// state's own, here the compound state's around a leaf without one, and
// then the leaf's own once the dialogue moves to a state with a shorter
// one.
func TestNestedCountdownOnTheRealBinary(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	_, p, _ := strings.Cut(port, ":")
	f := filepath.Join(dir, "受付.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="受付">
  <adaptor name="客" type="socket" role="server" port="`+p+`"/>
</general>
<state name="接客" initial="挨拶">
  <ontimeout timeout="60"><message sendto="客">お待たせしました</message></ontimeout>
  <state name="挨拶"><rule><key>こんにちは</key><statetransition>確認</statetransition></rule></state>
  <state name="確認"><ontimeout timeout="5"><message sendto="客">もしもし</message></ontimeout></state>
</state></seatml>`), 0o644)
	control := freePort(t)
	start := time.Now()
	_, log := startSeat(t, "run", "--control", control, f)
	due := func() time.Duration {
		resp, err := http.Get("http://" + control + "/behaviors/%E5%8F%97%E4%BB%98") // 受付
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		var info struct{ Timeout *time.Time }
		if json.NewDecoder(resp.Body).Decode(&info) != nil || info.Timeout == nil {
			return -1
		}
		return info.Timeout.Sub(start)
	}
	// 接客's own, 60 s from its entry (挨拶 has none).
	waitFor(t, func() bool { d := due(); return d > 55*time.Second && d < 65*time.Second })
	peer := dialSeat(t, p)
	peer.Write([]byte("こんにちは\n"))
	// 確認's own 5 s is now the soonest.
	waitFor(t, func() bool { d := due(); return d > 0 && d < 10*time.Second })
	// The log comes through a pipe copied on its own goroutine: it may
	// trail the control API, so it is waited for too.
	waitFor(t, func() bool { return strings.Contains(log.String(), `"to": "確認"`) })
}

// TestRegionsStayApartOnTheRealBinary: in a parallel state, one region
// that moves by itself (an ondisconnect, then its ontimeout) leaves the
// other region where a visitor's line moved it: 用件's onexit never runs
// and the control API still lists 用件 as active. Before, each move went
// from the first region's leaf and sent 対話 back to 待機.
func TestRegionsStayApartOnTheRealBinary(t *testing.T) {
	visitor, staff := freePortNumber(t), freePortNumber(t)
	f := filepath.Join(t.TempDir(), "受付.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="受付">
  <adaptor name="客" type="socket" role="server" port="`+visitor+`"/>
  <adaptor name="係員" type="socket" role="server" port="`+staff+`"/>
  <rule source="客"><key>様子</key><message sendto="客">以上</message></rule>
</general>
<parallel name="稼働">
  <state name="対話">
    <state name="待機"><rule source="客"><key>こんにちは</key><statetransition>用件</statetransition></rule></state>
    <state name="用件"><onentry><message sendto="客">用件 入</message></onentry><onexit><message sendto="客">用件 出</message></onexit></state>
  </state>
  <state name="見守り">
    <state name="平常"><ondisconnect source="係員"><statetransition>警戒</statetransition></ondisconnect></state>
    <state name="警戒"><onentry><message sendto="客">警戒 入</message></onentry>
      <ontimeout timeout="0.3"><statetransition>平常</statetransition></ontimeout></state>
  </state>
</parallel>
</seatml>
`), 0o644)
	_, log := startSeat(t, "run", "--control", "127.0.0.1:0", f)
	c := dialSeat(t, visitor)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	var got []string
	read := func(want string) {
		t.Helper()
		for len(got) == 0 || got[len(got)-1] != want {
			l, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("after %q: %v\n%s", got, err, log.String())
			}
			got = append(got, strings.TrimSuffix(l, "\n"))
		}
	}
	c.Write([]byte("こんにちは\n"))
	read("用件 入")
	dialSeat(t, staff).Close() // 係員 leaves: 見守り moves to 警戒, then back by its timeout
	read("警戒 入")
	var addr string
	waitFor(t, func() bool {
		m := controlURL.FindStringSubmatch(log.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	var active []string
	defer func() {
		if t.Failed() {
			t.Logf("active states: %v\nthe visitor got %q\n%s", active, got, log.String())
		}
	}()
	waitFor(t, func() bool { // 警戒's 0.3 s timeout takes 見守り back to 平常
		resp, err := http.Get("http://" + addr + "/behaviors/%E5%8F%97%E4%BB%98") // 受付
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var info struct{ Active []string }
		json.NewDecoder(resp.Body).Decode(&info)
		active = info.Active
		return strings.Join(active, " ") == "稼働 対話 用件 見守り 平常"
	})
	c.Write([]byte("様子\n")) // its answer comes after anything sent before
	read("以上")
	if strings.Join(got, "|") != "用件 入|警戒 入|以上" {
		t.Errorf("the visitor got %q, want 用件 入, 警戒 入, 以上 only (用件's onexit and onentry must not run again)\n%s", got, log.String())
	}
}

// TestTimeoutTiesInTranscripts: three regions whose timeouts fall due at
// the same instant fire in document order in seat test, every run (a
// transcript failed 4 runs in 20 when a Go map decided).
func TestTimeoutTiesInTranscripts(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "見回り.seatml"), []byte(`<seatml><general name="見回り"><adaptor name="係員" type="socket" role="server" port="0"/></general>
<parallel name="巡回">
  <state name="玄関"><ontimeout timeout="5"><message sendto="係員">玄関 異常なし</message></ontimeout></state>
  <state name="廊下"><ontimeout timeout="5"><message sendto="係員">廊下 異常なし</message></ontimeout></state>
  <state name="倉庫"><ontimeout timeout="5"><message sendto="係員">倉庫 異常なし</message></ontimeout></state>
</parallel></seatml>
`), 0o644)
	tf := filepath.Join(dir, "見回り.seattest")
	os.WriteFile(tf, []byte("+5s\n< 玄関 異常なし\n< 廊下 異常なし\n< 倉庫 異常なし\n+5s\n< 玄関 異常なし\n< 廊下 異常なし\n< 倉庫 異常なし\n"), 0o644)
	for i := range 20 {
		if stdout, stderr, code := runSeat("test", tf); code != 0 {
			t.Fatalf("run %d: exit %d\n%s%s", i+1, code, stdout, stderr)
		}
	}
}

// TestNestedTransitionsLogFromAndTo: a nested behavior's "state" lines
// say from and to, as a flat behavior's do: from is the leaf the
// transition left (the leaves, when it left several regions), on every
// state it entered; the initial states have no from. Before, they said
// only to. An SCXML document's lines do the same. On the real binary.
func TestNestedTransitionsLogFromAndTo(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "受付.seatml")
	os.WriteFile(f, []byte(`<seatml><general name="受付"><adaptor name="客" type="stdio"/>
  <rule><key>終了</key><statetransition>休止</statetransition></rule>
</general>
<state name="待機"><rule><key>こんにちは</key><statetransition>用件</statetransition></rule></state>
<parallel name="稼働">
  <state name="対話">
    <state name="用件"><rule><key>はい</key><statetransition>確認</statetransition></rule></state>
    <state name="確認"/>
  </state>
  <state name="見守り"><state name="平常"/></state>
</parallel>
<state name="休止"/>
</seatml>
`), 0o644)
	_, stderr, code := runBinaryIO(t, "こんにちは\nはい\n終了\n", "run", "--log-format=json", f)
	var got []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, `"msg":"state"`) {
			got = append(got, l[strings.Index(l, `"behavior"`):])
		}
	}
	want := []string{
		`"behavior":"受付","to":"待機"}`,
		`"behavior":"受付","from":"待機","to":"稼働"}`,
		`"behavior":"受付","from":"待機","to":"対話"}`,
		`"behavior":"受付","from":"待機","to":"用件"}`,
		`"behavior":"受付","from":"待機","to":"見守り"}`,
		`"behavior":"受付","from":"待機","to":"平常"}`,
		`"behavior":"受付","from":"用件","to":"確認"}`,
		`"behavior":"受付","from":"平常, 確認","to":"休止"}`,
	}
	if code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("exit %d; state lines:\n%s\nwant\n%s\nstderr:\n%s", code, strings.Join(got, "\n"), strings.Join(want, "\n"), stderr)
	}

	doc := filepath.Join(dir, "受付.scxml")
	os.WriteFile(doc, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat"
       version="1.0" datamodel="lua" name="受付文書" initial="待機">
  <seat:adaptor name="客" type="stdio"/>
  <state id="待機"><transition event="客.line" target="用件"/></state>
  <state id="接客">
    <state id="用件"><transition event="客.line" target="確認"/></state>
    <state id="確認"/>
  </state>
</scxml>
`), 0o644)
	_, stderr, code = runBinaryIO(t, "こんにちは\nはい\n", "run", "--log-format=json", doc)
	got = got[:0]
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, `"msg":"state"`) {
			got = append(got, l[strings.Index(l, `"behavior"`):])
		}
	}
	want = []string{
		`"behavior":"受付文書","to":"待機"}`,
		`"behavior":"受付文書","from":"待機","to":"接客"}`,
		`"behavior":"受付文書","from":"待機","to":"用件"}`,
		`"behavior":"受付文書","from":"用件","to":"確認"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("exit %d; SCXML state lines:\n%s\nwant\n%s\nstderr:\n%s", code, strings.Join(got, "\n"), strings.Join(want, "\n"), stderr)
	}
}

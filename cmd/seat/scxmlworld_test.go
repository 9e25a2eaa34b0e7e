package main

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// receptionDesk is an SCXML document in seat's world: a socket adaptor
// declared with <seat:adaptor>, its peer's arrival and lines as events,
// lines sent with <send type="seat"> and with the seat table, a delayed
// event on the real clock, Japanese names throughout.
const receptionDesk = `<?xml version="1.0" encoding="UTF-8"?>
<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat"
       version="1.0" datamodel="lua" name="受付係" initial="待機">
  <seat:adaptor name="客" type="socket" role="server" port="5004"/>
  <state id="待機">
    <transition event="客.connect" target="会話"/>
  </state>
  <state id="会話" initial="挨拶">
    <state id="挨拶">
      <onentry><send type="seat" target="客"><content expr="'いらっしゃいませ'"/></send></onentry>
      <transition event="客.line" cond="_event.data.text == 'こんにちは'" target="案内">
        <script>seat.reply('ご用件は？ ' .. (_event.data.peer:match('^127%.0%.0%.1:') and '近く' or _event.data.peer))</script>
      </transition>
    </state>
    <state id="案内">
      <onentry><send event="催促" delay="200ms"/></onentry>
      <transition event="催促"><send type="seat" targetexpr="'客'" event="お急ぎですか"/></transition>
      <transition event="客.line" cond="_event.data.text == 'さようなら'" target="終わり"/>
    </state>
  </state>
  <final id="終わり"><onentry><script>seat.send('客', 'またね ' .. seat.state())</script></onentry></final>
</scxml>
`

// TestSCXMLInSeatsWorld runs an SCXML document that declares a socket
// adaptor on the real binary over TCP: the peer's connection and lines
// are events, <send type="seat">, seat.reply and seat.send answer it, a
// delayed <send> fires on the real clock, and the final state ends the
// run with status 0. --set overrides the adaptor's port.
func TestSCXMLInSeatsWorld(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "受付係.scxml")
	if err := os.WriteFile(f, []byte(receptionDesk), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runBinary(t, "", "check", f); code != 0 {
		t.Fatalf("seat check: exit %d: %s", code, out)
	}
	cmd, log := startSeat(t, "run", "--log-format", "json", "--set", "客.port="+port, f)
	c := dialSeat(t, port)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	expect := func(want string) {
		t.Helper()
		l, err := r.ReadString('\n')
		if err != nil || strings.TrimSuffix(l, "\n") != want {
			t.Fatalf("read %q, %v; want %q\n%s", l, err, want, log.String())
		}
	}
	expect("いらっしゃいませ")
	send(t, c, "こんにちは")
	expect("ご用件は？ 近く")
	expect("お急ぎですか") // 200 ms later, on the real clock
	send(t, c, "さようなら")
	expect("またね 終わり")
	if err := waitExit(t, cmd, 10*time.Second, log); err != nil || !strings.Contains(log.String(), `"final":"終わり"`) {
		t.Errorf("seat run: %v\n%s", err, log.String())
	}
}

func send(t *testing.T, c net.Conn, line string) {
	t.Helper()
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
}

// TestCheckSCXMLSeatElements: seat check finds what is wrong with seat's
// elements in an SCXML document, placed in the file: an adaptor's
// misspelt attribute (with a suggestion), a <send type="seat"> to an
// adaptor that is not declared, a <send> to an adaptor without
// type="seat", a seat element out of place (an invoked document's too),
// an adaptor name with a space, a namespace near seat's, an undeclared
// seat: prefix, <adaptor> without it, and a send type seat lacks.
func TestCheckSCXMLSeatElements(t *testing.T) {
	f := filepath.Join(t.TempDir(), "誤り.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" xmlns:near="https://github.com/seatml/seat/" version="1.0" datamodel="lua">
  <seat:adaptor name="客" type="socket" role="server" prot="5000"/>
  <state id="一">
    <seat:adaptor name="他" type="stdio"/>
    <onentry><send type="seat" target="各" event="やあ"/><send target="客" event="やあ"/><send type="Seat" target="客" event="やあ"/></onentry>
    <invoke><content><scxml><seat:adaptor name="子" type="stdio"/><final/></scxml></content></invoke>
  </state>
  <seat:adaptor name="客 人" type="socket" role="server" port="5001"/>
  <near:adaptor name="近い" type="stdio"/>
  <adaptor name="裸" type="stdio"/>
</scxml>
`), 0o644)
	out, code := runBinary(t, "", "check", f)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{
		`誤り.scxml:2:54: unknown attribute "prot" on <adaptor>; did you mean "port"?`,
		`誤り.scxml:4:5: <seat:adaptor> belongs directly inside <scxml>`,
		`誤り.scxml:5:40: <send type="seat"> target "各": no such adaptor`, `did you mean "客"?`,
		`誤り.scxml:5:69: <send> target "客" is one of seat's adaptors: add type="seat"`,
		`誤り.scxml:5:96: warning: <send> type "Seat" is not one seat has`, `did you mean "seat"?`,
		`誤り.scxml:6:29: <seat:adaptor> belongs directly inside <scxml> (a document an <invoke> runs has none of seat's world)`,
		`誤り.scxml:8:23: adaptor name "客 人": in an SCXML document an adaptor's name begins its events' names`,
		`誤り.scxml:9:3: <adaptor>: its namespace "https://github.com/seatml/seat/" is not seat's, so seat would ignore it; did you mean "https://github.com/seatml/seat"?`,
		`誤り.scxml:10:3: <adaptor> is not an SCXML element; seat's adaptors are declared with <seat:adaptor>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

// TestSCXMLSessions: with session="peer" on its adaptor, every peer of an
// SCXML document has a session of its own: its own datamodel and
// configuration, and its final state ends its session only (real binary,
// TCP, Japanese).
func TestSCXMLSessions(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "窓口.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua" name="窓口">
  <seat:adaptor name="客" type="socket" role="server" port="`+port+`" session="peer"/>
  <datamodel><data id="n" expr="0"/></datamodel>
  <state id="聞く">
    <transition event="客.line" cond="_event.data.text == 'いくつ'"><script>seat.reply(n .. ' ' .. seat.state())</script></transition>
    <transition event="客.line" cond="_event.data.text == 'おわり'" target="終わり"/>
    <transition event="客.line"><assign location="n" expr="n + 1"/></transition>
  </state>
  <final id="終わり"><onentry><script>seat.reply('さようなら')</script></onentry></final>
</scxml>
`), 0o644)
	_, log := startSeat(t, "run", "--log-format", "json", f)
	a, b := dialSeat(t, port), dialSeat(t, port)
	ra, rb := bufio.NewReader(a), bufio.NewReader(b)
	for _, c := range []net.Conn{a, b} {
		c.SetDeadline(time.Now().Add(10 * time.Second))
	}
	ask := func(c net.Conn, r *bufio.Reader, say, want string) {
		t.Helper()
		send(t, c, say)
		if l, err := r.ReadString('\n'); err != nil || strings.TrimSuffix(l, "\n") != want {
			t.Fatalf("after %q: %q, %v; want %q\n%s", say, l, err, want, log.String())
		}
	}
	send(t, a, "あ")
	send(t, a, "い")
	send(t, b, "う")
	ask(a, ra, "いくつ", "2 聞く")
	ask(b, rb, "いくつ", "1 聞く")
	ask(a, ra, "おわり", "さようなら")
	ask(b, rb, "いくつ", "1 聞く") // a's final state ended a's session only
}

// TestSCXMLRecordReplay records an SCXML document's run over TCP and
// replays it: the same messages come back, and an edited reply diverges.
func TestSCXMLRecordReplay(t *testing.T) {
	dir := t.TempDir()
	port, rec := freePortNumber(t), filepath.Join(dir, "受付係.jsonl")
	f := filepath.Join(dir, "受付係.scxml")
	os.WriteFile(f, []byte(receptionDesk), 0o644)
	cmd, log := startSeat(t, "run", "--record", rec, "--set", "客.port="+port, f)
	c := dialSeat(t, port)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	for _, want := range []string{"いらっしゃいませ", "", "ご用件は？ 近く", "お急ぎですか", "", "またね 終わり"} {
		if want == "" {
			continue
		}
		if l, err := r.ReadString('\n'); err != nil || strings.TrimSuffix(l, "\n") != want {
			t.Fatalf("%q, %v; want %q\n%s", l, err, want, log.String())
		}
		switch want {
		case "いらっしゃいませ":
			send(t, c, "こんにちは")
		case "お急ぎですか":
			send(t, c, "さようなら")
		}
	}
	if err := waitExit(t, cmd, 10*time.Second, log); err != nil {
		t.Fatalf("seat run: %v\n%s", err, log.String())
	}
	if stdout, errOut, code := runSeat("replay", rec); code != 0 || !strings.Contains(stdout, "2 inputs, 4 messages") {
		t.Fatalf("replay: exit %d\n%s%s", code, stdout, errOut)
	}
	os.WriteFile(f, []byte(strings.Replace(receptionDesk, "ご用件は？", "ご用件をどうぞ", 1)), 0o644)
	if stdout, _, code := runSeat("replay", rec); code != 1 || !strings.Contains(stdout, "replayed: ご用件をどうぞ 近く") {
		t.Errorf("edited replay: exit %d\n%s", code, stdout)
	}
}

// TestSCXMLSelfSendLoopOnTheRealBinary: a document that keeps sending
// itself events without a delay hears its adaptor between them, stops on
// SIGTERM at once, and left alone is stopped with status 1 after 100,000
// such events, naming the cause (before, its queue was drained whole:
// input and SIGTERM waited up to a million events).
func TestSCXMLSelfSendLoopOnTheRealBinary(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "輪.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua" initial="待機">
  <seat:adaptor name="chat" type="socket" role="server" port="`+port+`"/>
  <state id="待機"><transition event="chat.line" cond="_event.data.text == 'go'" target="回る"/></state>
  <state id="回る">
    <onentry><script>local t = os.clock() while os.clock() - t &lt; 0.001 do end</script><send event="また"/></onentry>
    <transition event="また" target="回る"/>
    <transition event="chat.line" cond="_event.data.text == 'stop'" target="待機"><script>seat.reply('止まった')</script></transition>
  </state>
</scxml>
`), 0o644)
	cmd, log := startSeat(t, "run", "--log-level", "warn", f)
	c := dialSeat(t, port)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	send(t, c, "go")
	send(t, c, "stop")
	if l, err := bufio.NewReader(c).ReadString('\n'); err != nil || l != "止まった\n" {
		t.Fatalf("%q, %v\n%s", l, err, log.String())
	}
	send(t, c, "go")
	cmd.Process.Signal(syscall.SIGTERM)
	if err := waitExit(t, cmd, 5*time.Second, log); err != nil {
		t.Errorf("after SIGTERM: %v\n%s", err, log.String())
	}

	src, _ := os.ReadFile(f)
	os.WriteFile(f, []byte(strings.Replace(string(src), "local t = os.clock() while os.clock() - t &lt; 0.001 do end", "", 1)), 0o644)
	port = freePortNumber(t)
	cmd, log = startSeat(t, "run", "--log-level", "warn", "--set", "chat.port="+port, f)
	send(t, dialSeat(t, port), "go")
	err := waitExit(t, cmd, 60*time.Second, log)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(log.String(), "100000 events handled without the queue ever empty") {
		t.Errorf("left alone: %v, want exit 1 naming the cause\n%s", err, log.String())
	}
}

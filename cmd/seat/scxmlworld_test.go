package main

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
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
// adaptor that is not declared, and a seat element out of place.
func TestCheckSCXMLSeatElements(t *testing.T) {
	f := filepath.Join(t.TempDir(), "誤り.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua">
  <seat:adaptor name="客" type="socket" role="server" prot="5000"/>
  <state id="一">
    <seat:adaptor name="他" type="stdio"/>
    <onentry><send type="seat" target="各" event="やあ"/></onentry>
  </state>
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
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

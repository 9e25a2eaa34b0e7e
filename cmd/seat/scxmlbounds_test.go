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

// TestSCXMLPeerSessionIDsAreUnique: each peer's session of an SCXML
// document (session="peer") has a _sessionid of its own, and
// #_scxml_ID of another peer's session does not reach the sender: it is
// error.communication (real binary, TCP). Before, every peer's session
// was "1", and the send came back to the sender itself.
func TestSCXMLPeerSessionIDsAreUnique(t *testing.T) {
	port := freePortNumber(t)
	f := filepath.Join(t.TempDir(), "番号.scxml")
	os.WriteFile(f, []byte(`<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:seat="https://github.com/seatml/seat" version="1.0" datamodel="lua" name="番号">
  <seat:adaptor name="客" type="socket" role="server" port="`+port+`" session="peer"/>
  <state id="聞く">
    <transition event="客.line" cond="_event.data.text == '番号'"><script>seat.reply(_sessionid)</script></transition>
    <transition event="客.line" cond="_event.data.text:match('^送る ')">
      <send event="呼び" targetexpr="'#_scxml_' .. _event.data.text:match('^送る (.*)$')"/>
    </transition>
    <transition event="呼び"><script>seat.reply('自分に届いた ' .. _sessionid)</script></transition>
    <transition event="error.communication"><script>seat.reply('届かない')</script></transition>
  </state>
</scxml>
`), 0o644)
	_, log := startSeat(t, "run", "--log-format", "json", f)
	a, b := dialSeat(t, port), dialSeat(t, port)
	ra, rb := bufio.NewReader(a), bufio.NewReader(b)
	for _, c := range []net.Conn{a, b} {
		c.SetDeadline(time.Now().Add(10 * time.Second))
	}
	ask := func(c net.Conn, r *bufio.Reader, say string) string {
		t.Helper()
		send(t, c, say)
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v\n%s", say, err, log.String())
		}
		return strings.TrimSuffix(l, "\n")
	}
	idA, idB := ask(a, ra, "番号"), ask(b, rb, "番号")
	if idA == "" || idA == idB {
		t.Errorf("session ids %q and %q; want two different ids", idA, idB)
	}
	if got := ask(b, rb, "送る "+idA); got != "届かない" {
		t.Errorf("b's <send> to #_scxml_%s (a's session): b heard %q; want error.communication (届かない)\n%s", idA, got, log.String())
	}
	if got := ask(b, rb, "送る "+idB); got != "自分に届いた "+idB {
		t.Errorf("b's <send> to its own #_scxml_%s: %q", idB, got)
	}
}

package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/web/webtest"
)

// TestOperatorPageShowsWhatWasSaidOnTheRealBinary: eSEAT's SimpleIO on the
// real binary with show="peer" on its web adaptor: what the operator
// types goes to the peer, and the page's log, in headless Chromium, shows
// it as said to the peer ("peer ← …"), in Japanese; a peer's line is
// shown as before.
func TestOperatorPageShowsWhatWasSaidOnTheRealBinary(t *testing.T) {
	_, log := startSeat(t, "run", "--set", "web.port=0", "--set", "peer.port=0", "--set", "web.show=peer", "../../examples/simpleio.seatml")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seat logged:\n%s", log.String())
		}
	})
	// "addr": "127.0.0.1:N" for the socket, "url": "http://127.0.0.1:N/" for the page.
	addrOf := func(adaptor, field string) string {
		var addr string
		waitFor(t, func() bool {
			for _, l := range strings.Split(log.String(), "\n") {
				if strings.Contains(l, `"adaptor": "`+adaptor+`"`) && strings.Contains(l, `"`+field+`": "`) {
					_, after, _ := strings.Cut(l, `"`+field+`": "`)
					addr, _, _ = strings.Cut(after, `"`)
					return true
				}
			}
			return false
		})
		return addr
	}
	web, peerAddr := addrOf("web", "url"), addrOf("peer", "addr")
	_, peerPort, _ := strings.Cut(peerAddr, ":")
	peer := dialSeat(t, peerPort)
	b := webtest.Start(t)
	b.Navigate(web)
	b.WaitFor("connected", `document.getElementById('conn').textContent === 'connected' && document.getElementById('w-main:say') != null`)
	b.TypeText("#w-main\\:say", "いらっしゃいませ", true)
	peer.SetDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(peer).ReadString('\n'); err != nil || line != "いらっしゃいませ\n" {
		t.Fatalf("the peer got %q, %v", line, err)
	}
	b.WaitFor("said in the log", `Array.from(document.querySelectorAll('#log li.said')).some(li => li.textContent.endsWith('peer ← いらっしゃいませ'))`)
}

// TestShowChecked: seat check refuses a show= naming no adaptor of the
// behavior, at the value.
func TestShowChecked(t *testing.T) {
	file := filepath.Join(t.TempDir(), "op.seatml")
	os.WriteFile(file, []byte(`<seatml><general name="op"><adaptor name="web" type="web" port="0" show="visitor, 声"/>
<adaptor name="visitor" type="socket" port="0"/></general><state name="s"/></seatml>`), 0o644)
	_, stderr, code := runSeat("check", file)
	if want := `op.seatml:1:74: adaptor "web": show names no adaptor "声" of this behavior`; code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, want %s in\n%s", code, want, stderr)
	}
}

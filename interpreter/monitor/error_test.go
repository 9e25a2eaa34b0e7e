package monitor

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/web/webtest"
)

// TestErrorLineInBrowser: a script that fails while a page is open shows
// on the page as an error line: what failed, the error with its file and
// line, and the failing line of code with a caret under the nil global
// (past Japanese, which takes two columns a character), in headless
// Chromium.
func TestErrorLineInBrowser(t *testing.T) {
	b := webtest.Start(t)
	src := `<seatml><general name="受付"><adaptor name="音声" type="socket" role="server" port="0"/></general>
<state name="待機"><rule><key>こんにちは</key><script>
local who = "お客様"
local greeting = "お客様さん"; greet_guest(greeting)
</script></rule></state></seatml>`
	m := startMonitored(t, "受付", src)
	file, mon, info, srv := m.file, m.mon, m.info, m.srv
	b.Navigate(srv.URL + "/monitor/")
	b.WaitFor("the behavior's section", `document.querySelector('section.behavior') != null`)
	deadline := time.Now().Add(10 * time.Second)
	for mon.pages.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the page never connected")
		}
		time.Sleep(5 * time.Millisecond)
	}

	conn, err := net.DialTimeout("tcp", info.Adaptors[0].Addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintln(conn, "こんにちは")
	b.WaitFor("the error line", `document.querySelector('tr.line.error') != null`)
	got := b.Eval(`(() => { const r = document.querySelector('tr.line.error'); return [r.querySelector('span.kind').textContent, r.cells[2].firstChild.textContent, r.querySelector('pre.detail').textContent]; })()`).([]any)
	want := []any{
		"error",
		"script failed: " + file + ":4: attempt to call greet_guest, which is nil (a global not defined when this ran; check its spelling)",
		"4 | local greeting = \"お客様さん\"; greet_guest(greeting)\n  |                                ^",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("error line, part %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
}

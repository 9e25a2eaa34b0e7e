package web_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/web/webtest"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
)

var update = flag.Bool("update", false, "rewrite docs/web-panel.png from the browser test")

// runExample starts an example behavior with its ports replaced; it stops
// at the end of the test.
func runExample(t *testing.T, file string, ports map[string]string) *interpreter.Machine {
	m, _ := runExampleStop(t, file, ports)
	return m
}

// runExampleStop is runExample with a function that stops it early.
func runExampleStop(t *testing.T, file string, ports map[string]string) (*interpreter.Machine, func()) {
	t.Helper()
	data, err := os.ReadFile("../../examples/" + file)
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	for from, to := range ports {
		src = strings.Replace(src, from, to, 1)
	}
	prog, diags := seatml.LoadBytes("../../examples/"+file, []byte(src), seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	m, err := interpreter.New(prog, interpreter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	select {
	case <-m.Ready():
	case err := <-done:
		t.Fatalf("%s: %v", file, err)
	}
	return m, stop
}

func addr(m *interpreter.Machine, name string) string {
	return m.Adaptor(name).(adaptors.Addresser).Addr()
}

// TestBrowserWizard drives the Wizard-of-Oz panel in headless Chromium: a
// click changes the panel (a state transition), buttons and a typed entry
// reach the kiosk, and its replies appear in the text area.
func TestBrowserWizard(t *testing.T) {
	b := webtest.Start(t)
	kiosk := runExample(t, "kiosk.seatml", map[string]string{`port="5001"`: `port="0"`})
	_, kioskPort, _ := strings.Cut(addr(kiosk, "visitor"), ":")
	wizard, stopWizard := runExampleStop(t, "wizard.seatml", map[string]string{`port="8081"`: `port="0"`, `port="5001"`: `port="` + kioskPort + `"`})
	b.Call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1100, "height": 760, "deviceScaleFactor": 1, "mobile": false})
	b.Navigate("http://" + addr(wizard, "web") + "/")
	b.WaitFor("connected", `document.getElementById('conn').textContent === 'connected'`)
	b.WaitFor("start panel", `document.getElementById('state').textContent === 'start'`)
	// Opening the page fired the wizard's onconnect, which answered this
	// page with its own address.
	b.WaitFor("onconnect greeting", `document.getElementById('log').innerText.includes('operator connected from 127.0.0.1:')`)
	if got := b.Eval(`document.title`); got != "wizard \u2013 seat" {
		t.Errorf("title %v", got)
	}

	b.Click(`button.widget-button`) // "Begin session"
	b.WaitFor("panel switched", `document.getElementById('state').textContent === 'operator' && !!document.getElementById('w-operator:replies')`)
	replies := `document.getElementById('w-operator:replies').value`
	b.WaitFor("kiosk greeting", replies+`.includes('Visitor #1: tickets, map, or help?')`)

	b.Click(`button.widget-button:nth-of-type(1)`) // "Tickets"
	b.WaitFor("tickets", replies+`.includes('How many tickets? (1 to 9)')`)
	b.TypeText(`#w-operator\:say`, "2", true)
	b.WaitFor("price", replies+`.includes('2 ticket(s) cost 25.00 EUR. Confirm? yes/no')`)
	b.WaitFor("input cleared", `document.getElementById('w-operator:say').value === ''`)
	// The message log shows the transition.
	if log := fmt.Sprint(b.Eval(`document.getElementById('log').innerText`)); !strings.Contains(log, "state operator") {
		t.Errorf("message log: %q", log)
	}
	png := b.Screenshot()
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 5000 {
		t.Fatalf("screenshot is not a PNG (%d bytes)", len(png))
	}
	if *update {
		if err := os.WriteFile("../../docs/web-panel.png", png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The page reconnects by itself when the server comes back is covered by
	// its onclose handler; here: keyboard use reaches every control.
	if n := b.Eval(`document.querySelectorAll('#panel button, #panel input, #panel textarea').length`); n != float64(9) {
		t.Errorf("%v focusable controls, want 9", n)
	}
	if n := b.Eval(`Array.from(document.querySelectorAll('#panel input, #panel textarea')).filter(e => !e.getAttribute('aria-label')).length`); n != float64(0) {
		t.Errorf("%v fields without a label", n)
	}
	// The server restarts on the same port: the page notices, reconnects by
	// itself and shows the new run's state, with no reload.
	webAddr := addr(wizard, "web")
	_, webPort, _ := strings.Cut(webAddr, ":")
	b.Eval(`window.notReloaded = true`)
	stopWizard()
	b.WaitFor("disconnected", `document.getElementById('conn').textContent.startsWith('disconnected')`)
	runExample(t, "wizard.seatml", map[string]string{`port="8081"`: `port="` + webPort + `"`, `port="5001"`: `port="` + kioskPort + `"`})
	b.WaitFor("reconnected", `document.getElementById('conn').textContent === 'connected' && document.getElementById('state').textContent === 'start' && window.notReloaded === true`)
}

// TestSimpleIOExample plays eSEAT's SimpleIO over a WebSocket client and a
// TCP peer: a typed field sent with the Send button, and incoming lines
// appended to the text area.
func TestSimpleIOExample(t *testing.T) {
	m := runExample(t, "simpleio.seatml", map[string]string{`port="8082"`: `port="0"`, `port="5003"`: `port="0"`})
	peer, err := net.DialTimeout("tcp", addr(m, "peer"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	peer.SetDeadline(time.Now().Add(30 * time.Second))
	s := &server{t: t, m: m, addr: addr(m, "web")}
	page, _, err := s.dial(nil)
	if err != nil {
		t.Fatal(err)
	}
	page.expect("state main", "panel main label,input,button,button,brk,text", `gui main:say set ""`, `gui main:incoming set ""`)
	// The peer speaks first: once its line is shown, its connection is
	// surely among those a message goes to (it is counted open a little
	// before, at accept).
	peer.Write([]byte("hi page\n"))
	page.expect(`gui main:incoming append "< hi page\n"`)
	// What a page does for "type, then click Send": report the field, then click.
	page.sendJSON(`{"type":"gui","id":"main:say","op":"set","value":"hello peer"}`)
	page.sendJSON(`{"type":"event","source":"gui","id":"Send","text":"Send"}`)
	line, err := bufio.NewReader(peer).ReadString('\n')
	if err != nil || line != "hello peer\n" {
		t.Fatalf("peer got %q, %v", line, err)
	}
	page.expect(`gui main:say set "hello peer"`, `gui main:incoming append "> hello peer\n"`, `gui main:say set ""`)
	// An update for a widget of another state is refused.
	page.sendJSON(`{"type":"gui","id":"other:say","op":"set","value":"x"}`)
	page.sendJSON(`{"type":"event","source":"gui","id":"Clear"}`)
	page.expect(`gui main:incoming clear ""`)
}

// contrastJS lists each widget of the panel drawn on a background of its
// own, with the WCAG contrast ratio of its text on that background.
const contrastJS = `(function () {
  function lum(css) {
    var c = css.match(/[\d.]+/g).slice(0, 3).map(Number).map(function (v) {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }
  return Array.from(document.querySelectorAll('#panel .widget')).filter(function (e) {
    return e.style.backgroundColor !== '';
  }).map(function (e) {
    var s = getComputedStyle(e), a = lum(s.color), b = lum(s.backgroundColor);
    return e.textContent + ' ' + ((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)).toFixed(1);
  });
})()`

// TestBrowserNestedPanel drives the operator page of a nested behavior in
// headless Chromium: the widgets of every active state appear, grouped
// under each state's name, outermost first (the emergency button of the
// compound state 受付中 beside its child's field, the other region's
// button), and work; a click on a button whose label another active state
// shares runs the one clicked; text on a coloured label or button reads
// at a contrast of at least 4.5:1 (WCAG AA). Before, the page showed the
// current state's widgets alone ("This state has no controls." in a
// child of 受付中), and a blue label kept the page's dark text.
func TestBrowserNestedPanel(t *testing.T) {
	b := webtest.Start(t)
	s := startServer(t, nestedDoc)
	b.SetViewport(1100, 760)
	b.Navigate("http://" + s.addr + "/")
	b.WaitFor("connected", `document.getElementById('conn').textContent === 'connected'`)
	groups := `Array.from(document.querySelectorAll('#panel section.group')).map(function (g) {
		var h = g.querySelector('h3');
		return (h ? h.textContent : '-') + ':' + g.querySelectorAll('.widget').length;
	}).join(' ')`
	b.WaitFor("grouped widgets", groups+` === '受付中:3 名前:1 平常:1'`)
	if got := b.Eval(`document.querySelector('#panel section.current h3').textContent`); got != "名前" {
		t.Errorf("the current state's group is %v, want 名前", got)
	}
	if n := b.Eval(`document.querySelectorAll('#panel .empty').length`); n != float64(0) {
		t.Errorf("the page says a state has no controls")
	}
	checkContrast := func() {
		t.Helper()
		list, _ := b.Eval(contrastJS).([]any)
		if len(list) == 0 {
			t.Fatal("no coloured widget on the panel")
		}
		for _, e := range list {
			text, ratio, _ := strings.Cut(fmt.Sprint(e), " ")
			if r, err := strconv.ParseFloat(ratio, 64); err != nil || r < 4.5 {
				t.Errorf("%q: contrast %s:1, want at least 4.5:1", text, ratio)
			}
		}
	}
	checkContrast() // 受付中です on blue, 緊急停止 on red

	// The other region's button: its region moves, the current state stays.
	b.Click(`#panel section[data-state="平常"] button`)
	b.WaitFor("the other region moved", groups+` === '受付中:3 名前:1 呼出中:1'`)
	checkContrast() // 係員を呼んでいます on navy
	b.TypeText(`#w-名前\:氏名`, "山田", true)
	b.WaitFor("確認", `document.getElementById('state').textContent === '確認' && `+groups+` === '受付中:3 確認:2 呼出中:1'`)
	// 受付中 and 確認 both have a ヘルプ button: each runs its own.
	b.Click(`#panel section[data-state="受付中"] button:nth-of-type(2)`)
	b.WaitFor("受付中's ヘルプ", `document.getElementById('log').innerText.includes('受付のヘルプ')`)
	b.Click(`#panel section[data-state="確認"] button`)
	b.WaitFor("確認's ヘルプ", `document.getElementById('log').innerText.includes('確認のヘルプ')`)
	if log := fmt.Sprint(b.Eval(`document.getElementById('log').innerText`)); strings.Count(log, "のヘルプ") != 2 {
		t.Errorf("message log: %q", log)
	}
	// The compound state's emergency button, from its child.
	b.Click(`#panel section[data-state="受付中"] button`)
	b.WaitFor("停止中", `document.getElementById('state').textContent === '停止中'`)
	// One state: its widgets, without a heading.
	b.WaitFor("one group", groups+` === '-:1'`)
	checkContrast() // 停止しました on yellow: dark text
}

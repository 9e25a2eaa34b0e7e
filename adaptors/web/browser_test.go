package web_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/seatml/seat/adaptors"
	_ "github.com/seatml/seat/adaptors/socket"
	"github.com/seatml/seat/interpreter"
)

var update = flag.Bool("update", false, "rewrite docs/web-panel.png from the browser test")

// runExample starts an example behavior with its ports replaced.
func runExample(t *testing.T, file string, ports map[string]string) *interpreter.Machine {
	t.Helper()
	data, err := os.ReadFile("../../examples/" + file)
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	for from, to := range ports {
		src = strings.Replace(src, from, to, 1)
	}
	prog, diags := interpreter.LoadBytes("../../examples/"+file, []byte(src), interpreter.LoadOptions{})
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
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-m.Ready():
	case err := <-done:
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

func addr(m *interpreter.Machine, name string) string {
	return m.Adaptor(name).(adaptors.Addresser).Addr()
}

// TestBrowserWizard drives the Wizard-of-Oz panel in headless Chromium: a
// click changes the panel (a state transition), buttons and a typed entry
// reach the kiosk, and its replies appear in the text area.
func TestBrowserWizard(t *testing.T) {
	b := startBrowser(t)
	kiosk := runExample(t, "kiosk.seatml", map[string]string{`port="5001"`: `port="0"`})
	_, kioskPort, _ := strings.Cut(addr(kiosk, "visitor"), ":")
	wizard := runExample(t, "wizard.seatml", map[string]string{`port="8081"`: `port="0"`, `port="5001"`: `port="` + kioskPort + `"`})
	b.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1100, "height": 760, "deviceScaleFactor": 1, "mobile": false})
	b.navigate("http://" + addr(wizard, "web") + "/")
	b.waitFor("connected", `document.getElementById('conn').textContent === 'connected'`)
	b.waitFor("start panel", `document.getElementById('state').textContent === 'start'`)
	if got := b.eval(`document.title`); got != "wizard \u2013 seat" {
		t.Errorf("title %v", got)
	}

	b.click(`button.widget-button`) // "Begin session"
	b.waitFor("panel switched", `document.getElementById('state').textContent === 'operator' && !!document.getElementById('w-operator:replies')`)
	replies := `document.getElementById('w-operator:replies').value`
	b.waitFor("kiosk greeting", replies+`.includes('Visitor #1: tickets, map, or help?')`)

	b.click(`button.widget-button:nth-of-type(1)`) // "Tickets"
	b.waitFor("tickets", replies+`.includes('How many tickets? (1 to 9)')`)
	b.typeText(`#w-operator\:say`, "2", true)
	b.waitFor("price", replies+`.includes('2 ticket(s) cost 25.00 EUR. Confirm? yes/no')`)
	b.waitFor("input cleared", `document.getElementById('w-operator:say').value === ''`)
	// The message log shows the transition.
	if log := fmt.Sprint(b.eval(`document.getElementById('log').innerText`)); !strings.Contains(log, "state operator") {
		t.Errorf("message log: %q", log)
	}
	png := b.screenshot()
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
	if n := b.eval(`document.querySelectorAll('#panel button, #panel input, #panel textarea').length`); n != float64(9) {
		t.Errorf("%v focusable controls, want 9", n)
	}
	if n := b.eval(`Array.from(document.querySelectorAll('#panel input, #panel textarea')).filter(e => !e.getAttribute('aria-label')).length`); n != float64(0) {
		t.Errorf("%v fields without a label", n)
	}
}

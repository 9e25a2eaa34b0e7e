package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/seatml/seat/adaptors/web/webtest"
)

// TestMonitorInBrowser runs seat with --control as its own process with
// the kiosk and the Japanese reception, opens the monitor in headless
// Chromium, and checks what a user sees: both graphs drawn by Graphviz in
// the page with the initial state highlighted; a visitor over TCP moves
// the highlight, and the log shows the event, the message and the rule
// fired as a link to its line; the adaptor's counters and the timer
// appear. The screenshot is docs/monitor.png (-update rewrites it).
func TestMonitorInBrowser(t *testing.T) {
	b := webtest.Start(t)
	http := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}} // no idle connections left behind
	kport, rport, sport, ctl := freePortNumber(t), freePortNumber(t), freePortNumber(t), freePort(t)
	// The reception's adaptors are 音声 and 係員: --set takes Japanese names too.
	startSeat(t, "run", "--control", ctl, "--set", "visitor.port="+kport, "--set", "音声.port="+rport, "--set", "係員.port="+sport,
		"../../examples/kiosk.seatml", "../../examples/reception.seatml")
	base := "http://" + ctl + "/monitor/"
	waitFor(t, func() bool {
		resp, err := http.Get(base)
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})

	b.Navigate(base)
	kioskSel := `document.querySelector('section[data-behavior="kiosk"]')`
	b.WaitFor("the kiosk's graph", kioskSel+`.querySelectorAll('.graph svg g.node').length == 8`) // 5 states, start, any, pop
	b.WaitFor("the reception's graph", `document.querySelector('section[data-behavior="受付"] .graph svg g.node title') != null`)
	current := func(sel string) string {
		v, _ := b.Try(sel + `.querySelector('.graph g.node.current title').textContent`)
		s, _ := v.(string)
		return s
	}
	b.WaitFor("attract highlighted", kioskSel+`.querySelector('.graph g.node.current title').textContent == "attract"`)
	b.WaitFor("待機 highlighted", `document.querySelector('section[data-behavior="受付"] .graph g.node.current title').textContent == "待機"`)

	// A visitor says hello: the highlight moves to menu.
	conn, err := net.Dial("tcp", "127.0.0.1:"+kport)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	r.ReadString('\n') // the welcome
	conn.Write([]byte("hello\n"))
	r.ReadString('\n')
	b.WaitFor("menu highlighted", kioskSel+`.querySelector('.graph g.node.current title').textContent == "menu"`)
	if got := current(kioskSel); got != "menu" {
		t.Errorf("highlighted %q", got)
	}
	b.WaitFor("the event in the log", kioskSel+`.querySelector('.log tr.in').textContent.includes("hello")`)
	b.WaitFor("the message in the log", kioskSel+`.querySelector('.log tr.out').textContent.includes("Visitor #1: tickets, map, or help?")`)
	b.WaitFor("the rule fired, linked", kioskSel+`.querySelector('.log tr.fire a').getAttribute('href').endsWith("kiosk.seatml#L49")`)
	b.WaitFor("the timer armed", kioskSel+`.querySelector('.timers').textContent.startsWith("timeout in ")`)
	b.WaitFor("the adaptor's counters", kioskSel+`.querySelector('.adaptors tbody td:nth-child(3)').textContent == "1"`) // one event in

	// Japanese: the reception moves to 用件.
	jconn, err := net.Dial("tcp", "127.0.0.1:"+rport)
	if err != nil {
		t.Fatal(err)
	}
	defer jconn.Close()
	jconn.Write([]byte("こんにちは\n"))
	bufio.NewReader(jconn).ReadString('\n')
	b.WaitFor("用件 highlighted", `document.querySelector('section[data-behavior="受付"] .graph g.node.current title').textContent == "用件"`)
	// The whole configuration: the dialogue's leaf and the watch region's,
	// and every state around them.
	recSel := `document.querySelector('section[data-behavior="受付"]')`
	b.WaitFor("both regions' states highlighted", `Array.from(`+recSel+`.querySelectorAll('.graph g.node.current title')).map(t => t.textContent).join(",") == "用件,平常"`)
	b.WaitFor("the states around them highlighted", `Array.from(`+recSel+`.querySelectorAll('.graph g.cluster.active > g > a, .graph g.cluster.active > a')).map(a => a.getAttribute("xlink:title") || a.getAttribute("title")).join(",") == "稼働,対話,会話,接客,見守り"`)

	// The source view shows the rule's line; files that are not a
	// behavior's are refused.
	href := b.Eval(kioskSel + `.querySelector('.log tr.fire a').href`).(string)
	resp, err := http.Get(href)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("source view: %s", resp.Status)
	}
	if resp, err := http.Get(base + "source?file=/etc/passwd"); err != nil || resp.Body.Close() != nil || resp.StatusCode != 404 {
		t.Errorf("source view of /etc/passwd: %v", err)
	}
	// Another origin's page cannot open the WebSocket; a foreign Host is refused.
	h := map[string][]string{"Origin": {"http://evil.example"}}
	if _, resp, err := websocket.DefaultDialer.Dial("ws://"+ctl+"/monitor/ws", h); err == nil || resp == nil || resp.StatusCode != 403 {
		t.Errorf("a foreign origin's WebSocket: %v", err)
	}
	req, _ := newRequest("GET", base, nil)
	req.Host = "evil.example:80"
	if resp, err := http.Do(req); err != nil || resp.Body.Close() != nil || resp.StatusCode != 403 {
		t.Errorf("a foreign Host: %v", err)
	}

	png := b.Screenshot()
	if *update {
		os.WriteFile("../../docs/monitor.png", png, 0o644)
	}
}

func newRequest(method, url string, body io.Reader) (*http.Request, error) {
	return http.NewRequest(method, url, body)
}

// TestMonitorHighlightsAnyStateName runs seat with --control as its own
// process with testdata/graph/names.seatml, whose states' names hold
// backslashes (before a letter, before a quote, at the end), quotes, <, >,
// &, text that looks like an entity, and Japanese, and opens the monitor in
// headless Chromium: as a visitor moves the behavior through each state,
// the graph highlights that state's node alone, titled and labelled with
// its name, and the cluster of the state holding it (issue 32 #15: a name
// with a backslash was never highlighted).
func TestMonitorHighlightsAnyStateName(t *testing.T) {
	b := webtest.Start(t)
	port := freePortNumber(t)
	_, log := startSeat(t, "run", "--control", "127.0.0.1:0", "--set", "客.port="+port, "../../testdata/graph/names.seatml")
	var ctl []string
	waitFor(t, func() bool { ctl = controlURL.FindStringSubmatch(log.String()); return ctl != nil })
	b.Navigate("http://" + ctl[1] + "/monitor/")
	sec := `document.querySelector('section.behavior')`
	current := sec + `.querySelectorAll('.graph g.node.current')`
	// js is v written in JavaScript, stringified as the page's values are.
	js := func(v any) string {
		j, _ := json.Marshal(v)
		return "JSON.stringify(" + string(j) + ")"
	}
	highlighted := func(state, cluster string) {
		t.Helper()
		b.WaitFor(fmt.Sprintf("%q highlighted", state), `JSON.stringify(Array.from(`+current+`).flatMap(n => [n.querySelector('title').textContent, n.querySelector('text').textContent])) == `+js([]string{state, state}))
		clusters := []string{}
		if cluster != "" {
			clusters = []string{"cluster_" + cluster, cluster}
		}
		b.WaitFor(fmt.Sprintf("%q's cluster", state), `JSON.stringify(Array.from(`+sec+`.querySelectorAll('.graph g.cluster.active')).flatMap(c => [c.querySelector('title').textContent, c.querySelector('text').textContent])) == `+js(clusters))
		if got := b.Eval(sec + `.querySelector('.status .state b').textContent`); got != state {
			t.Errorf("the state shown is %q, want %q", got, state)
		}
	}
	highlighted("待機", "")
	conn := dialSeat(t, port)
	for _, step := range []struct{ key, state, cluster string }{
		{"a", `バック\スラッシュ "引用" <タグ> & 記号`, ""},
		{"戻る", "待機", ""},
		{"b", `末尾\`, ""},
		{"戻る", "待機", ""},
		{"c", `C:\"パス"`, ""},
		{"戻る", "待機", ""},
		{"d", `\N \G \n \\`, ""},
		{"戻る", "待機", ""},
		{"e", `&amp; &#92;`, ""},
		{"戻る", "待機", ""},
		{"f", `子\`, `親\"<&>\`},
	} {
		fmt.Fprintln(conn, step.key)
		highlighted(step.state, step.cluster)
	}
}

// TestMonitorHistoryAndTimerRows: touch-wave (a 10 Hz onexec) on the real
// binary. Before any page opens, a console touches the head and asks
// where the elbow is; the page opened afterwards, in headless Chromium,
// shows that conversation and counts it. The onexec's timer lines make
// one row counted ×N, not a row each, and the filter hides them and
// keeps that choice when the page is opened again.
func TestMonitorHistoryAndTimerRows(t *testing.T) {
	port, ctl := freePortNumber(t), freePort(t)
	_, log := startSeat(t, "run", "--control", ctl, "--set", "console.port="+port, "../../examples/touch-wave.seatml")
	waitFor(t, func() bool { return strings.Contains(log.String(), "\tmonitor\t") })
	console := dialSeat(t, port)
	r := bufio.NewReader(console)
	console.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintln(console, "where")
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "state idle") {
		t.Fatalf("where: %q, %v", line, err)
	}

	b := webtest.Start(t)
	b.Navigate("http://" + ctl + "/monitor/")
	sec := `document.querySelector('section[data-behavior="touch-wave"]')`
	b.WaitFor("the conversation before the page opened", sec+` != null && Array.from(`+sec+`.querySelectorAll('.log tr.line.in')).some(r => r.textContent.includes('console') && r.textContent.includes('where'))`)
	b.WaitFor("the console's counts", sec+`.querySelector('.adaptors tbody tr td:nth-child(3)').textContent != "0"`)
	b.WaitFor("the onexec counted on one row", sec+`.querySelector('.log tr.line.timer') != null && /×\d+$/.test(`+sec+`.querySelector('.log tr.line.timer').textContent)`)
	if n, _ := b.Eval(sec + `.querySelectorAll('.log tr.line.timer').length`).(float64); n > 3 {
		t.Errorf("%v timer rows: the onexec floods the log", n)
	}
	b.Click(`section[data-behavior="touch-wave"] .filter input[data-kind="timer"]`)
	b.WaitFor("timer rows hidden", `getComputedStyle(`+sec+`.querySelector('.log tr.line.timer')).display === "none"`)
	b.Navigate("http://" + ctl + "/monitor/")
	b.WaitFor("the filter kept", sec+` != null && `+sec+`.querySelector('.filter input[data-kind="timer"]').checked === false && `+sec+`.classList.contains('hide-timer')`)
}

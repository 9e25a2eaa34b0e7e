package monitor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/manager"
	"github.com/seatml/seat/interpreter/seatml"
)

// TestVendoredViz: the vendored Viz.js is the file THIRD_PARTY.md records.
func TestVendoredViz(t *testing.T) {
	const want = "c9e0b310f9883910e01c66054b48b7ff4be3d8695141116635e72b0af152692e"
	data, err := assets.ReadFile("assets/viz-global.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("viz-global.js has SHA-256 %s, THIRD_PARTY.md records %s", got, want)
	}
	notes, _ := os.ReadFile("assets/THIRD_PARTY.md")
	if !strings.Contains(string(notes), want) || !strings.Contains(string(data), "Viz.js 3.31.0") || !strings.Contains(string(notes), "Viz.js 3.31.0") {
		t.Error("THIRD_PARTY.md does not record the vendored version and checksum")
	}
}

// page opens the monitor's WebSocket on srv.
func page(t *testing.T, srv *httptest.Server, d *websocket.Dialer) *websocket.Conn {
	t.Helper()
	ws, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/monitor/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// next reads frames until one of the type.
func next(t *testing.T, ws *websocket.Conn, typ string) frame {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var f frame
		if err := ws.ReadJSON(&f); err != nil {
			t.Fatalf("waiting for a %s frame: %v", typ, err)
		}
		if f.Type == typ {
			return f
		}
	}
}

func testProgram(t *testing.T) *seatml.Program {
	prog, diags := seatml.LoadBytes("m.seatml", []byte(`<seatml><general name="m"><adaptor name="io" type="stdio"/></general><state name="s"/></seatml>`), seatml.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	return prog
}

// TestRecentAndLive: the monitor keeps each behavior's last RecentLen
// records and its counts before any page opens; the first page gets them
// (the last RecentLen lines, with the count of those left out, and exact
// counts in the status), then what happens live; a later page gets the
// last RecentLen lines in order.
func TestRecentAndLive(t *testing.T) {
	m := New(zap.NewNop())
	o := m.Observe(testProgram(t)).(interpreter.Watcher)
	if !o.Watching() {
		t.Fatal("not watching with no page open: a page opened late would miss what happened")
	}
	for i := range RecentLen + 50 {
		o.Observe(interpreter.Record{Time: time.Now(), Kind: interpreter.RecIn, Source: "io", Text: fmt.Sprint(i)})
	}
	srv := httptest.NewServer(m.Handler(manager.New(manager.Options{Log: zap.NewNop()})))
	defer srv.Close()
	ws := page(t, srv, websocket.DefaultDialer)
	hello := next(t, ws, "hello")
	if len(hello.Behaviors) != 1 {
		t.Fatalf("hello: %+v", hello)
	}
	if !strings.Contains(hello.Behaviors[0].DOT, `"s" [penwidth=2]`) {
		t.Errorf("graph:\n%s", hello.Behaviors[0].DOT)
	}
	lines := next(t, ws, "lines")
	if len(lines.Lines) != RecentLen || lines.Lines[0].TextOf() != "50" || lines.Lines[RecentLen-1].TextOf() != fmt.Sprint(RecentLen+49) || lines.Skipped["m"] != 50 {
		t.Errorf("lines: %d, from %q to %q, skipped %v", len(lines.Lines), lines.Lines[0].TextOf(), lines.Lines[len(lines.Lines)-1].TextOf(), lines.Skipped)
	}
	for {
		status := next(t, ws, "status")
		if c := status.Counts["m"]["io"]; c != nil && c.In == RecentLen+50 {
			break
		}
	}
	o.Observe(interpreter.Record{Time: time.Now(), Kind: interpreter.RecOut, Source: "io", Text: "live"})
	live := next(t, ws, "lines")
	if len(live.Lines) != 1 || live.Lines[0].TextOf() != "live" || live.Lines[0].Kind != "out" || live.Lines[0].Behavior != "m" {
		t.Errorf("live line: %+v", live.Lines)
	}
	ws2 := page(t, srv, websocket.DefaultDialer)
	later := next(t, ws2, "hello")
	recent := later.Behaviors[0].Recent
	if len(recent) != RecentLen || recent[0].TextOf() != "51" || recent[RecentLen-1].TextOf() != "live" {
		t.Errorf("recent: %d lines, from %q to %q", len(recent), recent[0].TextOf(), recent[len(recent)-1].TextOf())
	}
	ws.Close()
	ws2.Close()
}

// TestSlowPageResent: a page that does not read is not cut off; once it
// reads again it gets everything again (hello) instead of the frames it
// missed.
func TestSlowPageResent(t *testing.T) {
	m := New(zap.NewNop())
	m.every = time.Millisecond
	o := m.Observe(testProgram(t))
	srv := httptest.NewServer(m.Handler(manager.New(manager.Options{Log: zap.NewNop()})))
	defer srv.Close()
	// A small receive window, so that the server's writes block soon.
	d := &websocket.Dialer{NetDialContext: (&net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}).DialContext}
	ws := page(t, srv, d)
	next(t, ws, "hello")
	text := strings.Repeat("x", 4096)
	var c *client
	deadline := time.Now().Add(20 * time.Second)
	for c == nil || !c.behind.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the page never fell behind")
		}
		o.Observe(interpreter.Record{Time: time.Now(), Kind: interpreter.RecIn, Source: "io", Text: text})
		time.Sleep(100 * time.Microsecond)
		m.mu.Lock()
		for k := range m.clients {
			c = k
		}
		m.mu.Unlock()
	}
	o.Observe(interpreter.Record{Time: time.Now(), Kind: interpreter.RecIn, Source: "io", Text: "last"})
	hello := next(t, ws, "hello")
	recent := hello.Behaviors[0].Recent
	if len(recent) != RecentLen {
		t.Errorf("hello again with %d lines, want %d", len(recent), RecentLen)
	}
}

// TestLifecycleUnderPages: loads, reloads, starts, stops and unloads of
// behaviors whose general scripts send, with lists and many monitor pages,
// all at once for a bounded time: every call returns (the manager calls no
// script or observer under its lock; the monitor asks the manager without
// holding its own).
func TestLifecycleUnderPages(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		f := dir + "/" + name + ".seatml"
		src := `<seatml><general name="` + name + `"><adaptor name="io" type="socket" role="server" port="0"/>
<script>seat.send("io", "loaded"); print("loaded")</script></general>
<state name="s"><onentry><message sendto="io">entered</message></onentry><rule><key>x</key><message sendto="io">y</message></rule></state></seatml>`
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	mon := New(zap.NewNop())
	mon.every = time.Millisecond
	mg := manager.New(manager.Options{Log: zap.NewNop(), Observe: mon.Observe})
	defer mg.StopAll()
	srv := httptest.NewServer(mon.Handler(mg))
	defer srv.Close()
	for range 20 {
		ws := page(t, srv, websocket.DefaultDialer)
		go func() {
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
	}
	for _, f := range files {
		if _, err := mg.Load(f); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	calls := make(chan string, 64)
	worker := func(name string, op func() error) {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			call := fmt.Sprintf("%s #%d", name, i)
			calls <- call
			op() // errors such as "already running" are expected: only returning matters
			calls <- call + " returned"
		}
	}
	ops := map[string]func() error{
		"reload a": func() error { _, err := mg.Reload("a"); return err },
		"start a":  func() error { _, err := mg.Start("a"); return err },
		"reload b": func() error { _, err := mg.Reload("b"); return err },
		"stop b":   func() error { _, err := mg.Stop("b"); return err },
		"start b":  func() error { _, err := mg.Start("b"); return err },
		"unload c": func() error { _, err := mg.Unload("c"); return err },
		"load c":   func() error { _, err := mg.Load(files["c"]); return err },
		"list":     func() error { mg.List(); return nil },
	}
	var workers sync.WaitGroup
	for name, op := range ops {
		workers.Go(func() { worker(name, op) })
	}
	// Every call must return within 10 s; the run lasts 3 s.
	pending := map[string]time.Time{}
	end := time.Now().Add(3 * time.Second)
	returned, stopped := 0, false
	for {
		if time.Now().After(end) && !stopped {
			close(stop)
			stopped = true
			end = time.Now().Add(10 * time.Second) // the last calls finish
		}
		select {
		case c := <-calls:
			if name, ok := strings.CutSuffix(c, " returned"); ok {
				delete(pending, name)
				returned++
			} else {
				pending[c] = time.Now()
			}
		case <-time.After(100 * time.Millisecond):
		}
		for c, since := range pending {
			if time.Since(since) > 10*time.Second {
				t.Fatalf("%s has not returned after 10 s (%d calls returned)", c, returned)
			}
		}
		if stopped && len(pending) == 0 {
			break
		}
		if stopped && time.Now().After(end) {
			t.Fatalf("calls still pending: %v", pending)
		}
	}
	// A worker may have begun one more call as the run ended: none is
	// left running when the test's cleanup stops the behaviors.
	finished := make(chan struct{})
	go func() { workers.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("a last call has not returned after 10 s")
	}
	if returned < 100 {
		t.Errorf("only %d calls returned in 3 s", returned)
	}
}

// TestPagesThatNeverReadAreCut: forty pages that open the WebSocket and
// never read, with a small receive window, while a behavior does a lot:
// every write has a deadline, the first included, so each page is cut
// off and forgotten once its writes block for writeWait, and what the
// monitor holds for them goes with it. (Issue 20: 40 such pages pinned
// 569 MB.)
func TestPagesThatNeverReadAreCut(t *testing.T) {
	m := New(zap.NewNop())
	m.every = time.Millisecond
	m.writeWait = 300 * time.Millisecond
	o := m.Observe(testProgram(t))
	srv := httptest.NewServer(m.Handler(manager.New(manager.Options{Log: zap.NewNop()})))
	defer srv.Close()
	d := &websocket.Dialer{NetDialContext: (&net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}).DialContext}
	for range 40 {
		page(t, srv, d) // never read
	}
	text := strings.Repeat("x", 4096)
	open := func() int {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.clients)
	}
	deadline := time.Now().Add(20 * time.Second)
	for open() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 40 pages that never read are still served after 20 s", open())
		}
		o.Observe(interpreter.Record{Time: time.Now(), Kind: interpreter.RecIn, Source: "io", Text: text})
		time.Sleep(100 * time.Microsecond)
	}
	if n := m.pages.Load(); n != 0 {
		t.Errorf("%d pages counted as open", n)
	}
}

// TestHistoryBudget: with no page open, the monitor asks for no more
// than historyBudget records a window: a busy behavior is sampled, not
// slowed; with a page open it gets them all.
func TestHistoryBudget(t *testing.T) {
	m := New(zap.NewNop())
	o := m.Observe(testProgram(t)).(interpreter.Watcher)
	kept := 0
	for range 10 * historyBudget { // far less than a window's time
		if o.Watching() {
			o.Observe(interpreter.Record{Time: time.Now(), Kind: interpreter.RecIn, Source: "io", Text: "x"})
			kept++
		}
	}
	if kept < historyBudget || kept > 2*historyBudget {
		t.Errorf("%d records kept of %d in a burst; want about %d", kept, 10*historyBudget, historyBudget)
	}
	m.pages.Add(1)
	defer m.pages.Add(-1)
	if !o.Watching() {
		t.Error("not watching with a page open")
	}
}

// TestDebugRoutes: the page's debugger routes answer the page's own
// requests, and refuse another origin's, an operation not sent as JSON
// and a foreign Host.
func TestDebugRoutes(t *testing.T) {
	f := t.TempDir() + "/b.seatml"
	src := `<seatml><general name="b"/><state name="一"><rule><key>x</key><statetransition>二</statetransition></rule></state><state name="二"/></seatml>`
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	mon := New(zap.NewNop())
	mg := manager.New(manager.Options{Log: zap.NewNop(), Observe: mon.Observe, Debug: true})
	defer mg.StopAll()
	if _, err := mg.Load(f); err != nil {
		t.Fatal(err)
	}
	if _, err := mg.Start("b"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mon.Handler(mg))
	defer srv.Close()
	post := func(path, body string, header map[string]string) (int, string) {
		t.Helper()
		return postTo(t, srv.URL+path, body, header)
	}
	own := map[string]string{"Origin": srv.URL, "Content-Type": "application/json"}
	if code, body := post("/monitor/debug/b/break", `{"breakpoint": {"kind": "state", "name": "二"}}`, own); code != 200 || !strings.Contains(body, `"name": "二"`) {
		t.Errorf("the page's break: %d %s", code, body)
	}
	if code, body := post("/monitor/debug/b/break", `{"breakpoint": {"kind": "state", "name": "三"}}`, own); code != 409 || !strings.Contains(body, `no state \"三\"`) {
		t.Errorf("a breakpoint on no state: %d %s", code, body)
	}
	if code, _ := post("/monitor/debug/b/pause", `{}`, map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}); code != 403 {
		t.Errorf("another origin's pause: %d", code)
	}
	if code, _ := post("/monitor/debug/b/pause", `{}`, map[string]string{"Origin": srv.URL, "Content-Type": "text/plain"}); code != 415 {
		t.Errorf("a pause sent as text/plain: %d", code)
	}
	if code, body := post("/monitor/debug/nobody/pause", `{}`, own); code != 404 {
		t.Errorf("no such behavior: %d %s", code, body)
	}
	// Nothing refused above was done: one breakpoint, not paused.
	resp, err := http.Get(srv.URL + "/monitor/debug/b")
	if err != nil {
		t.Fatal(err)
	}
	var s interpreter.DebugState
	json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	if len(s.Breakpoints) != 1 || s.Paused || s.State != "一" {
		t.Errorf("the debugger shows %+v", s)
	}
	if got := mg.List()[0].Debug; got == nil || len(got.Breakpoints) != 1 || got.Paused {
		t.Errorf("the status's summary: %+v", got)
	}
}

// TestTimelineRefusals: a timeline runs only the files of loaded
// behaviors, of a recording sent as JSON Lines by the page itself.
func TestTimelineRefusals(t *testing.T) {
	dir := t.TempDir()
	loaded, other := filepath.Join(dir, "a.seatml"), filepath.Join(dir, "b.seatml")
	src := `<seatml><general name="NAME"><adaptor name="io" type="socket" role="server" port="0"/></general><state name="s"><rule><key>x</key><message sendto="io">y</message></rule></state></seatml>`
	os.WriteFile(loaded, []byte(strings.Replace(src, "NAME", "a", 1)), 0o644)
	os.WriteFile(other, []byte(strings.Replace(src, "NAME", "b", 1)), 0o644)
	mon := New(zap.NewNop())
	mg := manager.New(manager.Options{Log: zap.NewNop(), Observe: mon.Observe})
	defer mg.StopAll()
	if _, err := mg.Load(loaded); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mon.Handler(mg))
	defer srv.Close()
	recording := func(file, name string) string {
		return `{"t":0,"kind":"recording","wall":"2026-11-28T00:00:00Z","seat":"test"}
{"t":0,"kind":"start","behavior":"` + name + `","file":"` + file + `"}
{"t":0.001,"kind":"state","behavior":"` + name + `","state":"s"}
{"t":0.5,"kind":"in","behavior":"` + name + `","source":"io","text":"x"}
{"t":0.5,"kind":"out","behavior":"` + name + `","source":"io","text":"y"}
`
	}
	post := func(body string, header map[string]string) (int, string) {
		t.Helper()
		return postTo(t, srv.URL+"/monitor/timeline?file=r.jsonl", body, header)
	}
	own := map[string]string{"Origin": srv.URL, "Content-Type": "application/x-ndjson"}
	code, body := post(recording(loaded, "a"), own)
	var tl Timeline
	if err := json.Unmarshal([]byte(body), &tl); code != 200 || err != nil || len(tl.Frames) < 3 || tl.Name != "a" || tl.Diverged != "" {
		t.Fatalf("a loaded behavior's timeline: %d %s", code, body)
	}
	if last := tl.Frames[len(tl.Frames)-1]; last.Show.State != "s" {
		t.Errorf("the last frame: %+v", last)
	}
	if code, body := post(recording(other, "b"), own); code != 422 || !strings.Contains(body, "is not a file of a loaded behavior") {
		t.Errorf("a file not loaded: %d %s", code, body)
	}
	if code, _ := post(recording(loaded, "a"), map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-ndjson"}); code != 403 {
		t.Errorf("another origin: %d", code)
	}
	if code, _ := post(recording(loaded, "a"), map[string]string{"Origin": srv.URL, "Content-Type": "text/plain"}); code != 415 {
		t.Errorf("text/plain: %d", code)
	}
	if code, body := post("not json\n{}\n", own); code != 400 || !strings.Contains(body, "r.jsonl:1") {
		t.Errorf("not a recording: %d %s", code, body)
	}
}

// postTo posts body to url with the headers, and returns the answer's
// status and body.
func postTo(t *testing.T, url, body string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

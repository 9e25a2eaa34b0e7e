package monitor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/manager"
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

func testProgram(t *testing.T) *interpreter.Program {
	prog, diags := interpreter.LoadBytes("m.seatml", []byte(`<seatml><general name="m"><adaptor name="io" type="stdio"/></general><state name="s"/></seatml>`), interpreter.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	return prog
}

// TestRecentAndLive: the monitor watches only while a page is open; a
// page gets what happened since in frames of at most RecentLen lines per
// behavior with the count of those left out, exact counts in the status,
// and a later page gets the last RecentLen lines in order.
func TestRecentAndLive(t *testing.T) {
	m := New(zap.NewNop())
	o := m.Observe(testProgram(t)).(interpreter.Watcher)
	if o.Watching() {
		t.Fatal("watching with no page open")
	}
	srv := httptest.NewServer(m.Handler(manager.New(manager.Options{Log: zap.NewNop()})))
	defer srv.Close()
	ws := page(t, srv, websocket.DefaultDialer)
	hello := next(t, ws, "hello")
	if len(hello.Behaviors) != 1 || len(hello.Behaviors[0].Recent) != 0 {
		t.Fatalf("hello: %+v", hello)
	}
	if !strings.Contains(hello.Behaviors[0].DOT, `"s" [penwidth=2]`) {
		t.Errorf("graph:\n%s", hello.Behaviors[0].DOT)
	}
	if !o.Watching() {
		t.Fatal("not watching with a page open")
	}
	for i := range RecentLen + 50 {
		o.Observe(interpreter.Record{Time: time.Now(), Kind: interpreter.RecIn, Source: "io", Text: fmt.Sprint(i)})
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
	deadline := time.Now().Add(10 * time.Second)
	for o.Watching() {
		if time.Now().After(deadline) {
			t.Fatal("still watching 10 s after the last page closed")
		}
		time.Sleep(time.Millisecond)
	}
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

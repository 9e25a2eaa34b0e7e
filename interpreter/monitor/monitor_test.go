package monitor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
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

// TestRecentAndLive: a page gets the last RecentLen lines of a behavior
// in order, then each new line as it happens, then the status.
func TestRecentAndLive(t *testing.T) {
	prog, diags := interpreter.LoadBytes("m.seatml", []byte(`<seatml><general name="m"><adaptor name="io" type="stdio"/></general><state name="s"/></seatml>`), interpreter.LoadOptions{})
	if prog == nil {
		t.Fatal(diags)
	}
	m := New(zap.NewNop())
	o := m.Observe(prog)
	for i := range RecentLen + 50 {
		o.Observe(interpreter.Record{Time: time.Now(), Kind: interpreter.RecIn, Source: "io", Text: fmt.Sprint(i)})
	}
	mg := manager.New(manager.Options{Log: zap.NewNop()})
	srv := httptest.NewServer(m.Handler(mg))
	defer srv.Close()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/monitor/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var hello frame
	if err := ws.ReadJSON(&hello); err != nil || hello.Type != "hello" || len(hello.Behaviors) != 1 {
		t.Fatalf("hello: %v %+v", err, hello)
	}
	recent := hello.Behaviors[0].Recent
	if len(recent) != RecentLen || recent[0].TextOf() != "50" || recent[RecentLen-1].TextOf() != fmt.Sprint(RecentLen+49) {
		t.Errorf("recent: %d lines, from %q to %q", len(recent), recent[0].TextOf(), recent[len(recent)-1].TextOf())
	}
	if !strings.Contains(hello.Behaviors[0].DOT, `"s" [penwidth=2]`) {
		t.Errorf("graph:\n%s", hello.Behaviors[0].DOT)
	}
	var status frame
	if err := ws.ReadJSON(&status); err != nil || status.Type != "status" || status.Counts["m"]["io"].In != RecentLen+50 {
		t.Fatalf("status: %v %+v", err, status)
	}
	o.Observe(interpreter.Record{Time: time.Now(), Kind: interpreter.RecOut, Source: "io", Text: "live"})
	var live frame
	for live.Type != "line" {
		if err := ws.ReadJSON(&live); err != nil {
			t.Fatal(err)
		}
	}
	if live.Line.TextOf() != "live" || live.Line.Kind != "out" || live.Line.Behavior != "m" {
		t.Errorf("live line: %+v", live.Line)
	}
}

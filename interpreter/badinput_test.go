package interpreter

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/adaptors"
)

// guardedBehavior answers pings on a socket server and a web adaptor, both with
// small limits, so that every kind of bad input can be tried on them.
const guardedBehavior = `<?xml version="1.0"?>
<seatml>
<general name="guard">
<adaptor name="chat" type="socket" role="server" port="0" maxline="64" maxconns="8"/>
<adaptor name="panel" type="web" port="0" maxconns="8"/>
</general>
<state name="s">
<rule source="chat"><key>ping \d+</key><script>seat.reply("pong" .. event.text:sub(5))</script></rule>
<rule source="chat"><key>echo .*</key><script>seat.reply("got " .. event.text:sub(6))</script></rule>
<rule source="chat"><key>big</key><script>seat.reply(string.rep("z", 60000))</script></rule>
<rule source="panel"><key>ping \d+</key><script>seat.reply("pong" .. event.text:sub(5))</script></rule>
<rule source="panel"><key>echo .*</key><script>seat.reply("got " .. event.text:sub(6))</script></rule>
</state>
</seatml>
`

// lineClient is a well-behaved socket client: one ping, one pong.
type lineClient struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
	n int
}

func (lc *lineClient) ping() {
	lc.t.Helper()
	lc.n++
	fmt.Fprintf(lc.c, "ping %d\n", lc.n)
	want := fmt.Sprintf("pong %d\n", lc.n)
	if line, err := lc.r.ReadString('\n'); err != nil || line != want {
		lc.t.Fatalf("good socket client: got %q (%v), want %q", line, err, want)
	}
}

// wsClient is a well-behaved WebSocket client.
type wsClient struct {
	t  *testing.T
	ws *websocket.Conn
	n  int
}

// reply reads frames until a message, skipping state, panel and gui frames.
func (wc *wsClient) reply() string {
	wc.t.Helper()
	for {
		var f struct{ Type, Text string }
		if err := wc.ws.ReadJSON(&f); err != nil {
			wc.t.Fatalf("good WebSocket client: %v", err)
		}
		if f.Type == "message" {
			return f.Text
		}
	}
}

func (wc *wsClient) ping() {
	wc.t.Helper()
	wc.n++
	if err := wc.ws.WriteJSON(map[string]string{"type": "event", "text": fmt.Sprintf("ping %d", wc.n)}); err != nil {
		wc.t.Fatal(err)
	}
	if got, want := wc.reply(), fmt.Sprintf("pong %d", wc.n); got != want {
		wc.t.Fatalf("good WebSocket client: got %q, want %q", got, want)
	}
}

func dialWS(t *testing.T, addr string) (*websocket.Conn, error) {
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	ws, _, err := d.Dial("ws://"+addr+"/ws", nil)
	if err == nil {
		t.Cleanup(func() { ws.Close() })
		ws.SetReadDeadline(time.Now().Add(60 * time.Second))
	}
	return ws, err
}

func dialTCP(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(60 * time.Second))
	return c
}

// readsEOF reports whether the server closed c (after discarding whatever
// it had sent).
func readsEOF(c net.Conn) bool {
	_, err := io.Copy(io.Discard, c)
	return err == nil || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "reset by peer")
}

// TestBadInputOnEveryAdaptor throws every kind of bad input at a socket
// server and a web adaptor of a running behavior, one attacker at a time,
// while a good client on each keeps its one connection: after each attack
// both are still answered, the attack is counted in the adaptor's Stats,
// and it is logged once, naming the attacker's address.
func TestBadInputOnEveryAdaptor(t *testing.T) {
	h := start(t, guardedBehavior, func(o *Options) { o.Tuning.QueueBytes = 64 << 10; o.Tuning.StallTime = 50 * time.Millisecond })
	chat, panel := addrOf(t, h, "chat"), addrOf(t, h, "panel")
	for _, addr := range []string{chat, panel} { // neither names a host
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Errorf("listening on %s, want loopback unless a host is given", addr)
		}
	}
	good := &lineClient{t: t, c: dialTCP(t, chat)}
	good.r = bufio.NewReader(good.c)
	gws, err := dialWS(t, panel)
	if err != nil {
		t.Fatal(err)
	}
	goodWS := &wsClient{t: t, ws: gws}
	good.ping()
	goodWS.ping()

	stats := func(name string) adaptors.Stats {
		for _, a := range h.m.Adaptors() {
			if a.Name == name {
				return a.Stats
			}
		}
		t.Fatalf("no adaptor %q", name)
		return adaptors.Stats{}
	}
	// eventually waits for the adaptor's counts to reach want (the server
	// side of a connection notices a close a moment after the client).
	eventually := func(name string, want func(adaptors.Stats) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !want(stats(name)) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: stats %+v", name, stats(name))
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	// loggedOnce checks that the peer has exactly one warning or error,
	// with the message given.
	loggedOnce := func(peer, msg string) {
		t.Helper()
		var got []string
		for _, e := range h.logs.All() {
			if e.Level >= zapcore.WarnLevel && e.ContextMap()["peer"] == peer {
				got = append(got, e.Message)
			}
		}
		if len(got) != 1 || got[0] != msg {
			t.Errorf("peer %s logged %q, want once %q", peer, got, msg)
		}
	}
	bothAnswered := func() {
		t.Helper()
		good.ping()
		goodWS.ping()
	}

	t.Run("socket: over-long line", func(t *testing.T) {
		c := dialTCP(t, chat)
		fmt.Fprintf(c, "%s\n", strings.Repeat("x", 65))
		if !readsEOF(c) {
			t.Error("connection not closed")
		}
		eventually("chat", func(s adaptors.Stats) bool { return s.LineTooLong == 1 })
		loggedOnce(c.LocalAddr().String(), "line too long; connection closed")
		bothAnswered()
	})

	t.Run("socket: NUL bytes and invalid UTF-8 are replaced, the connection lives", func(t *testing.T) {
		c := dialTCP(t, chat)
		r := bufio.NewReader(c)
		for _, in := range []string{"echo a\x00b\n", "echo \xff\xfe!\n"} {
			c.Write([]byte(in))
		}
		for _, want := range []string{"got a\uFFFDb\n", "got \uFFFD!\n"} {
			if line, err := r.ReadString('\n'); err != nil || line != want {
				t.Errorf("got %q (%v), want %q", line, err, want)
			}
		}
		if s := stats("chat"); s.Repaired != 2 {
			t.Errorf("repaired %d, want 2", s.Repaired)
		}
		loggedOnce(c.LocalAddr().String(), "invalid UTF-8 or NUL bytes replaced by U+FFFD")
		bothAnswered()
	})

	t.Run("socket: binary garbage", func(t *testing.T) {
		c := dialTCP(t, chat)
		garbage := make([]byte, 16<<10)
		rng := rand.New(rand.NewPCG(7, 7))
		for i := range garbage {
			garbage[i] = byte(rng.UintN(256))
		}
		c.Write(garbage) // may fail once the server has closed: that is the point
		if !readsEOF(c) {
			t.Error("connection not closed")
		}
		eventually("chat", func(s adaptors.Stats) bool { return s.LineTooLong == 2 })
		loggedOnce(c.LocalAddr().String(), "line too long; connection closed")
		bothAnswered()
	})

	t.Run("socket: half a line, then a disconnect", func(t *testing.T) {
		c := dialTCP(t, chat)
		peer := c.LocalAddr().String()
		c.Write([]byte("ping 999"))
		c.Close()
		eventually("chat", func(s adaptors.Stats) bool { return s.PartialLine == 1 })
		loggedOnce(peer, "peer closed inside a line; partial line dropped")
		bothAnswered() // and nobody got "pong 999": the good client's next reply is its own
	})

	t.Run("socket: a flood of connections", func(t *testing.T) {
		eventually("chat", func(s adaptors.Stats) bool { return s.Open == 1 }) // the good client
		var held []net.Conn
		for range 7 {
			c := dialTCP(t, chat)
			held = append(held, c)
		}
		eventually("chat", func(s adaptors.Stats) bool { return s.Open == 8 })
		for range 5 {
			c := dialTCP(t, chat)
			if !readsEOF(c) {
				t.Error("a connection over maxconns was not closed")
			}
			loggedOnce(c.LocalAddr().String(), "too many connections; refused")
		}
		if s := stats("chat"); s.Refused != 5 || s.Open != 8 {
			t.Errorf("stats %+v, want 5 refused and 8 open", s)
		}
		bothAnswered()
		for _, c := range held {
			c.Close()
		}
		eventually("chat", func(s adaptors.Stats) bool { return s.Open == 1 })
		c := &lineClient{t: t, c: dialTCP(t, chat)}
		c.r = bufio.NewReader(c.c)
		c.ping() // room again
	})

	t.Run("socket: a client that never reads", func(t *testing.T) {
		c := dialTCP(t, chat)
		peer := c.LocalAddr().String()
		// Each "big" is answered with 60 KB that this client never reads:
		// the kernel's buffers fill, then its 64 KiB queue, then it is cut.
		for i := 0; stats("chat").SlowPeer == 0; i++ {
			if i == 5000 {
				t.Fatal("a client that never reads was not cut off")
			}
			if _, err := c.Write([]byte("big\n")); err != nil {
				break // cut off between two checks
			}
			if i%8 == 0 {
				bothAnswered()
			}
		}
		eventually("chat", func(s adaptors.Stats) bool { return s.SlowPeer == 1 })
		loggedOnce(peer, "peer is not reading; disconnected")
		bothAnswered()
	})

	t.Run("web: oversized frame", func(t *testing.T) {
		ws, err := dialWS(t, panel)
		if err != nil {
			t.Fatal(err)
		}
		ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"event","text":"`+strings.Repeat("x", 70<<10)+`"}`))
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				break // closed by the server
			}
		}
		eventually("panel", func(s adaptors.Stats) bool { return s.LineTooLong == 1 })
		loggedOnce(ws.LocalAddr().String(), "frame over 64 KiB; connection closed")
		bothAnswered()
	})

	t.Run("web: invalid frames are ignored, NUL and invalid UTF-8 replaced, the connection lives", func(t *testing.T) {
		ws, err := dialWS(t, panel)
		if err != nil {
			t.Fatal(err)
		}
		wc := &wsClient{t: t, ws: ws}
		ws.WriteMessage(websocket.TextMessage, []byte("\x00\x01 not json"))
		ws.WriteMessage(websocket.BinaryMessage, []byte{0xde, 0xad})
		ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"event","text":"echo a\u0000b"}`))
		ws.WriteMessage(websocket.TextMessage, []byte("{\"type\":\"event\",\"text\":\"echo \xff!\"}"))
		for _, want := range []string{"got a\uFFFDb", "got \uFFFD!"} {
			if got := wc.reply(); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		}
		wc.n = 10
		wc.ping()
		if s := stats("panel"); s.InvalidFrame != 2 || s.Repaired != 2 {
			t.Errorf("stats %+v, want 2 invalid frames and 2 repaired", s)
		}
		peer := ws.LocalAddr().String()
		var got []string
		for _, e := range h.logs.All() {
			if e.Level >= zapcore.WarnLevel && e.ContextMap()["peer"] == peer {
				got = append(got, e.Message)
			}
		}
		want := []string{"invalid frame ignored", "binary frame ignored", "invalid UTF-8 or NUL bytes replaced by U+FFFD"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("logged %q, want %q (the repair once per connection)", got, want)
		}
		bothAnswered()
	})

	t.Run("web: half a frame, then a disconnect", func(t *testing.T) {
		ws, err := dialWS(t, panel)
		if err != nil {
			t.Fatal(err)
		}
		// A masked text frame header announcing 100 bytes, and 3 of them.
		ws.UnderlyingConn().Write([]byte{0x81, 0x80 | 100, 1, 2, 3, 4, 'a', 'b', 'c'})
		ws.UnderlyingConn().Close()
		bothAnswered()
	})

	t.Run("web: a flood of connections", func(t *testing.T) {
		eventually("panel", func(s adaptors.Stats) bool { return s.Open == 1 })
		before := stats("panel").Refused
		var held []*websocket.Conn
		for range 7 {
			ws, err := dialWS(t, panel)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, ws)
		}
		for range 3 {
			if _, err := dialWS(t, panel); err == nil {
				t.Error("a WebSocket over maxconns was accepted")
			}
		}
		if s := stats("panel"); s.Refused != before+3 || s.Open != 8 {
			t.Errorf("stats %+v, want 3 more refused and 8 open", s)
		}
		if n := h.logs.FilterMessage("too many connections; refused").FilterField(zap.String("adaptor", "panel")).Len(); n != 3 {
			t.Errorf("%d refusals logged for panel, want 3", n)
		}
		bothAnswered()
		for _, ws := range held {
			ws.Close()
		}
		eventually("panel", func(s adaptors.Stats) bool { return s.Open == 1 })
		ws, err := dialWS(t, panel)
		if err != nil {
			t.Fatalf("no room after the flood: %v", err)
		}
		(&wsClient{t: t, ws: ws}).ping()
	})

	t.Run("web: a client that never reads", func(t *testing.T) {
		ws, err := dialWS(t, panel)
		if err != nil {
			t.Fatal(err)
		}
		peer := ws.LocalAddr().String()
		big := `{"type":"event","text":"echo ` + strings.Repeat("y", 60000) + `"}`
		for i := 0; stats("panel").SlowPeer == 0; i++ {
			if i == 5000 {
				t.Fatal("a client that never reads was not cut off")
			}
			if err := ws.WriteMessage(websocket.TextMessage, []byte(big)); err != nil {
				break
			}
			if i%8 == 0 {
				bothAnswered()
			}
		}
		eventually("panel", func(s adaptors.Stats) bool { return s.SlowPeer == 1 })
		loggedOnce(peer, "client is not reading; disconnected")
		bothAnswered()
	})

	t.Run("web: POST bodies: too big, cut short, NUL", func(t *testing.T) {
		post := func(body string) int {
			t.Helper()
			resp, err := http.Post("http://"+panel+"/rtc_processResult", "text/plain", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode
		}
		before := stats("panel")
		if code := post(strings.Repeat("x", 65<<10)); code != http.StatusRequestEntityTooLarge {
			t.Errorf("a 65 KiB body: %d", code)
		}
		if code := post("nothing\x00matches \xff this"); code != http.StatusOK {
			t.Errorf("a body with NUL and invalid UTF-8: %d", code)
		}
		c := dialTCP(t, panel) // a body announced as 100 bytes, 5 sent
		fmt.Fprintf(c, "POST /rtc_processResult HTTP/1.1\r\nHost: %s\r\nContent-Length: 100\r\n\r\nhello", panel)
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c)
		eventually("panel", func(s adaptors.Stats) bool { return s.PartialLine == before.PartialLine+1 })
		if s := stats("panel"); s.LineTooLong != before.LineTooLong+1 || s.Repaired != before.Repaired+1 {
			t.Errorf("stats %+v after %+v: want one more too long and one more repaired", s, before)
		}
		bothAnswered()
	})

	// Everything above, as the control API shows it.
	b, _ := json.Marshal(h.m.Adaptors())
	t.Logf("adaptors: %s", b)
	if s := stats("chat"); s.LineTooLong != 2 || s.PartialLine != 1 || s.Repaired != 2 || s.Refused != 5 || s.SlowPeer != 1 {
		t.Errorf("chat stats at the end: %+v", s)
	}
}

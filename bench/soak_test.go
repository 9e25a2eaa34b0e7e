package bench

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter"
)

var soak = flag.Bool("soak", false, "soak tests at full size: TestSoak 1,000 clients x 1,000 events (else 50 x 200), TestDaysOnARobot 2 minutes (else 15 s)")

// soakBehavior answers "ping N" with "pong N" to the sender only, through
// Lua, so every reply can be checked against its request.
const soakBehavior = `<?xml version="1.0"?>
<seatml>
<general name="soak">
<adaptor name="chat" type="socket" role="server" port="0"/>
<adaptor name="panel" type="web" port="0"/>
</general>
<state name="s">
<rule><key>ping \d+</key><script>seat.reply("pong" .. event.text:sub(5))</script></rule>
</state>
</seatml>
`

// TestSoak connects many clients to one behavior at once, over TCP lines
// and then over WebSocket; each keeps a window of pings in flight and checks
// that every pong arrives, in order.
// A warm-up round runs first; after the soak, once every connection has
// closed, the process has the goroutines it had after the warm-up and its
// live heap has not grown by more than 1 MiB; after the behavior stops, no
// goroutine is left. Full size with -soak (.ci/run does it without -race):
//
//	go test -run TestSoak -v ./bench -args -soak
func TestSoak(t *testing.T) {
	clients, events := 50, 200
	if *soak {
		clients, events = 1000, 1000
	}
	leaks := goleak.IgnoreCurrent()
	m, stop := serve(t, load(t, soakBehavior))
	for _, tr := range []struct {
		adaptor string
		client  func(addr string, id, events int) error
	}{{"chat", pinger}, {"panel", wsPinger}} {
		t.Run(tr.adaptor, func(t *testing.T) { soakOne(t, m, tr.adaptor, tr.client, clients, events) })
	}
	stop()
	goleak.VerifyNone(t, leaks)
}

// soakOne is TestSoak on one adaptor.
func soakOne(t *testing.T, m *interpreter.Machine, adaptor string, client func(string, int, int) error, clients, events int) {
	addr := m.Adaptor(adaptor).(adaptors.Addresser).Addr()
	stats := m.Adaptor(adaptor).(adaptors.StatsReporter)

	// settle waits until the server has closed every connection, then
	// returns the goroutine count and the live heap.
	settle := func() (int, uint64) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for stats.Stats().Open != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("connections still open a minute after the clients left: %+v", stats.Stats())
			}
			time.Sleep(10 * time.Millisecond)
		}
		var ms runtime.MemStats
		for range 2 { // the second cycle frees what the first one's finalizers let go
			runtime.GC()
		}
		runtime.ReadMemStats(&ms)
		return runtime.NumGoroutine(), ms.HeapAlloc
	}

	round(t, addr, client, clients, max(10, events/10)) // warm-up: pools, buffers and maps near their working size
	g0, h0 := settle()
	start := time.Now()
	round(t, addr, client, clients, events)
	elapsed := time.Since(start)
	g1, h1 := settle()
	t.Logf("%d clients x %d events: %v, %.0f events/s; goroutines %d -> %d; live heap %.1f -> %.1f MiB",
		clients, events, elapsed.Round(time.Millisecond), float64(clients*events)/elapsed.Seconds(), g0, g1, mib(h0), mib(h1))
	if g1 > g0 {
		t.Errorf("goroutines grew from %d to %d", g0, g1)
	}
	if h1 > h0+1<<20 {
		t.Errorf("live heap grew by %.1f MiB (from %.1f to %.1f)", mib(h1-h0), mib(h0), mib(h1))
	}
	if s := stats.Stats(); s.Accepted != int64(2*clients) || s.Refused+s.LineTooLong+s.PartialLine+s.InvalidFrame+s.SlowPeer != 0 {
		t.Errorf("adaptor stats %+v: want %d connections accepted and nothing refused", s, 2*clients)
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// round runs clients at once, each sending events pings with a window of
// 16 in flight, and fails the test on the first wrong or missing reply.
func round(t *testing.T, addr string, client func(string, int, int) error, clients, events int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := client(addr, i, events); err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 5 {
			t.Error(err)
		}
	}
	if n > 5 {
		t.Errorf("... and %d more clients failed", n-5)
	}
}

// pinger is a line client of the socket adaptor.
func pinger(addr string, id, events int) error {
	const window = 16
	c, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Minute))
	r := bufio.NewReader(c)
	var out []byte
	sent := 0
	send := func(k int) error {
		out = out[:0]
		for ; k > 0 && sent < events; k-- {
			out = fmt.Appendf(out, "ping %d-%d\n", id, sent)
			sent++
		}
		_, err := c.Write(out)
		return err
	}
	if err := send(window); err != nil {
		return err
	}
	prefix := "pong " + strconv.Itoa(id) + "-"
	for got := 0; got < events; {
		answered := 0
		for { // every reply already here, then one write for as many pings
			line, err := r.ReadString('\n')
			if err != nil {
				return fmt.Errorf("after %d of %d replies: %w", got, events, err)
			}
			if want := prefix + strconv.Itoa(got) + "\n"; line != want {
				return fmt.Errorf("reply %d is %q, want %q", got, line, want)
			}
			got++
			answered++
			if r.Buffered() == 0 {
				break
			}
		}
		if sent < events {
			if err := send(answered); err != nil {
				return err
			}
		}
	}
	return nil
}

// wsPinger is a WebSocket client of the web adaptor; frames other than
// messages (the state and panel on connect) are skipped.
func wsPinger(addr string, id, events int) error {
	const window = 16
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
	ws, _, err := d.Dial("ws://"+addr+"/ws", nil)
	if err != nil {
		return err
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(5 * time.Minute))
	sent := 0
	send := func() error {
		text := fmt.Sprintf(`{"type":"event","text":"ping %d-%d"}`, id, sent)
		sent++
		return ws.WriteMessage(websocket.TextMessage, []byte(text))
	}
	for sent < window && sent < events {
		if err := send(); err != nil {
			return err
		}
	}
	prefix := "pong " + strconv.Itoa(id) + "-"
	for got := 0; got < events; {
		var f struct{ Type, Text string }
		if err := ws.ReadJSON(&f); err != nil {
			return fmt.Errorf("after %d of %d replies: %w", got, events, err)
		}
		if f.Type != "message" {
			continue
		}
		if want := prefix + strconv.Itoa(got); f.Text != want {
			return fmt.Errorf("reply %d is %q, want %q", got, f.Text, want)
		}
		got++
		if sent < events {
			if err := send(); err != nil {
				return err
			}
		}
	}
	return nil
}

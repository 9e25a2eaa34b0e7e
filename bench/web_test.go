package bench

import (
	"bytes"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/seatml/seat/interpreter/seatml"
)

// BenchmarkWebOneFrame is seatload's WebSocket workload inside one
// process with one frame in flight: a page sends an event frame, waits
// for the Lua reply (web.seatml), and sends the next.
func BenchmarkWebOneFrame(b *testing.B) { webRoundTrips(b, 1) }

// BenchmarkWebPipelined is the same with 16 frames in flight.
func BenchmarkWebPipelined(b *testing.B) { webRoundTrips(b, 16) }

func webRoundTrips(b *testing.B, window int) {
	prog, diags := seatml.Load("web.seatml", seatml.LoadOptions{})
	if prog == nil {
		b.Fatal(diags)
	}
	m, stop := serve(b, prog)
	defer stop()
	addr := m.Adaptor("web").(interface{ Addr() string }).Addr()
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(5 * time.Minute))
	for range 2 { // the state and its panel
		if _, _, err := ws.ReadMessage(); err != nil {
			b.Fatal(err)
		}
	}
	ping := []byte(`{"type":"event","text":"ping"}`)
	want := []byte(`"pong"`)
	errs := make(chan error, 1)
	credit := make(chan struct{}, window)
	n := b.N
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		for i := range n {
			if i >= window {
				<-credit
			}
			if err := ws.WriteMessage(websocket.TextMessage, ping); err != nil {
				errs <- err
				return
			}
		}
	}()
	for range n {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(msg, want) {
			b.Fatalf("answer %q", msg)
		}
		credit <- struct{}{}
	}
	b.StopTimer()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

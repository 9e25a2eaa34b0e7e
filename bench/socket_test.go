package bench

import (
	"bufio"
	"bytes"
	"net"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/monitor"
	"github.com/seatml/seat/interpreter/seatml"
)

// BenchmarkSocketPipelined is seatload's pipelined workloads inside one
// process: a client keeps 64 "ping" lines in flight on a real loopback
// connection to the behavior's first adaptor, and every "pong" is checked. Its allocations per event are the server's plus none of the
// client's (the client reuses its buffers), which is what -benchmem and
// -memprofile are for here; seatload gives the throughput beside the floor.
func BenchmarkSocketPipelined(b *testing.B) {
	for _, w := range []string{"message", "lua", "transition"} {
		b.Run(w, func(b *testing.B) { socketPipelined(b, w+".seatml") })
	}
	// The message workload under seat run --control with no monitor
	// page open and no breakpoint: what the monitor's history of the last
	// lines costs, and the debugger nothing while it has nothing to do.
	b.Run("monitored", func(b *testing.B) {
		socketRoundTripsWith(b, "message.seatml", 64, func(p *seatml.Program) interpreter.Options {
			return interpreter.Options{Observer: monitor.New(zap.NewNop()).Observe(p), Debugger: interpreter.NewDebugger(nil)}
		})
	})
}

// BenchmarkSocketOneLine is the same with one line in flight: each ping
// waits for its pong, so the reader that reads it finds the behavior idle
// and runs it itself (the inline hand-over), as an agent's turn-taking
// does.
func BenchmarkSocketOneLine(b *testing.B) {
	socketRoundTrips(b, "message.seatml", 1)
}

func socketPipelined(b *testing.B, file string) { socketRoundTrips(b, file, 64) }

// socketRoundTrips keeps window pings in flight.
func socketRoundTrips(b *testing.B, file string, window int) {
	socketRoundTripsWith(b, file, window, nil)
}

// socketRoundTripsWith is socketRoundTrips with the machine's options.
func socketRoundTripsWith(b *testing.B, file string, window int, opts func(*seatml.Program) interpreter.Options) {
	prog, diags := seatml.Load(file, seatml.LoadOptions{})
	if prog == nil {
		b.Fatal(diags)
	}
	var o interpreter.Options
	if opts != nil {
		o = opts(prog)
	}
	m, stop := serveWith(b, prog, o)
	defer stop()
	c, err := net.Dial("tcp", m.Adaptor("chat0").(interface{ Addr() string }).Addr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Minute))

	pings := bytes.Repeat([]byte("ping\n"), window)
	r := bufio.NewReaderSize(c, 64<<10)
	errs := make(chan error, 1)
	credit := make(chan int, window) // each credit is at least one of the window's replies
	n := b.N
	b.ReportAllocs()
	b.ResetTimer()
	go func() { // the writer: a window's worth at first, then what was answered
		for sent := 0; sent < n; {
			k := min(window, n-sent)
			if sent > 0 {
				k = min(<-credit, n-sent)
			}
			if _, err := c.Write(pings[:5*k]); err != nil {
				errs <- err
				return
			}
			sent += k
		}
	}()
	for got, acked := 0, 0; got < n; {
		line, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		if string(line) != "pong\n" {
			b.Fatalf("answer %q", line)
		}
		got++
		acked++
		if r.Buffered() == 0 { // about to wait: let the writer refill
			credit <- acked
			acked = 0
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

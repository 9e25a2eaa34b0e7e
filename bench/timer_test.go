package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seatml/seat/interpreter/seatml"
)

// timerBehavior fires an ontimeout of the given seconds over and over
// (it repeats every timeout of silence) and sends, each time, how late it
// fired: the time since the list last ended, less the timeout.
const timerBehavior = `<seatml><general name="timer"><adaptor name="out" type="socket" role="server" port="0"/>
<script>last = seat.now()</script></general>
<state name="s"><ontimeout timeout="%[1]s"><script>
local now = seat.now()
seat.send("out", string.format("%%.6f", now - last - %[1]s))
last = seat.now()
</script></ontimeout></state></seatml>`

// BenchmarkTimerPrecision measures how late ontimeout fires, requested
// against fired, for 10 ms, 100 ms and 1 s timeouts, while another
// behavior of the same process answers the pipelined "message" workload
// (8 KiB windows of pings) on the same two cores. One iteration is one
// firing; p50 and p99 of the lateness are reported in ms. Figures:
// bench/README.md; run with -benchtime 200x (10 ms), 100x, 20x (1 s).
func BenchmarkTimerPrecision(b *testing.B) {
	for _, secs := range []string{"0.01", "0.1", "1"} {
		b.Run(secs+"s", func(b *testing.B) { timerPrecision(b, secs) })
	}
}

func timerPrecision(b *testing.B, secs string) {
	m, stop := serve(b, load(b, fmt.Sprintf(timerBehavior, secs)))
	defer stop()
	prog, diags := seatml.Load("message.seatml", seatml.LoadOptions{})
	if prog == nil {
		b.Fatal(diags)
	}
	lm, lstop := serve(b, prog)
	defer lstop()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); pipelinedLoad(ctx, lm.Adaptor("chat0").(interface{ Addr() string }).Addr()) }()
	defer func() { cancel(); wg.Wait() }()

	c, err := net.Dial("tcp", m.Adaptor("out").(interface{ Addr() string }).Addr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(10 * time.Minute))
	if _, err := r.ReadString('\n'); err != nil { // the first firing spans the connection
		b.Fatal(err)
	}
	late := make([]float64, 0, b.N)
	b.ResetTimer()
	for range b.N {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line), 64)
		if err != nil {
			b.Fatalf("line %q: %v", line, err)
		}
		late = append(late, v*1000)
	}
	b.StopTimer()
	slices.Sort(late)
	q := func(p float64) float64 { return late[min(int(p*float64(len(late))), len(late)-1)] }
	b.ReportMetric(q(0.5), "p50-late-ms")
	b.ReportMetric(q(0.99), "p99-late-ms")
	b.ReportMetric(late[len(late)-1], "max-late-ms")
}

// pipelinedLoad keeps 64 pings in flight on addr until ctx ends.
func pipelinedLoad(ctx context.Context, addr string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer c.Close()
	go func() { <-ctx.Done(); c.Close() }()
	pings := bytes.Repeat([]byte("ping\n"), 64)
	r := bufio.NewReaderSize(c, 64<<10)
	for ctx.Err() == nil {
		if _, err := c.Write(pings); err != nil {
			return
		}
		for range 64 {
			if _, err := r.ReadSlice('\n'); err != nil {
				return
			}
		}
	}
}

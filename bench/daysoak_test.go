package bench

import (
	"bufio"
	"context"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/hal/motion"
	"github.com/seatml/seat/interpreter"
)

// daysBehavior is what a robot does for days, compressed: at 100 Hz it
// starts a motion, changes state (each state's ontimeout re-armed) and
// sends the tick to its console; clients come and go.
const daysBehavior = `<?xml version="1.0"?>
<seatml>
<general name="days" rate="100">
<adaptor name="console" type="socket" role="server" port="0"/>
<onexec><script>
n = (n or 0) + 1
seat.motion{name = "tick", priority = 1, scripts = {{
  {duration = 5, targets = {{id = "HEAD_PITCH", position = (n % 2) / 10, gain = 10}}}}}}
</script><message sendto="console">tick</message></onexec>
<rule><key>hello</key><script>seat.reply("hi " .. tostring(n))</script></rule>
</general>
<state name="a"><onexec><statetransition>b</statetransition></onexec>
<ontimeout timeout="30"><message sendto="console">quiet a</message></ontimeout></state>
<state name="b"><onexec><statetransition>a</statetransition></onexec>
<ontimeout timeout="30"><message sendto="console">quiet b</message></ontimeout></state>
</seatml>
`

// TestDaysOnARobot runs daysBehavior on the simulated robot with the real
// clock and checks that the live heap stays flat: finished motions, state
// timers and the peers of closed connections are forgotten. The heap is
// sampled every few seconds after a warm-up; the last sample may not exceed
// the first by more than 512 KiB (a motion kept costs about 1.4 KiB, so
// 15 s of the old leak was about 2 MiB). 15 s, or 2 minutes with -soak
// (.ci/run):
//
//	go test -run TestDaysOnARobot -v ./bench -args -soak
func TestDaysOnARobot(t *testing.T) {
	length := 15 * time.Second
	if *soak {
		length = 2 * time.Minute
	}
	prog := load(t, daysBehavior)
	e, err := hal.NewEngine(prog.Tree, hal.NewSim(), hal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := motion.NewPlayer(e, prog.Servos, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	loop := make(chan error, 1)
	var once sync.Once
	devices := &interpreter.Devices{Engine: e, Player: p, Start: func() { once.Do(func() { go func() { loop <- e.Run(ctx) }() }) }}
	m, err := interpreter.New(prog, interpreter.Options{Log: zap.NewNop(), Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		started := true
		once.Do(func() { started = false })
		if started {
			if err := <-loop; err != nil {
				t.Error(err)
			}
		}
	}()
	select {
	case <-m.Ready():
	case err := <-done:
		t.Fatalf("Run ended before the behavior was ready: %v", err)
	}
	addr := m.Adaptor("console").(adaptors.Addresser).Addr()
	stats := m.Adaptor("console").(adaptors.StatsReporter)

	// A client every 100 ms: says hello, reads the answer among the ticks,
	// leaves.
	visit := func() {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte("hello\n")); err != nil {
			t.Error(err)
			return
		}
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Errorf("no answer to hello: %v", err)
				return
			}
			if len(line) > 3 && line[:3] == "hi " {
				return
			}
		}
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}

	const warmup, every = 3 * time.Second, 3 * time.Second
	start := time.Now()
	var samples []uint64
	next := start.Add(warmup)
	for time.Since(start) < warmup+length && !t.Failed() {
		visit()
		if time.Now().After(next) {
			samples = append(samples, heap())
			next = next.Add(every)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(samples) < 2 {
		t.Fatalf("%d heap samples", len(samples))
	}
	first, last := samples[0], samples[len(samples)-1]
	lo, hi := first, first
	for _, s := range samples {
		lo, hi = min(lo, s), max(hi, s)
	}
	st := stats.Stats()
	t.Logf("%v at 100 Hz, %d clients: live heap first %.2f, last %.2f, min %.2f, max %.2f MiB over %d samples",
		length, st.Accepted, mib(first), mib(last), mib(lo), mib(hi), len(samples))
	if last > first+512<<10 {
		t.Errorf("live heap grew by %.2f MiB in %v (from %.2f to %.2f MiB)", mib(last-first), length, mib(first), mib(last))
	}
}

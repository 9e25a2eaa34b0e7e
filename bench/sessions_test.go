package bench

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
)

// sessionKiosk is a behavior with a session per peer: each session has
// a Lua state with a counter and answers each line with its own text, so
// a peer can check that every reply came, in order.
const sessionKiosk = `<seatml><general name="visitors">
<adaptor name="visitor" type="socket" role="server" port="0" session="peer" maxsessions="20000"/>
<script>said = 0</script>
<onconnect source="visitor"><script>seat.reply("welcome")</script></onconnect>
</general>
<state name="attract"><rule source="visitor"><key>.</key><script>said = said + 1; seat.reply(event.text)</script><statetransition>menu</statetransition></rule></state>
<state name="menu"><rule source="visitor"><key>.</key><script>said = said + 1; seat.reply(event.text)</script><statetransition>attract</statetransition></rule></state>
</seatml>`

// peer is a session's connection: it counts replies and checks that each
// is the next number it sent.
type peer struct {
	name    string
	next    atomic.Int64 // the reply expected next
	got     atomic.Int64
	bad     atomic.Int64
	welcome atomic.Bool
}

func (p *peer) Send(text string) error {
	if text == "welcome" {
		p.welcome.Store(true)
		return nil
	}
	n, _ := strconv.ParseInt(text, 10, 64)
	if n != p.next.Load() {
		p.bad.Add(1)
	}
	p.next.Store(n + 1)
	p.got.Add(1)
	return nil
}
func (p *peer) String() string { return "visitor " + p.name }
func (p *peer) Peer() string   { return p.name }

// hostLogs holds what the last host logged at warning level and above.
var hostLogs *observer.ObservedLogs

// host starts the session behavior and returns its machine.
func host(tb testing.TB) *interpreter.Machine {
	tb.Helper()
	prog, diags := seatml.LoadBytes("visitors.seatml", []byte(sessionKiosk), seatml.LoadOptions{})
	if prog == nil {
		tb.Fatal(diags)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	hostLogs = logs
	m, err := interpreter.New(prog, interpreter.Options{Log: zap.New(core)})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	<-m.Ready()
	tb.Cleanup(func() { cancel(); <-done })
	return m
}

func connect(tb testing.TB, m *interpreter.Machine, name string) *peer {
	p := &peer{name: name}
	if err := m.Deliver(context.Background(), adaptors.Event{Source: "visitor", Kind: adaptors.Connected, From: p}); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkSessionStart is the time to start one session: a machine with
// its Lua state, general scripts, the initial state's onentry and
// onconnect (goal: 200 µs or less). It reports the memory each idle
// session keeps, with its Lua state, as KB/session (goal: 100 KB or less).
func BenchmarkSessionStart(b *testing.B) {
	m := host(b)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peers := make([]*peer, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		peers = append(peers, connect(b, m, fmt.Sprint("p", i)))
	}
	b.StopTimer()
	if err := interpreter.NewHand(m, nil).Settle(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if n := m.SessionCounts().Open; n != len(peers) {
		b.Fatalf("%d sessions for %d peers", n, len(peers))
	}
	for _, p := range peers {
		if !p.welcome.Load() {
			b.Fatalf("%s was not welcomed", p.name)
		}
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(peers))/1024, "KB/session")
}

// BenchmarkSessionEvents drives 10,000 concurrent sessions from 8
// producers, each event a line of a peer answered by its session's Lua
// with the line itself: ns/op is per event, events/s the rate (goal:
// 200,000/s on the 2-core machine). Every reply must come, in order.
func BenchmarkSessionEvents(b *testing.B) {
	const sessions, producers = 10_000, 8
	m := host(b)
	peers := make([]*peer, sessions)
	for i := range peers {
		peers[i] = connect(b, m, fmt.Sprint("p", i))
	}
	ctx := context.Background()
	if err := interpreter.NewHand(m, nil).Settle(ctx, nil); err != nil {
		b.Fatal(err)
	}
	var sent [sessions]int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	per := b.N / producers
	for w := range producers {
		n := per
		if w == producers-1 {
			n = b.N - per*(producers-1)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				k := w + producers*(i%(sessions/producers))
				p := peers[k]
				if err := m.Deliver(ctx, adaptors.Event{Source: "visitor", Text: strconv.FormatInt(sent[k], 10), From: p}); err != nil {
					b.Error(err)
					return
				}
				sent[k]++
			}
		}()
	}
	wg.Wait()
	if err := interpreter.NewHand(m, nil).Settle(ctx, nil); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	var got, bad int64
	for _, p := range peers {
		got += p.got.Load()
		bad += p.bad.Load()
	}
	if got != int64(b.N) || bad != 0 {
		for k, p := range peers {
			if p.got.Load() != sent[k] || p.bad.Load() != 0 {
				b.Errorf("peer %s: sent %d, got %d replies, %d out of order, next expected %d", p.name, sent[k], p.got.Load(), p.bad.Load(), p.next.Load())
				break
			}
		}
		for _, e := range hostLogs.All() {
			b.Log(e.Message, e.ContextMap())
		}
		b.Fatalf("%d replies for %d events, %d out of order; sessions %+v", got, b.N, bad, m.SessionCounts())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}

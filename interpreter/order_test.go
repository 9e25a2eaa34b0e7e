package interpreter

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/adaptors"
)

// block holds the machine's goroutine in a queued function until the
// returned release is called, as a long handler would.
func (h *harness) block() (release func()) {
	h.t.Helper()
	started, done := make(chan struct{}), make(chan struct{})
	go func() {
		_ = h.m.Sync(context.Background(), func() {
			close(started)
			<-done
		})
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		h.t.Fatal("the machine did not take the blocking function")
	}
	return func() { close(done); h.sync() }
}

// deliver queues an event without waiting for it to be handled.
func (h *harness) deliver(source, text string) {
	h.t.Helper()
	if err := h.m.Deliver(context.Background(), adaptors.Event{Source: source, Text: text}); err != nil {
		h.t.Fatalf("deliver: %v", err)
	}
}

func TestInputBeforeDeadlineRunsBeforeTimeout(t *testing.T) {
	// Issue 11: an answer that reached the queue at 0.3 s of a 0.5 s timeout
	// lost to the timeout because the handler before it ran long. Events
	// and timers are handled in arrival order; the answer fires a rule,
	// which restarts the timeout, so the timeout never runs.
	h := start(t, doc("", `<state name="質問">
<ontimeout timeout="0.5">`+msg("時間切れ")+`<statetransition>終わり</statetransition></ontimeout>
`+rule("", "<key>はい</key>"+msg("答え"))+`</state>
<state name="終わり"/>`))
	h.take()
	release := h.block()
	h.clock.Advance(300 * time.Millisecond)
	h.deliver("chat", "はい")
	h.clock.Advance(300 * time.Millisecond) // 0.6 s: the deadline has passed
	release()
	if diff := cmp.Diff([]string{"chat:答え"}, h.sends()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if got := h.state(); got != "質問" {
		t.Fatalf("state %q, want 質問", got)
	}
	// Input that arrived after the deadline comes after the timeout.
	release = h.block()
	h.clock.Advance(600 * time.Millisecond) // 0.5 s after the answer: due
	h.deliver("chat", "はい")
	release()
	if diff := cmp.Diff([]string{"chat:時間切れ"}, h.sends()); diff != "" {
		t.Fatalf("late input (-want +got):\n%s", diff)
	}
	if got := h.state(); got != "終わり" {
		t.Fatalf("state %q, want 終わり", got)
	}
}

func TestInputBeforeTickRunsBeforeOnExec(t *testing.T) {
	h := start(t, `<?xml version="1.0"?>
<seatml><general name="r" rate="2"><adaptor name="chat" type="socket" role="server" port="0"/></general>
<state name="a"><onexec>`+msg("tick")+`</onexec>`+rule("", "<key>x</key>"+msg("x"))+`</state></seatml>`)
	h.take()
	release := h.block()
	h.clock.Advance(300 * time.Millisecond)
	h.deliver("chat", "x")
	h.clock.Advance(300 * time.Millisecond) // the tick at 0.5 s is due
	release()
	if diff := cmp.Diff([]string{"chat:x", "chat:tick"}, h.sends()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestFirstOnExecOnePeriodAfterEntry(t *testing.T) {
	// Issue 11: a state entered 0.9 s into a 1 s period had its first
	// onexec 0.1 s later. Now a state's onexec waits at least one period
	// after entry; general's keeps the tick schedule, so transitions never
	// starve it (the touch-wave example releases its sensor there).
	h := start(t, doc(`<onexec>`+msg("general tick")+`</onexec>`, `<state name="a">`+rule("", "<key>go</key><statetransition>b</statetransition>")+`</state>
<state name="b"><onexec>`+msg("b tick")+`</onexec></state>`))
	h.advance(900 * time.Millisecond)
	h.event("chat", "go")
	h.take()
	h.advance(100 * time.Millisecond) // the tick at 1 s: 0.1 s after entry
	if diff := cmp.Diff([]string{"chat:general tick"}, h.sends()); diff != "" {
		t.Fatalf("0.1 s after entry (-want +got):\n%s", diff)
	}
	h.advance(time.Second) // the tick at 2 s: 1.1 s after entry
	if diff := cmp.Diff([]string{"chat:b tick", "chat:general tick"}, h.sends()); diff != "" {
		t.Fatalf("a period after entry (-want +got):\n%s", diff)
	}
}

func TestTimerOutputReachesAnIdleSocketClient(t *testing.T) {
	// Issue 11: output of a timeout waited in the socket adaptor until the
	// next incoming line. The client here sends nothing after connecting.
	h := start(t, doc("", `<state name="a"><ontimeout timeout="1">`+msg("誰もいませんか")+`<statetransition>b</statetransition></ontimeout></state>
<state name="b"><onentry>`+msg("待機")+`</onentry></state>`))
	c, err := net.DialTimeout("tcp", addrOf(t, h, "chat"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Logged once the connection is in the list a message goes to (Open
	// counts it a little earlier, at accept: a message sent in between
	// reached nobody, and the test failed under load).
	h.waitLog("client connected")
	h.clock.Advance(time.Second) // no sync: nothing else passes through the machine
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	for _, want := range []string{"誰もいませんか\n", "待機\n"} {
		line, err := r.ReadString('\n')
		if err != nil || line != want {
			t.Fatalf("read %q (%v), want %q", line, err, want)
		}
	}
}

func TestQueueIsBoundedInEvents(t *testing.T) {
	done := make(chan struct{})
	q := newEventQueue(4, done)
	ctx := context.Background()
	batch := func(n int) item { return item{batch: make([]adaptors.Event, n)} }
	if err := q.push(ctx, batch(3)); err != nil {
		t.Fatal(err)
	}
	pushed := make(chan error, 1)
	go func() { pushed <- q.push(ctx, batch(3)) }() // 6 events > 4: waits
	select {
	case err := <-pushed:
		t.Fatalf("a second batch of 3 was queued beside the first (err %v); the bound is 4 events", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := q.push(ctx, item{fn: func() {}}); err != nil { // a barrier counts no events
		t.Fatal(err)
	}
	if _, ok := q.pop(); !ok {
		t.Fatal("empty")
	}
	select {
	case err := <-pushed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting batch was not queued after the first was taken")
	}
	if n := q.len(); n != 3 {
		t.Fatalf("len = %d, want 3", n)
	}
	// Order is kept: the barrier, then the second batch.
	if it, _ := q.pop(); it.fn == nil {
		t.Fatal("the barrier did not come next")
	}
	if it, _ := q.pop(); len(it.batch) != 3 {
		t.Fatal("the second batch did not come last")
	}
	// A batch larger than the bound is taken when the queue is empty.
	if err := q.push(ctx, batch(10)); err != nil {
		t.Fatal(err)
	}
	// Once the machine has stopped, pushes fail instead of waiting forever.
	close(done)
	if err := q.push(ctx, batch(1)); err != errStopped {
		t.Fatalf("push after stop: %v, want errStopped", err)
	}
}

func TestBurstReachesAReadingPeer(t *testing.T) {
	// Issue 11: one action sending more than the per-connection bound
	// (11,000 lines of 100 bytes, 1.1 MB > 1 MiB) cut off a client that
	// reads normally, as "not reading", and delivered nothing.
	h := start(t, doc("", `<state name="s">`+rule("", `<key>burst</key><script><![CDATA[
local line = string.rep("あ", 33)  -- 99 bytes and the newline
for i = 1, 11000 do seat.reply(line) end
seat.reply("end")]]></script>`)+`</state>`))
	c, err := net.DialTimeout("tcp", addrOf(t, h, "chat"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	c.Write([]byte("burst\n"))
	r := bufio.NewReader(c)
	want := strings.Repeat("あ", 33) + "\n"
	for i := range 11000 {
		line, err := r.ReadString('\n')
		if err != nil || line != want {
			t.Fatalf("line %d: %q (%v)", i, line, err)
		}
	}
	if line, err := r.ReadString('\n'); err != nil || line != "end\n" {
		t.Fatalf("last line %q (%v)", line, err)
	}
	if n := h.m.Adaptor("chat").(adaptors.StatsReporter).Stats().SlowPeer; n != 0 {
		t.Fatalf("slow_peer = %d", n)
	}
}

func TestAbsurdTimeoutsAreClampedNotSpun(t *testing.T) {
	// Issue 11: seat.timeout(2e10) overflowed a duration and turned the
	// timeout off silently; tiny values spun. Both are clamped into
	// 0.001..2592000 s with a logged error; NaN is refused.
	h := start(t, doc("", `<state name="a">
<ontimeout timeout="1">`+msg("fired")+`</ontimeout>
`+rule("", `<key>huge</key><script>seat.timeout(2e10)</script>`)+
		rule("", `<key>tiny</key><script>seat.timeout(1e-9)</script>`)+
		rule("", `<key>nan</key><script>seat.timeout(0/0)</script>`)+`</state>`))
	h.event("chat", "huge")
	h.take()
	h.advance(29 * 24 * time.Hour)
	if got := h.sends(); len(got) != 0 {
		t.Fatalf("fired within 29 days: %q", got)
	}
	h.advance(24 * time.Hour)
	if diff := cmp.Diff([]string{"chat:fired"}, h.sends()); diff != "" {
		t.Fatalf("after 30 days (-want +got):\n%s", diff)
	}
	h.event("chat", "tiny")
	h.take()
	h.advance(time.Millisecond)
	if diff := cmp.Diff([]string{"chat:fired"}, h.sends()); diff != "" {
		t.Fatalf("tiny is 1 ms (-want +got):\n%s", diff)
	}
	h.advance(time.Millisecond)
	h.event("chat", "nan") // refused: the 1 ms timeout stays
	errs := h.logged(zapcore.ErrorLevel)
	want := []string{
		"seat.timeout(2e+10) is out of range (allowed 0.001 to 2592000 seconds, or <= 0 to disarm); using 2.592e+06",
		"seat.timeout(1e-09) is out of range (allowed 0.001 to 2592000 seconds, or <= 0 to disarm); using 0.001",
		"seat.timeout(nan) refused: not a number; the timeout is unchanged",
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Fatalf("logged errors (-want +got):\n%s", diff)
	}
}

// TestSlowScriptsWithAFullQueueKeepEachClientsLines: six clients each
// send 150 lines at once and half-close; every fourth line runs a 3 ms
// script (its reader's reading is passed on, adaptors.Baton), and the
// queue holds 8 events, so readers wait for room. Each client gets every
// reply in order, then ondisconnect runs once for each. Before the fix a
// reader waiting for room was passed on too: clients got 64 replies of
// 150.
func TestSlowScriptsWithAFullQueueKeepEachClientsLines(t *testing.T) {
	h := start(t, doc(`<onconnect source="chat"><script>conns = (conns or 0) + 1</script></onconnect>
<ondisconnect source="chat"><script>gone = (gone or 0) + 1</script></ondisconnect>`, `<state name="s">
<rule source="chat"><key>count</key><script>seat.reply(tostring(conns) .. " " .. tostring(gone))</script></rule>
<rule source="chat"><key>s(\d+)</key><script>local t = seat.now() while seat.now() - t &lt; 0.003 do end seat.reply(event.text)</script></rule>
<rule source="chat"><key>f(\d+)</key><script>seat.reply(event.text)</script></rule>
</state>`), func(o *Options) { o.Clock = nil; o.QueueLen = 8 })
	addr := addrOf(t, h, "chat")
	const clients, lines = 6, 150
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			var b strings.Builder
			var want []string
			for i := range lines {
				kind := "f"
				if (i+c)%4 == 0 {
					kind = "s"
				}
				fmt.Fprintf(&b, "%s%d\n", kind, i)
				want = append(want, fmt.Sprintf("%s%d", kind, i))
			}
			go func() {
				conn.Write([]byte(b.String()))
				conn.(*net.TCPConn).CloseWrite()
			}()
			conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			got, err := io.ReadAll(conn)
			if err != nil {
				t.Error(err)
			}
			if g := strings.Fields(string(got)); strings.Join(g, " ") != strings.Join(want, " ") {
				t.Errorf("client %d: %d replies of %d, first difference at %v", c, len(g), len(want), firstDiff(g, want))
			}
		}()
	}
	wg.Wait()
	// Each client's departure comes just after its connection closes.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	want := fmt.Sprintf("%d %d\n", clients+1, clients)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		conn.Write([]byte("count\n"))
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := r.ReadString('\n')
		if line == want && err == nil {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("onconnect and ondisconnect counts %q (%v), want %q", line, err, want)
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%d: %s vs %s", i, a[i], b[i])
		}
	}
	return "length"
}

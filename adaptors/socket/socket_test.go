package socket

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sink is a bounded queue, as the interpreter's.
type sink struct {
	ch chan adaptors.Event
}

func newSink(n int) *sink { return &sink{ch: make(chan adaptors.Event, n)} }

func (s *sink) Deliver(ctx context.Context, ev adaptors.Event) error {
	select {
	case s.ch <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *sink) EndOfInput(string) {}

func (s *sink) next(t *testing.T) adaptors.Event {
	t.Helper()
	select {
	case ev := <-s.ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
		return adaptors.Event{}
	}
}

func newAdaptor(t *testing.T, attrs map[string]string, tune adaptors.Tuning) (*Adaptor, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	a, err := New(adaptors.Config{Name: "chat", Type: "socket", Attrs: attrs, Log: zap.New(core), Tuning: tune})
	if err != nil {
		t.Fatal(err)
	}
	return a.(*Adaptor), logs
}

func server(t *testing.T, extra map[string]string, tune adaptors.Tuning) (*Adaptor, *sink, *observer.ObservedLogs) {
	attrs := map[string]string{"role": "server", "port": "0"}
	for k, v := range extra {
		attrs[k] = v
	}
	a, logs := newAdaptor(t, attrs, tune)
	s := newSink(1024)
	if err := a.Open(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, s, logs
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return c
}

func TestServerFramingAndReply(t *testing.T) {
	a, s, _ := server(t, nil, adaptors.Tuning{})
	c := dial(t, a.Addr())
	// Lines split across writes, CRLF, several lines in one write, invalid UTF-8.
	for _, chunk := range []string{"hel", "lo\r\nsecond\nthi", "rd\n", "bad \xff byte\n", "\n"} {
		if _, err := c.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for range 5 {
		got = append(got, s.next(t).Text)
	}
	want := []string{"hello", "second", "third", "bad \uFFFD byte", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events %q, want %q", got, want)
	}
	c.Write([]byte("reply to me\n"))
	e := s.next(t)
	if err := e.From.Send("just you"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "just you\n" {
		t.Fatalf("reply %q, %v", line, err)
	}
	if e.Source != "chat" || !strings.HasPrefix(e.From.String(), "chat 127.0.0.1:") {
		t.Errorf("event source %q from %q", e.Source, e.From)
	}
}

func TestOverLongLineClosesOnlyThatConnection(t *testing.T) {
	a, s, logs := server(t, map[string]string{"maxline": "16"}, adaptors.Tuning{})
	good, bad := dial(t, a.Addr()), dial(t, a.Addr())
	bad.Write([]byte(strings.Repeat("x", 17) + "\n"))
	// The bad connection is closed by the server.
	if _, err := bufio.NewReader(bad).ReadString('\n'); err == nil {
		t.Fatal("over-long line did not close the connection")
	}
	good.Write([]byte(strings.Repeat("y", 16) + "\n"))
	if got := s.next(t).Text; got != strings.Repeat("y", 16) {
		t.Fatalf("good connection got %q", got)
	}
	if err := a.Send("still here"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(good).ReadString('\n')
	if err != nil || line != "still here\n" {
		t.Fatalf("good connection read %q, %v", line, err)
	}
	if n := logs.FilterMessage("line too long; connection closed").Len(); n != 1 {
		t.Errorf("logged %d times, want once", n)
	}
}

func TestSlowReaderIsDisconnected(t *testing.T) {
	a, s, logs := server(t, nil, adaptors.Tuning{QueueBytes: 256 << 10, StallTime: 50 * time.Millisecond})
	slow := dial(t, a.Addr())
	fast := dial(t, a.Addr())
	slow.Write([]byte("hi\n"))
	fast.Write([]byte("hi\n"))
	s.next(t)
	s.next(t)
	// The slow peer never reads: its socket buffers fill, then its queue,
	// then it is cut off. The fast one gets every message.
	payload := strings.Repeat("z", 64*1024)
	fr := bufio.NewReaderSize(fast, 128*1024)
	for i := 0; logs.FilterMessage("peer is not reading; disconnected").Len() == 0; i++ {
		if i > 10000 {
			t.Fatal("slow peer never disconnected")
		}
		if err := a.Send(payload); err != nil {
			t.Fatal(err)
		}
		if line, err := fr.ReadString('\n'); err != nil || len(line) != len(payload)+1 {
			t.Fatalf("fast peer, message %d: %d bytes, %v", i, len(line), err)
		}
	}
	if err := a.Send("after"); err != nil {
		t.Fatal(err)
	}
	if line, err := fr.ReadString('\n'); err != nil || line != "after\n" {
		t.Fatalf("fast peer after the cut: %q, %v", line, err)
	}
}

func TestClientReconnectsAfterServerRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	a, logs := newAdaptor(t, map[string]string{"port": port}, adaptors.Tuning{BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond})
	s := newSink(16)
	if err := a.Open(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c1, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c1.Write([]byte("first\n"))
	if got := s.next(t).Text; got != "first" {
		t.Fatalf("got %q", got)
	}
	// The server goes away ...
	c1.Close()
	ln.Close()
	// ... messages are dropped with an error while disconnected ...
	deadline := time.Now().Add(10 * time.Second)
	for a.Send("lost") == nil {
		if time.Now().After(deadline) {
			t.Fatal("client never noticed the disconnect")
		}
		time.Sleep(time.Millisecond)
	}
	// ... and comes back on the same port.
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	defer ln2.Close()
	c2, err := ln2.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.Write([]byte("second\n"))
	if got := s.next(t).Text; got != "second" {
		t.Fatalf("got %q", got)
	}
	for a.Send("hello again") != nil {
		time.Sleep(time.Millisecond)
	}
	line, err := bufio.NewReader(c2).ReadString('\n')
	if err != nil || line != "hello again\n" {
		t.Fatalf("server got %q, %v", line, err)
	}
	if n := logs.FilterMessage("disconnected; reconnecting").Len(); n != 1 {
		t.Errorf("disconnect logged %d times, want once", n)
	}
}

func TestClientBacksOffWithoutSpinning(t *testing.T) {
	// Nothing listens: attempts must be spaced by the doubling back-off.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	a, logs := newAdaptor(t, map[string]string{"port": port}, adaptors.Tuning{BackoffMin: 10 * time.Millisecond, BackoffMax: 40 * time.Millisecond})
	start := time.Now()
	if err := a.Open(context.Background(), newSink(1)); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	deadline := time.Now().Add(30 * time.Second)
	for a.attempts.Load() < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d attempts in 30s", a.attempts.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Attempt 1 at Open, then after 10, 20, 40 and 40 ms: at least 110 ms for 5.
	if elapsed := time.Since(start); elapsed < 110*time.Millisecond {
		t.Errorf("5 attempts in %v: the back-off is not applied", elapsed)
	}
	if n := logs.FilterMessage("connection failed; retrying with back-off").Len() + logs.FilterMessage("not connected; retrying in the background").Len(); n != 1 {
		t.Errorf("connection failure logged %d times, want once per outage", n)
	}
}

func TestManyClients(t *testing.T) {
	a, s, _ := server(t, nil, adaptors.Tuning{})
	// Echo: reply to each event's own connection.
	done := make(chan struct{})
	go func() {
		for {
			select {
			case ev := <-s.ch:
				ev.From.Send("echo " + ev.Text)
			case <-done:
				return
			}
		}
	}()
	defer close(done)
	const clients, each = 100, 20
	var wg sync.WaitGroup
	errs := make(chan string, clients)
	for i := range clients {
		c := dial(t, a.Addr())
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := bufio.NewReader(c)
			for j := range each {
				msg := strconv.Itoa(i) + "-" + strconv.Itoa(j)
				c.Write([]byte(msg + "\n"))
				line, err := r.ReadString('\n')
				if err != nil || line != "echo "+msg+"\n" {
					errs <- msg + ": " + line
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

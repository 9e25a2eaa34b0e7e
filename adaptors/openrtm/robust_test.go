package openrtm

// Tests from a hostile review: each showed a problem once (now fixed),
// and keeps it fixed.

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/openrtm/corba"
	"github.com/seatml/seat/adaptors/openrtm/rtc"
)

// openNoNS opens an adaptor whose naming service is not there (it
// retries in the background, which does not matter here).
func openNoNS(t *testing.T, behavior, name string, in bool, attrs map[string]string, s adaptors.Sink) *port {
	t.Helper()
	a := map[string]string{attrNameservers: "127.0.0.1:1"}
	for k, v := range attrs {
		a[k] = v
	}
	ad, err := newPort(adaptors.Config{Behavior: behavior, Name: name, Attrs: a}, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Open(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ad.Close() })
	return ad.(*port)
}

// writer is a separate RT-Component with an OutPort connected to p.
func writer(t *testing.T, p *port, dataType string) (*rtc.Port, *rtc.Conn) {
	t.Helper()
	c, err := rtc.New(rtc.Options{InstanceName: "Writer" + p.name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	out, err := c.AddPort(rtc.PortSpec{Name: "out", DataType: dataType})
	if err != nil {
		t.Fatal(err)
	}
	cn, err := out.Connect(context.Background(), p.p.Ref(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return out, cn
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDroppedCounts: one payload that does not decode is one
// value dropped (docs: "answered PORT_ERROR, logged once per port, and
// counted"); the count must not shrink when the connection ends.
func TestDroppedCounts(t *testing.T) {
	s := make(sink, 10)
	in := openNoNS(t, "Drops", "in", true, nil, s)
	out, cn := writer(t, in, "IDL:RTC/TimedString:1.0")
	out.Write([]byte{1, 2, 3}) // not a TimedString
	// The port counts the value before it answers the put.
	waitFor(t, "the put answered", func() bool { st := cn.Stats(); return st.Dropped+st.Sent+st.Failed > 0 })
	st := in.Stats()
	t.Logf("after one undecodable value: %+v", st)
	if st.Dropped != 1 {
		t.Errorf("one undecodable value counted as %d dropped", st.Dropped)
	}
	before := st.Dropped
	if rc := out.Disconnect(context.Background(), cn); rc != rtc.OK {
		t.Fatal(rc)
	}
	if st := in.Stats(); st.Dropped < before {
		t.Errorf("dropped went from %d down to %d when the connection ended", before, st.Dropped)
	}
}

// TestFailedWritesCounted: a write whose call fails (here: the
// message is over the ORB's 64 MiB limit) reaches no peer, and is
// counted in Stats as dropped and logged (docs: "never silently lost").
func TestFailedWritesCounted(t *testing.T) {
	out := openNoNS(t, "Big", "out", false, nil, make(sink, 1))
	peer, err := rtc.New(rtc.Options{InstanceName: "BigPeer"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = peer.Close(context.Background()) })
	var mu sync.Mutex
	got := 0
	pin, _ := peer.AddPort(rtc.PortSpec{Name: "in", DataType: "TimedString", In: true, Receive: func([]byte, *rtc.Conn) rtc.PortStatus {
		mu.Lock()
		got++
		mu.Unlock()
		return rtc.PortOK
	}})
	cn, err := out.p.Connect(context.Background(), pin.Ref(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Send(strings.Repeat("x", 65<<20)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	waitFor(t, "the write tried", func() bool { st := cn.Stats(); return st.Sent+st.Failed+st.Dropped > 0 })
	t.Logf("connection stats %+v; adaptor stats %+v", cn.Stats(), out.Stats())
	mu.Lock()
	defer mu.Unlock()
	if got == 0 && out.Stats().Dropped == 0 {
		t.Errorf("a value that never went is not in the port's stats (Send returned nil)")
	}
}

// flood connects writers components' OutPorts to the rtcin in, each
// writing a TimedString every pause until the returned stop is called,
// and returns once in has received 4 values from each.
func flood(t *testing.T, in *port, prefix string, writers int, pause time.Duration) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	e := corba.NewEncoder(corba.LittleEndian)
	e.WriteULong(0)
	e.WriteULong(0)
	e.WriteString("hello")
	payload := e.Bytes()
	start := in.p.Stats().Received
	for w := 0; w < writers; w++ {
		c, err := rtc.New(rtc.Options{InstanceName: fmt.Sprintf("%s%d", prefix, w)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close(context.Background()) })
		out, _ := c.AddPort(rtc.PortSpec{Name: "out", DataType: "TimedString"})
		if _, err := out.Connect(context.Background(), in.p.Ref(), "", nil); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				out.Write(payload)
				time.Sleep(pause)
			}
		}()
	}
	waitFor(t, "the writers' values arrive", func() bool { return in.p.Stats().Received >= start+uint64(4*writers) })
	return func() { close(done); wg.Wait() }
}

// TestCloseWhileReceiving: a peer writes to an rtcin without
// pause while the adaptor closes (the behavior stops): under -race, no
// race between Close and the puts in progress.
func TestCloseWhileReceiving(t *testing.T) {
	s := make(sink, 1<<16)
	ad, err := newPort(adaptors.Config{Behavior: "Busy", Name: "in", Attrs: map[string]string{attrNameservers: "127.0.0.1:1"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Open(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	stop := flood(t, ad.(*port), "W", 4, 50*time.Microsecond)
	if err := ad.Close(); err != nil {
		t.Error(err)
	}
	stop()
}

// TestCloseTwiceAndSendAfterClose: Close twice is fine; a Send
// after Close is an error, not a silent success.
func TestCloseTwiceAndSendAfterClose(t *testing.T) {
	ad, err := newPort(adaptors.Config{Behavior: "Twice", Name: "out", Attrs: map[string]string{attrNameservers: "127.0.0.1:1"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Open(context.Background(), make(sink, 1)); err != nil {
		t.Fatal(err)
	}
	if err := ad.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ad.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ad.Send("after close"); err == nil {
		t.Error("Send after Close returns nil (the value silently dropped)")
	}
	compsMu.Lock()
	n := len(comps)
	compsMu.Unlock()
	if n != 0 {
		t.Errorf("%d components left in the registry", n)
	}
}

// TestExitThenClose: a tool's exit, then the behavior stops.
// Nothing may leak; the connect= loop should not keep retrying a
// closed component every few seconds, logging "peer not reachable".
func TestExitThenClose(t *testing.T) {
	log, logs := observed()
	before := runtime.NumGoroutine()
	ad, err := newPort(adaptors.Config{Behavior: "Exiting", Name: "out", Log: log,
		Attrs: map[string]string{attrNameservers: "127.0.0.1:1", "connect": "Nobody.rtc:in"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Open(context.Background(), make(sink, 1)); err != nil {
		t.Fatal(err)
	}
	a := ad.(*port)
	tool := corba.NewClient(corba.ClientOptions{})
	defer tool.Close()
	var rc uint32
	if err := tool.Object(a.comp.c.Ref()).Invoke(context.Background(), "exit", nil, func(d *corba.Decoder) error { rc = d.ReadULong(); return d.Err() }); err != nil || rc != 0 {
		t.Fatalf("exit: %v %v", rc, err)
	}
	// The connect= loop ends with the component (it does not go on
	// retrying a closed client).
	ended := make(chan struct{})
	go func() { a.wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the connect= loop still runs 10 s after the exit")
	}
	if n := logs.FilterMessageSnippet("OpenRTM tool asked the component to exit").Len(); n != 1 {
		t.Errorf("the exit logged %d times", n)
	}
	if err := ad.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ad.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the goroutines end", func() bool { return runtime.NumGoroutine()-before <= 2 })
}

// slowSink delivers after a pause, so that puts are in progress.
type slowSink struct{}

func (slowSink) Deliver(ctx context.Context, ev adaptors.Event) error {
	select {
	case <-time.After(20 * time.Millisecond):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
func (slowSink) EndOfInput(string) {}

// TestCloseOnePortWhileReceiving: the behavior has two ports; one
// rtcin is closed (the component lives on with the other) while peers
// put to it. Under -race: receive reads a.comp, which Close sets to nil
// without waiting for the puts in progress.
func TestCloseOnePortWhileReceiving(t *testing.T) {
	log, logs := observed()
	openNoNS(t, "Busy2", "other", false, nil, make(sink, 1))
	ad, err := newPort(adaptors.Config{Behavior: "Busy2", Name: "in", Log: log, BehaviorLog: log, Attrs: map[string]string{attrNameservers: "127.0.0.1:1"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Open(context.Background(), slowSink{}); err != nil {
		t.Fatal(err)
	}
	stop := flood(t, ad.(*port), "V", 8, time.Millisecond)
	if err := ad.Close(); err != nil {
		t.Error(err)
	}
	stop()
	if n := logs.FilterMessage("corba server: servant panicked").Len(); n > 0 {
		t.Errorf("servant panicked %d times: %v", n, logs.FilterMessage("corba server: servant panicked").All()[0].ContextMap())
	}
}

package rtc

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/openrtm/corba"
)

const timedString = "IDL:RTC/TimedString:1.0"

// received collects what an InPort gets.
type received struct {
	mu   sync.Mutex
	got  [][]byte
	wake chan struct{}
}

func newReceived() *received { return &received{wake: make(chan struct{}, 1)} }

func (r *received) receive(payload []byte, _ *Conn) PortStatus {
	r.mu.Lock()
	r.got = append(r.got, append([]byte(nil), payload...))
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return PortOK
}

// count is how many payloads have come.
func (r *received) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// wait returns once n payloads have come, or fails the test after 10 s.
func (r *received) wait(t *testing.T, n int) [][]byte {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		got := append([][]byte(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-r.wake:
		case <-deadline:
			t.Fatalf("%d payloads within 10 s, want %d", len(got), n)
		}
	}
}

func newComponent(t *testing.T, name string) *Component {
	t.Helper()
	c, err := New(Options{InstanceName: name, CallTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// timedStringPayload is the bare little-endian CDR of a TimedString.
func timedStringPayload(sec, nsec uint32, s string) []byte {
	e := corba.NewEncoder(corba.LittleEndian)
	e.WriteULong(sec)
	e.WriteULong(nsec)
	e.WriteString(s)
	return e.Bytes()
}

// TestConnectAndWrite: an OutPort connected to an InPort of another
// component, by each interface type and data flow, delivers what is
// written, in order; both ports list the connection, and a
// disconnection from either side ends it on both.
func TestConnectAndWrite(t *testing.T) {
	for _, tc := range []struct{ iface, flow string }{{CorbaCDR, "push"}, {DataService, "push"}, {CorbaCDR, "pull"}, {DataService, "pull"}} {
		t.Run(tc.iface+"/"+tc.flow, func(t *testing.T) {
			a, b := newComponent(t, "Writer"), newComponent(t, "Reader")
			out, err := a.AddPort(PortSpec{Name: "out", DataType: timedString})
			if err != nil {
				t.Fatal(err)
			}
			r := newReceived()
			in, err := b.AddPort(PortSpec{Name: "in", DataType: "RTC::TimedString", In: true, Receive: r.receive, PullInterval: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			var props NVList
			props.Set("dataport.interface_type", tc.iface)
			props.Set("dataport.dataflow_type", tc.flow)
			cn, err := out.Connect(context.Background(), in.Ref(), "", props)
			if err != nil {
				t.Fatal(err)
			}
			if cn.Peer != "Reader.in" || cn.String() != "Writer.out -> Reader.in" {
				t.Errorf("peer %q, connection %q", cn.Peer, cn)
			}
			if got := in.Conns(); len(got) != 1 || got[0].ID() != cn.ID() || got[0].Peer != "Writer.out" {
				t.Fatalf("the InPort's connections: %v", got)
			}
			want := []string{"hello", "utf-8: こんにちは", ""}
			for i, s := range want {
				if tc.flow == "pull" && i > 0 {
					// pull takes the newest: wait for each before the next
					r.wait(t, i)
				}
				if n := out.Write(timedStringPayload(1, 2, s)); n != 1 {
					t.Fatalf("Write took %d connections", n)
				}
			}
			got := r.wait(t, len(want))
			for i, s := range want {
				if string(got[i]) != string(timedStringPayload(1, 2, s)) {
					t.Errorf("payload %d: % x, want %q", i, got[i], s)
				}
			}
			if rc := in.Disconnect(context.Background(), in.Conns()[0]); rc != OK {
				t.Fatalf("disconnect: %s", rc)
			}
			if len(out.Conns()) != 0 || len(in.Conns()) != 0 {
				t.Fatalf("after disconnect: out %d, in %d connections", len(out.Conns()), len(in.Conns()))
			}
		})
	}
}

// TestConnectRefusesAnotherType: a TimedLong port is not connected to
// a TimedString one, nor an OutPort to an OutPort, and the error says
// why; nothing is left connected.
func TestConnectRefusesAnotherType(t *testing.T) {
	a, b := newComponent(t, "A"), newComponent(t, "B")
	out, _ := a.AddPort(PortSpec{Name: "out", DataType: timedString})
	long, _ := b.AddPort(PortSpec{Name: "in", DataType: "IDL:RTC/TimedLong:1.0", In: true, Receive: newReceived().receive})
	out2, _ := b.AddPort(PortSpec{Name: "out", DataType: timedString})
	_, err := out.Connect(context.Background(), long.Ref(), "", nil)
	if err == nil || err.Error() != "A.out carries RTC::TimedString and B.in carries RTC::TimedLong: a connection would deliver what neither side can read" {
		t.Errorf("TimedString to TimedLong: %v", err)
	}
	_, err = out.Connect(context.Background(), out2.Ref(), "", nil)
	if err == nil || !strings.Contains(err.Error(), "are both DataOutPorts") {
		t.Errorf("OutPort to OutPort: %v", err)
	}
	if len(out.Conns())+len(long.Conns())+len(out2.Conns()) != 0 {
		t.Error("a refused connection was kept")
	}
}

// TestPeerGone: when the InPort's component goes away, the OutPort's
// next write finds it gone and the connection ends with a reason.
func TestPeerGone(t *testing.T) {
	a := newComponent(t, "A")
	b, err := New(Options{InstanceName: "B"})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan ConnEvent, 4)
	out, _ := a.AddPort(PortSpec{Name: "out", DataType: timedString, OnConnection: func(ev ConnEvent) { ended <- ev }})
	in, _ := b.AddPort(PortSpec{Name: "in", DataType: timedString, In: true, Receive: newReceived().receive})
	if _, err := out.Connect(context.Background(), in.Ref(), "", nil); err != nil {
		t.Fatal(err)
	}
	if ev := <-ended; !ev.Up {
		t.Fatalf("first event %+v", ev)
	}
	// B ends without telling A (as a killed process would).
	in.mu.Lock()
	in.conns = nil
	in.mu.Unlock()
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	out.Write(timedStringPayload(0, 0, "anyone?"))
	select {
	case ev := <-ended:
		if ev.Up || ev.Reason == "" {
			t.Fatalf("event %+v, want an end with a reason", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end")
	}
	if len(out.Conns()) != 0 {
		t.Error("the lost connection is still listed")
	}
}

func TestSameDataType(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"IDL:RTC/TimedString:1.0", "TimedString", true},
		{"IDL:RTC/TimedString:1.0", "RTC::TimedString", true},
		{"IDL:RTC/TimedString:1.0", "RTC.TimedString", true},
		{"IDL:RTC/TimedString:1.0", "IDL:RTC/TimedLong:1.0", false},
		{"IDL:RTC/TimedString:1.0", "IDL:Other/TimedString:1.0", false},
		{"TimedString", "TimedWString", false},
	} {
		if got := SameDataType(tc.a, tc.b); got != tc.same {
			t.Errorf("SameDataType(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

package rtc

import (
	"context"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// connected makes two components, Writer.out connected to Reader.in
// with receive as the InPort's Receive.
func connected(t *testing.T, receive func([]byte, *Conn) PortStatus, opts Options) (out, in *Port, cn *Conn) {
	t.Helper()
	opts.InstanceName = "Writer"
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	b := newComponent(t, "Reader")
	out, _ = a.AddPort(PortSpec{Name: "out", DataType: timedString, QueueBytes: 4 << 20})
	in, _ = b.AddPort(PortSpec{Name: "in", DataType: timedString, In: true, Receive: receive})
	cn, err = out.Connect(context.Background(), in.Ref(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return out, in, cn
}

// TestBigEndianPeer: a put in a big-endian GIOP message (hand-made, as
// a big-endian host's ORB writes it) is read and answered in the
// client's byte order; the payload is OpenRTM's little-endian CDR.
func TestBigEndianPeer(t *testing.T) {
	r := newReceived()
	_, in, _ := connected(t, r.receive, Options{})
	ior, err := corba.ParseIOR(mustString(t, in.Conns()[0].prof.Properties, "dataport.corba_cdr.inport_ior"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := ior.IIOP()
	e, err := corba.EncodeRequest(corba.Version{Major: 1, Minor: 2}, corba.BigEndian, &corba.Request{RequestID: 7, ResponseFlags: 3, ObjectKey: p.ObjectKey, Operation: "put"})
	if err != nil {
		t.Fatal(err)
	}
	e.Align(8)
	payload := timedStringPayload(1, 2, "ビッグエンディアン")
	e.WriteOctetSeq(payload)
	conn, err := net.Dial("tcp", net.JoinHostPort(p.Host, strconv.Itoa(int(p.Port))))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(e.Bytes()); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	raw, err := corba.ReadMessage(conn, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	m, err := corba.ParseMessage(raw)
	if err != nil {
		t.Fatal(err)
	}
	if m.Reply == nil || m.Reply.RequestID != 7 || m.Header.Order != corba.BigEndian {
		t.Fatalf("reply %+v, header %+v", m.Reply, m.Header)
	}
	if st := m.Body().ReadULong(); st != uint32(PortOK) {
		t.Errorf("status %d", st)
	}
	if got := r.wait(t, 1); string(got[0]) != string(payload) {
		t.Errorf("payload % x", got[0])
	}
}

func mustString(t *testing.T, l NVList, name string) string {
	t.Helper()
	s, ok := l.String(name)
	if !ok {
		t.Fatalf("no %s in %v", name, l)
	}
	return s
}

// TestBigPayloadAndFlood: a 10 MB value crosses; a flood of writes to a
// peer that takes its time is bounded by the connection's queue (4 MiB
// here): what does not fit is dropped and counted, and every write is
// either delivered or counted, never lost silently.
func TestBigPayloadAndFlood(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	release := make(chan struct{})
	var got atomic.Int64
	out, _, cn := connected(t, func(p []byte, _ *Conn) PortStatus {
		mu.Lock()
		sizes = append(sizes, len(p))
		mu.Unlock()
		if len(p) < 1<<20 {
			<-release // a slow peer
		}
		got.Add(1)
		return PortOK
	}, Options{})
	big := make([]byte, 10<<20)
	big[len(big)-1] = 0xaa
	out.Write(big)
	deadline := time.Now().Add(20 * time.Second)
	for got.Load() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the 10 MB value did not arrive within 20 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	if sizes[0] != len(big) {
		t.Errorf("got %d bytes", sizes[0])
	}
	mu.Unlock()

	const n = 2000
	small := make([]byte, 4096) // 2000 × 4 KiB = 8 MiB against a 4 MiB queue
	for i := 0; i < n; i++ {
		out.Write(small)
	}
	close(release)
	deadline = time.Now().Add(30 * time.Second)
	for {
		st := cn.Stats()
		if int(st.Sent)-1+int(st.Dropped) == n {
			if st.Dropped == 0 || st.Sent < 2 {
				t.Errorf("stats %+v: want some of the flood dropped and some sent", st)
			}
			if int(got.Load()) != int(st.Sent) {
				t.Errorf("the peer got %d, %d sent", got.Load(), st.Sent)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v after 30 s: %d writes unaccounted", st, n-int(st.Sent)+1-int(st.Dropped))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHungPeer: a peer that takes a connection's calls and never answers
// holds up that connection only: its writes time out (counted as
// failed), a second connection of the same port keeps delivering, and
// the port's operations answer at once.
func TestHungPeer(t *testing.T) {
	hang := make(chan struct{})
	out, _, hung := connected(t, func([]byte, *Conn) PortStatus { <-hang; return PortOK }, Options{CallTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { close(hang) }) // before the components close: they wait for the calls in progress
	r := newReceived()
	c := newComponent(t, "Other")
	in2, _ := c.AddPort(PortSpec{Name: "in", DataType: timedString, In: true, Receive: r.receive})
	if _, err := out.Connect(context.Background(), in2.Ref(), "", nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		out.Write(timedStringPayload(0, 0, "x"))
	}
	r.wait(t, 5)
	start := time.Now()
	if len(out.Profile().Connectors) != 2 || time.Since(start) > time.Second {
		t.Error("the port's profile waited for the hung peer")
	}
	deadline := time.Now().Add(10 * time.Second)
	for hung.Stats().Failed == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no write to the hung peer failed within 10 s: %+v", hung.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMalformedGIOP: garbage from a raw socket costs its connection one
// log line; the component goes on serving everyone else.
func TestMalformedGIOP(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	c, err := New(Options{InstanceName: "Target", Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	for _, junk := range [][]byte{
		[]byte("GET / HTTP/1.0\r\n\r\n"),
		append([]byte("GIOP\x01\x02\x01\x00\xff\xff\xff\x7f"), make([]byte, 64)...), // absurd size
		append([]byte("GIOP\x01\x02\x01\x00\x10\x00\x00\x00"), make([]byte, 16)...), // a request that is not one
	} {
		conn, err := net.Dial("tcp", c.Addr())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = conn.Write(junk)
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 256)
		for {
			if _, err := conn.Read(buf); err != nil {
				break // closed by the component, after a MessageError or not
			}
		}
		conn.Close()
	}
	var name string
	err = c.Client().Object(c.Ref()).Invoke(context.Background(), "get_sdo_id", nil, func(d *corba.Decoder) error {
		name = d.ReadString("id")
		return d.Err()
	})
	if err != nil || name != "Target" {
		t.Fatalf("after the junk: %q, %v", name, err)
	}
	if n := logs.Len(); n < 3 || n > 6 {
		for _, e := range logs.All() {
			t.Log(e.Message, e.ContextMap())
		}
		t.Errorf("%d log lines for 3 bad connections", n)
	}
}

package rtc

// Tests from a hostile review: each showed a problem once (now fixed),
// and keeps it fixed.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/seatml/seat/adaptors/openrtm/corba"
	"github.com/seatml/seat/adaptors/openrtm/omnitest"
)

// slowPort serves a port's PortService with a delay before some
// operations. started receives each slowed operation as it begins, and
// finished counts those that have ended.
type slowPort struct {
	inner    corba.Servant
	delay    map[string]time.Duration
	started  chan string
	finished atomic.Int64
}

func (s *slowPort) RepositoryIDs() []string { return s.inner.RepositoryIDs() }
func (s *slowPort) Invoke(ctx context.Context, op string, args *corba.Decoder, res *corba.Encoder) error {
	if d, ok := s.delay[op]; ok {
		select {
		case s.started <- op:
		default:
		}
		defer s.finished.Add(1)
		time.Sleep(d)
	}
	// omniORB ignores GIOP CancelRequest: the operation carries on.
	return s.inner.Invoke(context.WithoutCancel(ctx), op, args, res)
}

// slowDown makes a port answer op only after a delay (same key, so the
// same reference).
func slowDown(t *testing.T, c *Component, p *Port, delay map[string]time.Duration) *slowPort {
	t.Helper()
	c.server.Unregister(p.key)
	sp := &slowPort{inner: (*portService)(p), delay: delay, started: make(chan string, 16)}
	if _, err := c.server.Register(p.key, sp); err != nil {
		t.Fatal(err)
	}
	return sp
}

// until waits for cond, or fails the test after 10 s saying what.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// toolConnect is what rtcon does: connect on target with cp.
func toolConnect(ctx context.Context, cl *corba.Client, target *corba.IOR, cp *ConnectorProfile) (ReturnCode, *ConnectorProfile, error) {
	var rc ReturnCode
	var got *ConnectorProfile
	err := cl.Object(target).Invoke(ctx, "connect",
		func(e *corba.Encoder) error { return writeConnectorProfile(e, cp) },
		func(d *corba.Decoder) error {
			rc = ReturnCode(d.ReadULong())
			got = readConnectorProfile(d)
			return d.Err()
		})
	return rc, got, err
}

func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	return strings.Count(string(buf[:n]), fn)
}

// TestCloseDuringNotifyConnect: a tool's connect is in progress on
// a component when it closes (seat stops, or a tool's exit). Close
// should leave no connection and no goroutine behind, and the peer
// should not be left connected to a component that is gone.
func TestCloseDuringNotifyConnect(t *testing.T) {
	a, err := New(Options{InstanceName: "A", CallTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := a.AddPort(PortSpec{Name: "out", DataType: timedString})
	b := newComponent(t, "B")
	in, _ := b.AddPort(PortSpec{Name: "in", DataType: timedString, In: true, Receive: newReceived().receive})
	slow := slowDown(t, b, in, map[string]time.Duration{"get_port_profile": time.Second})

	tool := corba.NewClient(corba.ClientOptions{})
	defer tool.Close()
	cp := &ConnectorProfile{Name: "c", ID: "close-race", Ports: []*corba.IOR{out.Ref(), in.Ref()}}
	done := make(chan error, 1)
	go func() {
		rc, _, err := toolConnect(context.Background(), tool, out.Ref(), cp)
		t.Logf("tool's connect: rc %v, err %v", rc, err)
		done <- err
	}()
	<-slow.started // A is now waiting on B's profile
	before := goroutinesIn("(*sender).run")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Logf("Close: %v", err)
	}
	<-done
	if n := len(out.Conns()); n != 0 {
		t.Errorf("after Close, the closed component's OutPort lists %d connection(s)", n)
	}
	until(t, "the sender goroutines end", func() bool { return goroutinesIn("(*sender).run") <= before })
	if n := len(in.Conns()); n != 0 {
		t.Errorf("the peer InPort is left with %d connection(s) to a closed component", n)
	}
}

// TestFailedConnectLetsPeerGo: when seat's connect chain
// fails after a peer's notify_connect went through (here: the answer
// came after seat's deadline), every port that took it lets it go, as
// OpenRTM's PortBase::connect has them do; else the peer would keep a
// connection (and its InPortCdr servant) forever, one more each retry
// of connect=.
func TestFailedConnectLetsPeerGo(t *testing.T) {
	a, err := New(Options{InstanceName: "A", CallTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	out, _ := a.AddPort(PortSpec{Name: "out", DataType: timedString})
	b := newComponent(t, "B")
	in, _ := b.AddPort(PortSpec{Name: "in", DataType: timedString, In: true, Receive: newReceived().receive})
	slow := slowDown(t, b, in, map[string]time.Duration{"notify_connect": 800 * time.Millisecond})
	for i := 0; i < 3; i++ {
		if _, err := out.Connect(context.Background(), in.Ref(), "", nil); err == nil {
			t.Fatal("connect succeeded")
		} else if i == 0 {
			t.Logf("Connect: %v", err)
		}
	}
	// The peer's three notify_connects end after seat gave up; seat
	// undoes each once more after its time limit (2 × 300 ms).
	until(t, "the peer's late notify_connects end", func() bool { return slow.finished.Load() == 3 })
	if n := len(out.Conns()); n != 0 {
		t.Errorf("seat's side: %d connections", n)
	}
	until(t, "the peer lets the failed connections go", func() bool { return len(in.Conns()) == 0 })
}

// TestDuplicateConnectorID: a tool (RTSystemEditor restoring a
// system) calls connect with a connector_id the port already has.
// OpenRTM's PortBase::connect answers PRECONDITION_NOT_MET ("Connection
// already exists"), and so does seat: a second connection with the same
// id would deliver every value twice, and disconnect(id) end only one.
func TestDuplicateConnectorID(t *testing.T) {
	bin := rtcpeer(t)
	ns := omnitest.StartNameServer(t)
	sc := registered(t, ns, "Seat", Options{})
	cpp := omnitest.Start(t, "ready", bin, "serve", "Peer.rtc", "-ORBInitRef", "NameService="+ns.Corbaloc)
	peerIn := resolvePort(t, sc.Component, ns, "Peer.rtc", "Peer.in")
	tool := corba.NewClient(corba.ClientOptions{})
	defer tool.Close()
	for i := 0; i < 2; i++ {
		cp := &ConnectorProfile{Name: "restored", ID: "same-id", Ports: []*corba.IOR{sc.out.Ref(), peerIn}}
		rc, _, err := toolConnect(context.Background(), tool, sc.out.Ref(), cp)
		t.Logf("connect #%d: %v %v", i+1, rc, err)
	}
	if n := len(sc.out.Conns()); n != 1 {
		t.Errorf("seat's OutPort has %d connections with id same-id", n)
	}
	sc.out.Write(timedStringPayload(0, 0, "once"))
	sc.out.Write(timedStringPayload(0, 0, "then"))
	cpp.WaitLines(t, "got: then", 1) // after "once", on the one connection
	if n := strings.Count(cpp.Output(), "got: once"); n != 1 {
		t.Errorf("one write arrived %d times", n)
	}
	if rc := sc.out.disconnect(context.Background(), "same-id"); rc != OK {
		t.Errorf("disconnect: %v", rc)
	}
	if n := len(sc.out.Conns()); n != 0 {
		t.Errorf("after disconnect(same-id), %d connection(s) remain", n)
	}
}

// TestBlackholePeerDoesNotBlockClose: a peer InPort that accepts
// TCP and never answers put. Writes must not block, the port's Close
// must end promptly.
func TestBlackholePeerDoesNotBlockClose(t *testing.T) {
	a, err := New(Options{InstanceName: "A", CallTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := a.AddPort(PortSpec{Name: "out", DataType: timedString})
	b := newComponent(t, "B")
	var puts atomic.Int64
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	in, _ := b.AddPort(PortSpec{Name: "in", DataType: timedString, In: true, Receive: func([]byte, *Conn) PortStatus {
		puts.Add(1)
		<-release
		return PortOK
	}})
	_ = in
	if _, err := out.Connect(context.Background(), in.Ref(), "", nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < 1000; i++ {
		out.Write(timedStringPayload(0, 0, "x"))
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("1000 writes took %v", d)
	}
	until(t, "a put reaches the peer that never answers", func() bool { return puts.Load() >= 1 })
	start = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	_ = a.Close(ctx)
	t.Logf("puts that reached the peer: %d; Close took %v", puts.Load(), time.Since(start))
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v with a peer that never answers", d)
	}
}

// TestUnknownIDs: disconnect and notify_disconnect of an unknown
// id are BAD_PARAMETER as OpenRTM answers; get_connector_profile an
// empty profile.
func TestUnknownIDs(t *testing.T) {
	a := newComponent(t, "A")
	out, _ := a.AddPort(PortSpec{Name: "out", DataType: timedString})
	tool := corba.NewClient(corba.ClientOptions{})
	defer tool.Close()
	for _, op := range []string{"disconnect", "notify_disconnect"} {
		var rc ReturnCode
		err := tool.Object(out.Ref()).Invoke(context.Background(), op,
			func(e *corba.Encoder) error { e.WriteString("nope"); return nil },
			func(d *corba.Decoder) error { rc = ReturnCode(d.ReadULong()); return d.Err() })
		if err != nil || rc != BadParameter {
			t.Errorf("%s: %v %v", op, rc, err)
		}
	}
}

// fakeInPort is an InPort served as an omniORB/OpenRTM InPort behaves:
// its notify_connect publishes an InPortCdr and does not call back; it
// ignores cancellation. get_port_profile may be slow.
type fakeInPort struct {
	srv      *corba.Server
	ref      *corba.IOR
	sinkRef  *corba.IOR
	delay    time.Duration
	conns    atomic.Int64
	puts     atomic.Int64
	discons  atomic.Int64
	sinkHang chan struct{}
	// asked receives when get_port_profile begins.
	asked chan struct{}
}

func newFakeInPort(t *testing.T, delay time.Duration) *fakeInPort {
	srv, err := corba.Listen(corba.ServerOptions{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeInPort{srv: srv, delay: delay, asked: make(chan struct{}, 16)}
	if f.ref, err = srv.Register([]byte("port"), f); err != nil {
		t.Fatal(err)
	}
	if f.sinkRef, err = srv.Register([]byte("sink"), fakeSink{f}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	return f
}

func (*fakeInPort) RepositoryIDs() []string { return []string{IDPortService} }
func (f *fakeInPort) Invoke(ctx context.Context, op string, args *corba.Decoder, res *corba.Encoder) error {
	switch op {
	case "get_port_profile":
		select {
		case f.asked <- struct{}{}:
		default:
		}
		time.Sleep(f.delay)
		pp := &PortProfile{Name: "Fake.in", Ref: f.ref}
		pp.Properties.Set("port.port_type", "DataInPort")
		pp.Properties.Set("dataport.data_type", timedString)
		return writePortProfile(res, pp)
	case "notify_connect":
		cp := readConnectorProfile(args)
		cp.Properties.Set("dataport.corba_cdr.inport_ior", f.sinkRef.String())
		f.conns.Add(1)
		res.WriteULong(uint32(OK))
		return writeConnectorProfile(res, cp)
	case "notify_disconnect":
		args.ReadString("id")
		f.conns.Add(-1)
		f.discons.Add(1)
		res.WriteULong(uint32(OK))
	default:
		return corba.BadOperation()
	}
	return nil
}

type fakeSink struct{ f *fakeInPort }

func (fakeSink) RepositoryIDs() []string { return []string{IDInPortCdr} }
func (s fakeSink) Invoke(ctx context.Context, op string, args *corba.Decoder, res *corba.Encoder) error {
	args.ReadOctetSeq("data")
	s.f.puts.Add(1)
	res.WriteULong(uint32(PortOK))
	return nil
}

// TestCloseDuringNotifyConnectOpenRTMLikePeer: as
// TestCloseDuringNotifyConnect, with a peer that behaves as OpenRTM's
// InPort (it does not call back during notify_connect), made in Go to
// be slow at the right moment.
func TestCloseDuringNotifyConnectOpenRTMLikePeer(t *testing.T) {
	a, err := New(Options{InstanceName: "A", CallTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := a.AddPort(PortSpec{Name: "out", DataType: timedString})
	peer := newFakeInPort(t, time.Second)
	tool := corba.NewClient(corba.ClientOptions{})
	defer tool.Close()
	cp := &ConnectorProfile{Name: "c", ID: "close-race", Ports: []*corba.IOR{out.Ref(), peer.ref}}
	done := make(chan error, 1)
	before := goroutinesIn("(*sender).run")
	go func() {
		rc, _, err := toolConnect(context.Background(), tool, out.Ref(), cp)
		t.Logf("tool's connect: rc %v, err %v", rc, err)
		done <- err
	}()
	<-peer.asked // A is now waiting on the peer's profile
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Logf("Close: %v", err)
	}
	<-done
	if n := len(out.Conns()); n != 0 {
		t.Errorf("after Close, the closed component's OutPort lists %d connection(s)", n)
	}
	until(t, "the sender goroutines end", func() bool { return goroutinesIn("(*sender).run") <= before })
	if n := peer.conns.Load(); n != 0 {
		t.Errorf("the peer is left with %d connection(s) to a closed component (told %d disconnections)", n, peer.discons.Load())
	}
	if n := out.Write(timedStringPayload(0, 0, "after close")); n != 0 {
		t.Errorf("a write after Close was taken by %d connection(s)", n)
	}
}

// closeOnceProxy forwards TCP to target, except that the first request
// on the first connection is answered by GIOP CloseConnection (as an
// ORB that closes an idle connection while the request crossed it):
// GIOP says such a request was not processed and may be sent again.
func closeOnceProxy(t *testing.T, target string) uint16 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		first := true
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if first {
				first = false
				go func() {
					hdr := make([]byte, 12)
					if _, err := io.ReadFull(c, hdr); err != nil {
						return
					}
					size := binary.LittleEndian.Uint32(hdr[8:])
					if hdr[6]&1 == 0 {
						size = binary.BigEndian.Uint32(hdr[8:])
					}
					io.CopyN(io.Discard, c, int64(size))
					c.Write([]byte{'G', 'I', 'O', 'P', 1, 2, 1, 5, 0, 0, 0, 0})
					c.Close()
				}()
				continue
			}
			go func() {
				u, err := net.Dial("tcp", target)
				if err != nil {
					c.Close()
					return
				}
				go func() { io.Copy(u, c); u.Close() }()
				io.Copy(c, u)
				c.Close()
			}()
		}
	}()
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

// TestCloseConnectionIsNotPeerGone: a put answered by
// CloseConnection (not processed; retryable) is sent again on a new
// connection; the connection does not end as if the peer were gone.
func TestCloseConnectionIsNotPeerGone(t *testing.T) {
	peer := newFakeInPort(t, 0)
	p, _ := peer.sinkRef.IIOP()
	port := closeOnceProxy(t, net.JoinHostPort(p.Host, fmt.Sprint(p.Port)))
	proxied := &corba.IIOPProfile{Version: p.Version, Host: p.Host, Port: port, ObjectKey: p.ObjectKey}
	peer.sinkRef = &corba.IOR{TypeID: peer.sinkRef.TypeID, Profiles: []corba.TaggedProfile{proxied.Profile(corba.LittleEndian)}}

	a := newComponent(t, "A")
	ended := make(chan ConnEvent, 2)
	out, _ := a.AddPort(PortSpec{Name: "out", DataType: timedString, OnConnection: func(ev ConnEvent) {
		if !ev.Up {
			ended <- ev
		}
	}})
	if _, err := out.Connect(context.Background(), peer.ref, "", nil); err != nil {
		t.Fatal(err)
	}
	out.Write(timedStringPayload(0, 0, "one"))
	select {
	case ev := <-ended:
		t.Errorf("the connection ended: %s", ev.Reason)
	case <-time.After(time.Second):
	}
	out.Write(timedStringPayload(0, 0, "two"))
	// "one" was sent again on a new connection; both arrive.
	until(t, "both puts reach the peer", func() bool { return peer.puts.Load() == 2 })
}

// TestEndedLogHasCounts: docs/openrtm.md: "The connections
// themselves (peer, interface, counts) are in the log when made and
// ended."
func TestEndedLogHasCounts(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	a, err := New(Options{InstanceName: "A", Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	out, _ := a.AddPort(PortSpec{Name: "out", DataType: timedString})
	b := newComponent(t, "B")
	r := newReceived()
	in, _ := b.AddPort(PortSpec{Name: "in", DataType: timedString, In: true, Receive: r.receive})
	cn, err := out.Connect(context.Background(), in.Ref(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Write(timedStringPayload(0, 0, "x"))
	r.wait(t, 1)
	out.Disconnect(context.Background(), cn)
	for _, e := range logs.FilterMessage("OpenRTM connection ended").All() {
		t.Logf("ended: %v", e.ContextMap())
		if _, ok := e.ContextMap()["sent"]; !ok {
			t.Errorf("no counts in %q: %v", e.Message, e.ContextMap())
		}
	}
}

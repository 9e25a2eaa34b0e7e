package rtc

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"time"

	"go.uber.org/zap/zaptest"

	"github.com/seatml/seat/adaptors/openrtm/corba"
	"github.com/seatml/seat/adaptors/openrtm/omnitest"
)

func rtcpeer(t *testing.T) string { return omnitest.RTCPeer(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	omnitest.Cleanup()
	os.Exit(code)
}

// seatComponent is a component with a TimedString InPort "in" and
// OutPort "out", registered in ns as host.host_cxt/NAME.rtc.
type seatComponent struct {
	*Component
	in, out *Port
	got     *received
	reg     *Registration
	name    string
}

func registered(t *testing.T, ns *omnitest.NameServer, instance string, opts Options) *seatComponent {
	t.Helper()
	opts.InstanceName = instance
	if opts.CallTimeout == 0 {
		opts.CallTimeout = 3 * time.Second
	}
	opts.Logger = zaptest.NewLogger(t)
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	sc := &seatComponent{Component: c, got: newReceived()}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	if sc.in, err = c.AddPort(PortSpec{Name: "in", DataType: timedString, In: true, Receive: sc.got.receive, PullInterval: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if sc.out, err = c.AddPort(PortSpec{Name: "out", DataType: timedString}); err != nil {
		t.Fatal(err)
	}
	sc.name = c.FormatName(DefaultNamingFormat)
	if sc.reg, err = c.Register(ns.Addr, []string{sc.name}, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.reg.Stop(context.Background()) })
	select {
	case <-sc.reg.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not registered within 10 s")
	}
	return sc
}

func run(t *testing.T, ns *omnitest.NameServer, args ...string) string {
	t.Helper()
	out, err := ns.Run(t, rtcpeer(t), args...)
	if err != nil {
		t.Fatalf("rtcpeer %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestToolsSeeTheComponent: a C++ tool on omniORB finds seat's component
// in omniNames under OpenRTM's name, sees its profile, ports, execution
// context and configuration as rtcat does, activates and deactivates it
// as rtact and rtdeact do, and makes it exit.
func TestToolsSeeTheComponent(t *testing.T) {
	bin := rtcpeer(t)
	ns := omnitest.StartNameServer(t)
	exited := make(chan struct{})
	var states []LifeCycleState
	var mu sync.Mutex
	sc := registered(t, ns, "Seatぼっと", Options{OnExit: func() { close(exited) },
		OnState: func(s LifeCycleState) { mu.Lock(); states = append(states, s); mu.Unlock() }})
	host, _ := os.Hostname()
	if want := host + ".host_cxt/Seatぼっと.rtc"; sc.name != want {
		t.Fatalf("name %q, want %q", sc.name, want)
	}
	if got := ns.Nameclt(t, "list", host+".host_cxt"); !strings.Contains(got, "Seatぼっと.rtc") {
		t.Fatalf("nameclt list: %q", got)
	}
	out := run(t, ns, "cat", sc.name)
	for _, want := range []string{
		"instance: Seatぼっと\n", "type: seat\n", "ec0: INACTIVE rate 1000 alive yes\n",
		"port: Seatぼっと.in DataInPort IDL:RTC/TimedString:1.0 connectors 0\n",
		"port: Seatぼっと.out DataOutPort IDL:RTC/TimedString:1.0 connectors 0\n",
		"config: default active default\n", "sdo: Seatぼっと\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rtcpeer cat: no %q in\n%s", want, out)
		}
	}
	if out := run(t, ns, "act", sc.name); out != "rc: RTC_OK\n" || sc.State() != Active {
		t.Errorf("act: %q, state %s", out, sc.State())
	}
	if out := run(t, ns, "act", sc.name); out != "rc: PRECONDITION_NOT_MET\n" {
		t.Errorf("act twice: %q", out)
	}
	if out := run(t, ns, "deact", sc.name); out != "rc: RTC_OK\n" || sc.State() != Inactive {
		t.Errorf("deact: %q, state %s", out, sc.State())
	}
	mu.Lock()
	if len(states) != 2 || states[0] != Active || states[1] != Inactive {
		t.Errorf("OnState told %v", states)
	}
	mu.Unlock()
	if out := run(t, ns, "exit", sc.name); out != "rc: RTC_OK\n" {
		t.Errorf("exit: %q", out)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("OnExit not called")
	}
	if _, err := sc.AddPort(PortSpec{Name: "late", DataType: timedString}); err == nil {
		t.Error("a port was added to a component that exited")
	}
	_ = bin
}

// TestCppPeerTalks: seat's ports and an omniORB C++ component's connect
// both ways, by a tool's connect on either side and by seat's own
// Connect; Japanese text crosses unchanged, marshalled by omniORB's CDR
// on the other side; a disconnection from the tool ends both sides.
func TestCppPeerTalks(t *testing.T) {
	bin := rtcpeer(t)
	ns := omnitest.StartNameServer(t)
	sc := registered(t, ns, "Seat", Options{})
	cpp := omnitest.Start(t, "ready", bin, "serve", "Peer.rtc", "-ORBInitRef", "NameService="+ns.Corbaloc)

	// A tool connects seat's OutPort to the peer's InPort (connect on
	// seat's port): seat makes up the connector id and calls the peer.
	out := run(t, ns, "con", sc.name+":out", "Peer.rtc:in")
	if !strings.HasPrefix(out, "rc: RTC_OK\nid: ") || !strings.Contains(out, "property: dataport.corba_cdr.inport_ior\n") {
		t.Fatalf("con seat:out peer:in:\n%s", out)
	}
	for _, s := range []string{"hello", "utf-8: こんにちは", ""} {
		sc.out.Write(timedStringPayload(1, 2, s))
	}
	if got := cpp.WaitLines(t, "got: ", 3); got[0] != "hello" || got[1] != "utf-8: こんにちは" || got[2] != "" {
		t.Errorf("the peer got %q", got)
	}
	if st := sc.out.Conns()[0].Stats(); st.Sent != 3 || st.Dropped+st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}

	// The tool connects the peer's OutPort to seat's InPort (connect on
	// the peer's port): seat publishes its InPortCdr.
	if out := run(t, ns, "con", "Peer.rtc:out", sc.name+":in"); !strings.HasPrefix(out, "rc: RTC_OK\n") {
		t.Fatalf("con peer:out seat:in:\n%s", out)
	}
	cpp.Send(t, "ロボットです")
	got := sc.got.wait(t, 1)
	d := corba.NewDecoder(got[0], corba.LittleEndian)
	if sec, nsec, s := d.ReadULong(), d.ReadULong(), d.ReadString("data"); sec != 1700000000 || nsec != 5 || s != "ロボットです" || d.Err() != nil {
		t.Errorf("seat got %d %d %q (%v)", sec, nsec, s, d.Err())
	}

	// Disconnections from the tool end both sides.
	if out := run(t, ns, "dis", sc.name+":out"); out != "rc: RTC_OK\n" {
		t.Errorf("dis: %q", out)
	}
	if out := run(t, ns, "dis", "Peer.rtc:out"); out != "rc: RTC_OK\n" {
		t.Errorf("dis: %q", out)
	}
	if n := len(sc.out.Conns()) + len(sc.in.Conns()); n != 0 {
		t.Errorf("%d connections left on seat's side", n)
	}
	if out := run(t, ns, "cat", "Peer.rtc"); strings.Count(out, "connectors 0") != 2 {
		t.Errorf("the peer still lists connections:\n%s", out)
	}

	// seat connects by itself, as connect= does.
	peerIn := resolvePort(t, sc.Component, ns, "Peer.rtc", "Peer.in")
	cn, err := sc.out.Connect(context.Background(), peerIn, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	sc.out.Write(timedStringPayload(0, 0, "by seat"))
	if got := cpp.WaitLines(t, "got: ", 4); got[3] != "by seat" {
		t.Errorf("the peer got %q", got)
	}
	if rc := sc.out.Disconnect(context.Background(), cn); rc != OK {
		t.Errorf("disconnect: %s", rc)
	}
}

// TestCppPeerOfAnotherType: a TimedLong peer port is refused in both
// directions with BAD_PARAMETER, whichever side the tool asks.
func TestCppPeerOfAnotherType(t *testing.T) {
	bin := rtcpeer(t)
	ns := omnitest.StartNameServer(t)
	sc := registered(t, ns, "Seat", Options{})
	omnitest.Start(t, "ready", bin, "serve", "Long.rtc", "TimedLong", "-ORBInitRef", "NameService="+ns.Corbaloc)
	if out := run(t, ns, "con", sc.name+":out", "Long.rtc:in"); !strings.HasPrefix(out, "rc: BAD_PARAMETER\n") {
		t.Errorf("seat:out to a TimedLong InPort:\n%s", out)
	}
	if out := run(t, ns, "con", "Long.rtc:out", sc.name+":in"); !strings.HasPrefix(out, "rc: BAD_PARAMETER\n") {
		t.Errorf("a TimedLong OutPort to seat:in:\n%s", out)
	}
	if n := len(sc.out.Conns()) + len(sc.in.Conns()); n != 0 {
		t.Errorf("%d connections kept", n)
	}
}

// resolvePort finds a component's port by its profile name.
func resolvePort(t *testing.T, c *Component, ns *omnitest.NameServer, name, port string) *corba.IOR {
	t.Helper()
	ctx := context.Background()
	nc, err := c.Client().NameService(ns.Addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := corba.ParseName(name)
	ref, err := nc.Resolve(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	p, names, err := c.FindPort(ctx, ref, port)
	if err != nil {
		t.Fatal(err)
	}
	if p != nil {
		return p
	}
	t.Fatalf("%s has no port %s (its ports: %v)", name, port, names)
	return nil
}

// TestCppPeerInterfaceTypes: seat's ports and the omniORB C++
// component's connect by OpenRTM's other interface type and data flow:
// data_service push (DataPushService), and pull by corba_cdr
// (OutPortCdr::get) and data_service (DataPullService::pull), both ways.
func TestCppPeerInterfaceTypes(t *testing.T) {
	bin := rtcpeer(t)
	ns := omnitest.StartNameServer(t)
	sc := registered(t, ns, "Seat", Options{})
	cpp := omnitest.Start(t, "ready", bin, "serve", "Peer.rtc", "-ORBInitRef", "NameService="+ns.Corbaloc)
	got := 0
	for _, c := range []struct{ iface, flow string }{{"data_service", "push"}, {"corba_cdr", "pull"}, {"data_service", "pull"}} {
		props := []string{"dataport.interface_type=" + c.iface, "dataport.dataflow_type=" + c.flow}
		if out := run(t, ns, append([]string{"con", sc.name + ":out", "Peer.rtc:in"}, props...)...); !strings.HasPrefix(out, "rc: RTC_OK\n") {
			t.Fatalf("%s %s seat:out peer:in:\n%s", c.iface, c.flow, out)
		}
		if cn := sc.out.Conns(); len(cn) != 1 || cn[0].Interface != c.iface || cn[0].Flow != c.flow {
			t.Fatalf("%s %s: seat's connection %+v", c.iface, c.flow, cn)
		}
		text := c.iface + " " + c.flow + " から"
		sc.out.Write(timedStringPayload(0, 0, text))
		got++
		if lines := cpp.WaitLines(t, "got: ", got); lines[got-1] != text {
			t.Errorf("the peer got %q", lines)
		}
		if out := run(t, ns, "dis", sc.name+":out"); out != "rc: RTC_OK\n" {
			t.Errorf("dis: %q", out)
		}

		if out := run(t, ns, append([]string{"con", "Peer.rtc:out", sc.name + ":in"}, props...)...); !strings.HasPrefix(out, "rc: RTC_OK\n") {
			t.Fatalf("%s %s peer:out seat:in:\n%s", c.iface, c.flow, out)
		}
		before := sc.got.count()
		cpp.Send(t, c.iface+" "+c.flow+" へ")
		payloads := sc.got.wait(t, before+1)
		d := corba.NewDecoder(payloads[before], corba.LittleEndian)
		if d.ReadULong(); d.ReadULong() == 0 || d.ReadString("data") != c.iface+" "+c.flow+" へ" {
			t.Errorf("seat got % x", payloads[before])
		}
		if out := run(t, ns, "dis", "Peer.rtc:out"); out != "rc: RTC_OK\n" {
			t.Errorf("dis: %q", out)
		}
	}
}

package corba

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/openrtm/omnitest"
)

// The tests here run real omniORB parts: Debian's omniNames, nameclt and
// catior, and C++ programs built with omniidl and g++ from
// testdata/omni.

// cxx holds the C++ programs, built once per test run.
var cxx struct {
	once           sync.Once
	dir            string
	client, server string
	err            error
}

// cxxPrograms builds testdata/omni's echo_client and echo_server.
func cxxPrograms(t *testing.T) (client, server string) {
	t.Helper()
	omnitest.RequireBuildTools(t)
	cxx.once.Do(func() {
		if cxx.dir, cxx.err = os.MkdirTemp("", "seat-corba-cxx"); cxx.err != nil {
			return
		}
		idl := []string{filepath.Join("testdata", "omni", "echo.idl")}
		if cxx.client, cxx.err = omnitest.Build(cxx.dir, "echo_client", idl, []string{filepath.Join("testdata", "omni", "echo_client.cc")}); cxx.err != nil {
			return
		}
		cxx.server, cxx.err = omnitest.Build(cxx.dir, "echo_server", idl, []string{filepath.Join("testdata", "omni", "echo_server.cc")})
	})
	if cxx.err != nil {
		t.Fatal(cxx.err)
	}
	return cxx.client, cxx.server
}

func removeCxx() {
	if cxx.dir != "" {
		os.RemoveAll(cxx.dir)
	}
}

func mustName(t *testing.T, s string) Name {
	t.Helper()
	n, err := ParseName(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNaming: binds, rebinds, resolves, lists and unbinds in omniNames,
// and checks with omniORB's nameclt and catior that omniORB sees the
// bindings and can read the IOR.
func TestNaming(t *testing.T) {
	ns := omnitest.StartNameServer(t)
	_, ior, _, _ := testServer(t, ServerOptions{})
	c := testClient(t, ClientOptions{})
	ctx := ctxFor(t, 30*time.Second)
	root, err := c.NameService(ns.Corbaloc)
	if err != nil {
		t.Fatal(err)
	}
	hostCxt, err := root.BindNewContext(ctx, mustName(t, "host.host_cxt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := hostCxt.Bind(ctx, mustName(t, "Foo0.rtc"), ior); err != nil {
		t.Fatal(err)
	}
	got, err := root.Resolve(ctx, mustName(t, "host.host_cxt/Foo0.rtc"))
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != ior.String() {
		t.Errorf("resolved\n%v\nwant\n%v", got, ior)
	}
	// The resolved reference works.
	if s, err := say(ctx, c.Object(got), "名前から"); s != "名前から" || err != nil {
		t.Errorf("say through the naming service: %q, %v", s, err)
	}

	// omniORB's tools see the binding and read the IOR.
	if out := ns.Nameclt(t, "list"); !strings.Contains(out, "host.host_cxt/") {
		t.Errorf("nameclt list:\n%s", out)
	}
	if out := ns.Nameclt(t, "list", "host.host_cxt"); !strings.Contains(out, "Foo0.rtc") {
		t.Errorf("nameclt list host.host_cxt:\n%s", out)
	}
	out := ns.Nameclt(t, "resolve", "host.host_cxt/Foo0.rtc")
	if strings.TrimSpace(out) != ior.String() {
		t.Errorf("nameclt resolve:\n%s\nwant %s", out, ior)
	}
	port := strconv.Itoa(int(mustIIOP(t, ior).Port))
	cat := omnitest.Catior(t, ior.String())
	for _, want := range []string{echoID, "IIOP 1.2", "127.0.0.1", port, "TAG_ORB_TYPE omniORB", "ISO-8859-1", "UTF-8", "UTF-16"} {
		if !strings.Contains(cat, want) {
			t.Errorf("catior does not say %q:\n%s", want, cat)
		}
	}

	// AlreadyBound, rebind, a Japanese name.
	var ab *AlreadyBoundError
	if err := hostCxt.Bind(ctx, mustName(t, "Foo0.rtc"), ior); !errors.As(err, &ab) || err.Error() != `naming: "Foo0.rtc" is already bound` {
		t.Errorf("bind twice: %v", err)
	}
	other := ior
	other = &IOR{TypeID: "IDL:SeatTest/Other:1.0", Profiles: ior.Profiles}
	if err := root.Rebind(ctx, mustName(t, "host.host_cxt/Foo0.rtc"), other); err != nil {
		t.Fatal(err)
	}
	if got, err := root.Resolve(ctx, mustName(t, "host.host_cxt/Foo0.rtc")); err != nil || got.TypeID != "IDL:SeatTest/Other:1.0" {
		t.Errorf("after rebind: %v, %v", got, err)
	}
	if err := root.RebindPath(ctx, mustName(t, "host.host_cxt/ロボット0.rtc"), ior); err != nil {
		t.Fatal(err)
	}
	if err := root.RebindPath(ctx, mustName(t, "a.b/c.d/Bar0.rtc"), ior); err != nil {
		t.Fatal(err)
	}
	if out := ns.Nameclt(t, "list", "host.host_cxt"); !strings.Contains(out, "ロボット0.rtc") {
		t.Errorf("nameclt list host.host_cxt:\n%s", out)
	}
	bs, err := hostCxt.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range bs {
		names = append(names, b.Name.String()+" "+b.Type.String())
	}
	if want := "Foo0.rtc object,ロボット0.rtc object"; strings.Join(sorted(names), ",") != want {
		t.Errorf("list: %v, want %s", names, want)
	}
	// A context rebound by hand.
	if err := root.RebindContext(ctx, mustName(t, "alias.host_cxt"), hostCxt.IOR()); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Resolve(ctx, mustName(t, "alias.host_cxt/Foo0.rtc")); err != nil {
		t.Errorf("through the rebound context: %v", err)
	}

	// Unbind, then NotFound.
	if err := root.Unbind(ctx, mustName(t, "host.host_cxt/Foo0.rtc")); err != nil {
		t.Fatal(err)
	}
	_, err = root.Resolve(ctx, mustName(t, "host.host_cxt/Foo0.rtc"))
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Why != MissingNode || nf.Rest.String() != "Foo0.rtc" {
		t.Errorf("resolve after unbind: %v", err)
	}
	if want := `naming: "host.host_cxt/Foo0.rtc" not found: missing node at "Foo0.rtc"`; err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if _, err := root.Resolve(ctx, mustName(t, "host.host_cxt/ロボット0.rtc/x")); !errors.As(err, &nf) || nf.Why != NotContext {
		t.Errorf("resolve through an object: %v", err)
	}
	var in *InvalidNameError
	if _, err := root.Resolve(ctx, Name{}); !errors.As(err, &in) {
		t.Errorf("resolve of an empty name: %v", err)
	}
	if _, err := ParseName("a//b"); !errors.As(err, &in) {
		t.Errorf("ParseName(a//b): %v", err)
	}
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func mustIIOP(t *testing.T, ior *IOR) *IIOPProfile {
	t.Helper()
	p, err := ior.IIOP()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNamingRestart: with omniNames killed, calls fail at once with a
// clear error, or at their deadline; after a restart they work again and
// the bindings are still there (omniNames' data directory).
func TestNamingRestart(t *testing.T) {
	ns := omnitest.StartNameServer(t)
	_, ior, _, _ := testServer(t, ServerOptions{})
	c := testClient(t, ClientOptions{})
	ctx := ctxFor(t, 60*time.Second)
	root, err := c.NameService(ns.Corbaloc)
	if err != nil {
		t.Fatal(err)
	}
	n := mustName(t, "host.host_cxt/Foo0.rtc")
	if err := root.RebindPath(ctx, n, ior); err != nil {
		t.Fatal(err)
	}
	ns.Stop()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	start := time.Now()
	_, err = root.Resolve(short, n)
	cancel()
	var ce *ConnError
	if !errors.As(err, &ce) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("resolve with omniNames down: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call took %v, its deadline was 2 s", d)
	}
	t.Logf("with omniNames down: %v", err)
	ns.Restart()
	var got *IOR
	waitFor(t, func() bool { got, err = root.Resolve(ctx, n); return err == nil })
	if got.String() != ior.String() {
		t.Errorf("after restart, resolved %v", got)
	}
}

// recordingListener records what clients send.
type recordingListener struct {
	net.Listener
	mu  sync.Mutex
	got []*bytes.Buffer
}

func (l *recordingListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	b := &bytes.Buffer{}
	l.mu.Lock()
	l.got = append(l.got, b)
	l.mu.Unlock()
	return &recordingConn{Conn: nc, l: l, b: b}, nil
}

// messages returns the messages each connection brought, in order.
func (l *recordingListener) messages(t *testing.T) [][]*Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	var all [][]*Message
	for _, b := range l.got {
		var ms []*Message
		r := bytes.NewReader(b.Bytes())
		for {
			raw, err := ReadMessage(r, 1<<20)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParseMessage(raw)
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
		all = append(all, ms)
	}
	return all
}

type recordingConn struct {
	net.Conn
	l *recordingListener
	b *bytes.Buffer
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.l.mu.Lock()
	c.b.Write(p[:n])
	c.l.mu.Unlock()
	return n, err
}

// TestCxxClient: an omniORB C++ client resolves the Go server's object in
// omniNames and calls every operation, with Japanese text; the server
// answers its LocateRequest and reads its CodeSets context.
func TestCxxClient(t *testing.T) {
	client, _ := cxxPrograms(t)
	ns := omnitest.StartNameServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingListener{Listener: ln}
	s, ior, _, logs := testServer(t, ServerOptions{Listener: rec})
	c := testClient(t, ClientOptions{})
	ctx := ctxFor(t, 30*time.Second)
	root, err := c.NameService(ns.Corbaloc)
	if err != nil {
		t.Fatal(err)
	}
	if err := root.RebindPath(ctx, mustName(t, "host.host_cxt/Echo0.rtc"), ior); err != nil {
		t.Fatal(err)
	}
	gone := s.IOR([]byte("nobody"), echoID)
	want := strings.Join([]string{
		"say: utf-8: こんにちは、世界",
		"non_existent: false",
		"is_a Echo: true",
		"is_a other: false",
		"scale: 3 -4 2e+300",
		"fail: Oops utf-8: こんにちは、世界 42",
		"count: 2",
		"gone: OBJECT_NOT_EXIST",
		"done",
	}, "\n") + "\n"
	// The same again from an IOR, to a servant of its own (count).
	ior2, err := s.Register([]byte("echo2"), &echoServant{})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"host.host_cxt/Echo0.rtc", ior2.String()} {
		out, err := ns.Run(t, client, target, "utf-8: こんにちは、世界", gone.String())
		if err != nil || out != want {
			t.Errorf("echo_client %.30s: %v\n%s\nwant\n%s", target, err, out, want)
		}
	}
	// What omniORB sent: a LocateRequest before its first call on the
	// object, and the CodeSets context on the connection's first request.
	conns := rec.messages(t)
	if len(conns) == 0 {
		t.Fatal("no connection recorded")
	}
	for i, ms := range conns {
		if len(ms) == 0 {
			continue
		}
		var first *Request
		located := false
		var kinds []string
		for _, m := range ms {
			kind := m.Type.String()
			if m.Request != nil {
				kind += " " + m.Request.Operation
			}
			kinds = append(kinds, kind)
		}
		t.Logf("connection %d from omniORB: %s", i, strings.Join(kinds, ", "))
		for _, m := range ms {
			if m.LocateRequest != nil {
				located = true
			}
			if m.Request != nil && first == nil {
				first = m.Request
			}
			if m.Request != nil && m.Request.Operation == "say" && !located {
				t.Errorf("connection %d: no LocateRequest before say", i)
			}
		}
		if first == nil {
			t.Fatalf("connection %d: no request", i)
		}
		if len(first.ServiceContexts) != 1 {
			t.Fatalf("connection %d: first request's contexts %+v", i, first.ServiceContexts)
		}
		cs, err := first.ServiceContexts[0].CodeSets()
		if err != nil || cs != omniCodeSets {
			t.Errorf("connection %d: CodeSets %+v, %v", i, cs, err)
		}
	}
	if logs.Len() != 0 {
		t.Errorf("the server logged: %+v", logs.All())
	}
}

// TestCxxServer: this package's client calls an omniORB C++ server of the
// same interface, found in omniNames.
func TestCxxServer(t *testing.T) {
	_, server := cxxPrograms(t)
	ns := omnitest.StartNameServer(t)
	c := testClient(t, ClientOptions{})
	ctx := ctxFor(t, 30*time.Second)
	root, err := c.NameService(ns.Corbaloc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := root.BindNewContext(ctx, mustName(t, "host.host_cxt")); err != nil {
		t.Fatal(err)
	}
	p := omnitest.Start(t, "ready", server, "host.host_cxt/EchoCxx0.rtc",
		"-ORBInitRef", "NameService="+ns.Corbaloc, "-ORBendPoint", "giop:tcp:127.0.0.1:")
	printed, _ := p.Line("ior: ")
	ior, err := root.Resolve(ctx, mustName(t, "host.host_cxt/EchoCxx0.rtc"))
	if err != nil {
		t.Fatal(err)
	}
	if ior.String() != printed {
		t.Errorf("resolved %v, the server printed %s", ior, printed)
	}
	o := c.Object(ior)
	if st, err := o.Locate(ctx); st != LocateObjectHere || err != nil {
		t.Errorf("locate: %v, %v", st, err)
	}
	if ok, err := o.IsA(ctx, echoID); !ok || err != nil {
		t.Errorf("_is_a: %v, %v", ok, err)
	}
	if gone, err := o.NonExistent(ctx); gone || err != nil {
		t.Errorf("_non_existent: %v, %v", gone, err)
	}
	for _, text := range []string{"hello", "utf-8: こんにちは", ""} {
		if got, err := say(ctx, o, text); got != text || err != nil {
			t.Errorf("say(%q) = %q, %v", text, got, err)
		}
	}
	if v, err := scale(ctx, o, []float64{1.5, -2, 1e300}, 2); err != nil || len(v) != 3 || v[0] != 3 || v[1] != -4 || v[2] != 2e300 {
		t.Errorf("scale: %v, %v", v, err)
	}
	if got := oops(t, o.Invoke(ctx, "fail", func(e *Encoder) error { e.WriteString("ロボット"); return nil }, nil)); got != "ロボット 42" {
		t.Errorf("fail: %q", got)
	}
	for range 2 {
		if err := o.Oneway(ctx, "note", func(e *Encoder) error { e.WriteString("x"); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { n, _ := count(ctx, o); return n == 2 })
	var sx *SystemException
	if err := o.Invoke(ctx, "nope", nil, nil); !errors.As(err, &sx) || sx.Name() != "BAD_OPERATION" {
		t.Errorf("unknown operation: %v", err)
	}
	// omniORB's answer to an unknown key.
	pp := mustIIOP(t, ior)
	pp.ObjectKey = []byte("nobody")
	unknown := c.Object(&IOR{TypeID: echoID, Profiles: []TaggedProfile{pp.Profile(LittleEndian)}})
	if err := unknown.Invoke(ctx, "count", nil, nil); !errors.As(err, &sx) || sx.Name() != "OBJECT_NOT_EXIST" {
		t.Errorf("unknown key: %v", err)
	}
	// Big endian from this side.
	be := testClient(t, ClientOptions{Order: BigEndian, OrderSet: true})
	if got, err := say(ctx, be.Object(ior), "ビッグエンディアン"); got != "ビッグエンディアン" || err != nil {
		t.Errorf("say in big endian: %q, %v", got, err)
	}
}

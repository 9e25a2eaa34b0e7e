package corba

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// echoID is the repository id of testdata/omni/echo.idl's interface.
const echoID = "IDL:SeatTest/Echo:1.0"

// echoServant implements testdata/omni/echo.idl's SeatTest::Echo in Go,
// with one more operation, block, that waits for its context's end.
type echoServant struct {
	notes   atomic.Int32
	blocked chan struct{} // receives when block starts, if set
}

func (*echoServant) RepositoryIDs() []string { return []string{echoID} }

func (s *echoServant) Invoke(ctx context.Context, op string, args *Decoder, res *Encoder) error {
	switch op {
	case "say":
		res.WriteString(args.ReadString("s"))
	case "scale":
		n := args.ReadLength("v", 8)
		v := make([]float64, n)
		for i := range v {
			v[i] = args.ReadDouble()
		}
		k := args.ReadDouble()
		res.WriteULong(uint32(n))
		for _, x := range v {
			res.WriteDouble(x * k)
		}
	case "fail":
		why := args.ReadString("why")
		return &UserException{ID: "IDL:SeatTest/Oops:1.0", Members: func(e *Encoder) error {
			e.WriteString(why)
			e.WriteLong(42)
			return nil
		}}
	case "note":
		args.ReadString("s")
		s.notes.Add(1)
	case "count":
		res.WriteLong(s.notes.Load())
	case "block":
		if s.blocked != nil {
			s.blocked <- struct{}{}
		}
		<-ctx.Done()
		return ctx.Err()
	default:
		return BadOperation()
	}
	return nil
}

// The Go side of echo.idl's operations.

func say(ctx context.Context, o *Object, s string) (string, error) {
	var r string
	err := o.Invoke(ctx, "say", func(e *Encoder) error { e.WriteString(s); return nil },
		func(d *Decoder) error { r = d.ReadString("result"); return nil })
	return r, err
}

func scale(ctx context.Context, o *Object, v []float64, k float64) ([]float64, error) {
	var r []float64
	err := o.Invoke(ctx, "scale", func(e *Encoder) error {
		e.WriteULong(uint32(len(v)))
		for _, x := range v {
			e.WriteDouble(x)
		}
		e.WriteDouble(k)
		return nil
	}, func(d *Decoder) error {
		r = make([]float64, d.ReadLength("result", 8))
		for i := range r {
			r[i] = d.ReadDouble()
		}
		return nil
	})
	return r, err
}

func count(ctx context.Context, o *Object) (int32, error) {
	var n int32
	err := o.Invoke(ctx, "count", nil, func(d *Decoder) error { n = d.ReadLong(); return nil })
	return n, err
}

// oops reads SeatTest::Oops from a user exception.
func oops(t *testing.T, err error) string {
	t.Helper()
	var ux *UserExceptionError
	if !errors.As(err, &ux) || ux.ID != "IDL:SeatTest/Oops:1.0" {
		t.Fatalf("want the user exception Oops, got %v", err)
	}
	why, code := ux.Members.ReadString("why"), ux.Members.ReadLong()
	if ux.Members.Err() != nil {
		t.Fatal(ux.Members.Err())
	}
	return fmt.Sprintf("%s %d", why, code)
}

// testServer starts a Server with an echoServant under key "echo",
// closed when the test ends; its log goes to the observer returned.
func testServer(t *testing.T, opts ServerOptions) (*Server, *IOR, *echoServant, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	if opts.Logger == nil {
		opts.Logger = zap.New(core)
	}
	s, err := Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("server close: %v", err)
		}
	})
	sv := &echoServant{}
	ior, err := s.Register([]byte("echo"), sv)
	if err != nil {
		t.Fatal(err)
	}
	return s, ior, sv, logs
}

func testClient(t *testing.T, opts ClientOptions) *Client {
	c := NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestGoClientGoServer: every kind of call and reply between this
// package's client and server, in both byte orders and GIOP versions.
func TestGoClientGoServer(t *testing.T) {
	s, ior, _, _ := testServer(t, ServerOptions{})
	for _, tc := range []struct {
		order   ByteOrder
		version Version
	}{{LittleEndian, GIOP12}, {BigEndian, GIOP12}, {LittleEndian, GIOP11}, {BigEndian, GIOP10}} {
		t.Run(fmt.Sprintf("%v/GIOP%v", tc.order, tc.version), func(t *testing.T) {
			ctx := ctxFor(t, 10*time.Second)
			c := testClient(t, ClientOptions{Order: tc.order, OrderSet: true})
			p, _ := ior.IIOP()
			p.Version = tc.version
			o := c.Object(&IOR{TypeID: echoID, Profiles: []TaggedProfile{p.Profile(tc.order)}})
			for _, text := range []string{"hello", "utf-8: こんにちは", ""} {
				got, err := say(ctx, o, text)
				if err != nil || got != text {
					t.Errorf("say(%q) = %q, %v", text, got, err)
				}
			}
			v, err := scale(ctx, o, []float64{1.5, -2, 1e300}, 2)
			if diff := cmp.Diff([]float64{3, -4, 2e300}, v); err != nil || diff != "" {
				t.Errorf("scale: %v %s", err, diff)
			}
			if got := oops(t, o.Invoke(ctx, "fail", func(e *Encoder) error { e.WriteString("ロボット"); return nil }, nil)); got != "ロボット 42" {
				t.Errorf("fail: Oops %q", got)
			}
			n0, _ := count(ctx, o)
			for range 2 {
				if err := o.Oneway(ctx, "note", func(e *Encoder) error { e.WriteString("x"); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, func() bool { n, _ := count(ctx, o); return n == n0+2 })
			if ok, err := o.IsA(ctx, echoID); !ok || err != nil {
				t.Errorf("_is_a(%s) = %v, %v", echoID, ok, err)
			}
			if ok, err := o.IsA(ctx, "IDL:SeatTest/Other:1.0"); ok || err != nil {
				t.Errorf("_is_a(Other) = %v, %v", ok, err)
			}
			if gone, err := o.NonExistent(ctx); gone || err != nil {
				t.Errorf("_non_existent = %v, %v", gone, err)
			}
			if st, err := o.Locate(ctx); st != LocateObjectHere || err != nil {
				t.Errorf("locate = %v, %v", st, err)
			}
			var sx *SystemException
			err = o.Invoke(ctx, "nope", nil, nil)
			if !errors.As(err, &sx) || sx.Name() != "BAD_OPERATION" || sx.Completed != CompletedNo {
				t.Errorf("unknown operation: %v", err)
			}
			p.ObjectKey = []byte("nobody")
			gone := c.Object(&IOR{TypeID: echoID, Profiles: []TaggedProfile{p.Profile(tc.order)}})
			err = gone.Invoke(ctx, "say", nil, nil)
			if !errors.As(err, &sx) || sx.Name() != "OBJECT_NOT_EXIST" {
				t.Errorf("unknown key: %v", err)
			}
			if !strings.Contains(err.Error(), "OBJECT_NOT_EXIST") || !strings.Contains(err.Error(), "COMPLETED_NO") {
				t.Errorf("the error does not name the exception and its completion: %v", err)
			}
			if st, err := gone.Locate(ctx); st != LocateUnknownObject || err != nil {
				t.Errorf("locate unknown = %v, %v", st, err)
			}
		})
	}
	_ = s
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestConcurrentCalls: many goroutines share one connection; every reply
// reaches its caller.
func TestConcurrentCalls(t *testing.T) {
	_, ior, _, _ := testServer(t, ServerOptions{MaxConcurrent: 4})
	c := testClient(t, ClientOptions{})
	o := c.Object(ior)
	ctx := ctxFor(t, 30*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				text := fmt.Sprintf("呼び出し %d/%d", g, i)
				got, err := say(ctx, o, text)
				if err == nil && got != text {
					err = fmt.Errorf("say(%q) = %q", text, got)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c.mu.Lock()
	n := len(c.conns)
	c.mu.Unlock()
	if n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// TestUnregister: an object unregistered is gone: a call gets
// OBJECT_NOT_EXIST and a LocateRequest UNKNOWN_OBJECT, while the server
// serves on.
func TestUnregister(t *testing.T) {
	s, ior, _, _ := testServer(t, ServerOptions{})
	o := testClient(t, ClientOptions{}).Object(ior)
	ctx := ctxFor(t, 10*time.Second)
	if got, err := say(ctx, o, "まだいる"); err != nil || got != "まだいる" {
		t.Fatalf("before: %q, %v", got, err)
	}
	s.Unregister([]byte("echo"))
	var se *SystemException
	if _, err := say(ctx, o, "もういない"); !errors.As(err, &se) || se.Name() != "OBJECT_NOT_EXIST" {
		t.Errorf("after: %v, want OBJECT_NOT_EXIST", err)
	}
	if st, err := o.Locate(ctx); err != nil || st != LocateUnknownObject {
		t.Errorf("located after: %v, %v; want UNKNOWN_OBJECT", st, err)
	}
}

// TestForward: a LOCATION_FORWARD reply is followed, and a loop of
// forwards ends with an error.
func TestForward(t *testing.T) {
	s, ior, _, _ := testServer(t, ServerOptions{})
	fwd, err := s.Register([]byte("fwd"), forwarder{ior})
	if err != nil {
		t.Fatal(err)
	}
	loop := s.IOR([]byte("loop"), echoID)
	if _, err := s.Register([]byte("loop"), forwarder{loop}); err != nil {
		t.Fatal(err)
	}
	c := testClient(t, ClientOptions{})
	ctx := ctxFor(t, 10*time.Second)
	if got, err := say(ctx, c.Object(fwd), "転送"); got != "転送" || err != nil {
		t.Errorf("say through a forward = %q, %v", got, err)
	}
	_, err = say(ctx, c.Object(loop), "x")
	if err == nil || !strings.Contains(err.Error(), "more than 8 location forwards") {
		t.Errorf("a forward loop: %v", err)
	}
}

type forwarder struct{ to *IOR }

func (forwarder) RepositoryIDs() []string { return []string{echoID} }
func (f forwarder) Invoke(context.Context, string, *Decoder, *Encoder) error {
	return &ForwardError{IOR: f.to}
}

// TestBigEndianRequests: requests made by hand in big endian, GIOP 1.0
// to 1.2, are answered in big endian with the right results.
func TestBigEndianRequests(t *testing.T) {
	s, _, _, _ := testServer(t, ServerOptions{})
	for _, v := range []Version{GIOP10, GIOP11, GIOP12} {
		t.Run("GIOP"+v.String(), func(t *testing.T) {
			nc := dial(t, s.Addr().String())
			e, err := EncodeRequest(v, BigEndian, &Request{RequestID: 7, ResponseFlags: 3, ObjectKey: []byte("echo"), Operation: "scale",
				ServiceContexts: []ServiceContext{omniCodeSets.ServiceContext(BigEndian)}})
			if err != nil {
				t.Fatal(err)
			}
			e.WriteULong(2)
			e.WriteDouble(1.25)
			e.WriteDouble(-3)
			e.WriteDouble(4)
			write(t, nc, e.Bytes())
			m := readMsg(t, nc)
			if m.Reply == nil || m.Reply.RequestID != 7 || m.Reply.Status != ReplyNoException || m.Order != BigEndian || m.Version != v {
				t.Fatalf("reply %+v %+v", m.Header, m.Reply)
			}
			d := m.Body()
			got := []float64{}
			for n := d.ReadLength("r", 8); n > 0; n-- {
				got = append(got, d.ReadDouble())
			}
			if diff := cmp.Diff([]float64{5, -12}, got); diff != "" || d.Err() != nil {
				t.Errorf("results %v: %s", d.Err(), diff)
			}
			b, _ := EncodeLocateRequest(v, BigEndian, &LocateRequest{RequestID: 8, ObjectKey: []byte("echo")})
			write(t, nc, b)
			if m := readMsg(t, nc); m.LocateReply == nil || m.LocateReply.Status != LocateObjectHere || m.Order != BigEndian {
				t.Errorf("locate reply %+v %+v", m.Header, m.LocateReply)
			}
		})
	}
}

// TestFragmentedRequest: a GIOP 1.2 request in three fragments is
// reassembled and answered.
func TestFragmentedRequest(t *testing.T) {
	s, _, _, _ := testServer(t, ServerOptions{})
	nc := dial(t, s.Addr().String())
	text := strings.Repeat("断片", 100)
	e, _ := EncodeRequest(GIOP12, LittleEndian, &Request{RequestID: 3, ResponseFlags: 3, ObjectKey: []byte("echo"), Operation: "say"})
	e.WriteString(text)
	whole := e.Bytes()
	// Fragments after the first carry the request id, then their part;
	// cut the body at multiples of 8 so that alignment holds.
	first := append([]byte(nil), whole[:64]...)
	first[6] |= flagMoreFragments
	binaryLE(first[8:12], uint32(len(first)-HeaderSize))
	write(t, nc, first)
	rest := whole[64:]
	for len(rest) > 0 {
		n := min(len(rest), 200)
		f := NewMessage(GIOP12, LittleEndian, MsgFragment)
		f.WriteULong(3)
		f.WriteBytes(rest[:n])
		b := f.Bytes()
		if n < len(rest) {
			b[6] |= flagMoreFragments
		}
		write(t, nc, b)
		rest = rest[n:]
	}
	m := readMsg(t, nc)
	if m.Reply == nil || m.Reply.Status != ReplyNoException {
		t.Fatalf("reply %+v", m.Reply)
	}
	if got := m.Body().ReadString("r"); got != text {
		t.Errorf("say = %q", got)
	}
}

func binaryLE(b []byte, v uint32) { LittleEndian.binary().PutUint32(b, v) }

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	return nc
}

func write(t *testing.T, nc net.Conn, b []byte) {
	t.Helper()
	if _, err := nc.Write(b); err != nil {
		t.Fatal(err)
	}
}

func readMsg(t *testing.T, nc net.Conn) *Message {
	t.Helper()
	b, err := ReadMessage(nc, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSilentPeer: a peer that accepts and never answers makes calls fail
// at their deadline, while calls to a good server on the same client go
// on; closing the client fails a call waiting without a deadline.
func TestSilentPeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held sync.WaitGroup
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			held.Add(1)
			go func() { defer held.Done(); _, _ = io.Copy(io.Discard, nc); nc.Close() }()
		}
	}()
	_, good, _, _ := testServer(t, ServerOptions{})
	c := NewClient(ClientOptions{})
	silent, err := c.StringToObject("corbaloc:iiop:1.2@" + ln.Addr().String() + "/echo")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := say(ctx, silent, "もしもし")
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a silent peer: %v", err)
			}
			if d := time.Since(start); d < 250*time.Millisecond || d > 3*time.Second {
				t.Errorf("the call ended after %v, its deadline was 300 ms", d)
			}
		}()
	}
	// Meanwhile the good server answers at once.
	ctx := ctxFor(t, 5*time.Second)
	for range 10 {
		if _, err := say(ctx, c.Object(good), "hi"); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	// A call without a deadline ends when the client is closed.
	done := make(chan error, 1)
	go func() { _, err := say(context.Background(), silent, "x"); done <- err }()
	waitFor(t, func() bool { // until it is sent and waits
		c.mu.Lock()
		defer c.mu.Unlock()
		cc := c.conns[ln.Addr().String()]
		if cc == nil {
			return false
		}
		cc.mu.Lock()
		defer cc.mu.Unlock()
		return len(cc.pending) == 1
	})
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClientClosed) {
			t.Errorf("after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a waiting call")
	}
	if _, err := say(ctx, c.Object(good), "x"); !errors.Is(err, ErrClientClosed) {
		t.Errorf("a call on a closed client: %v", err)
	}
	ln.Close()
	held.Wait()
}

// rawServer accepts connections and hands each to serve.
func rawServer(t *testing.T, serve func(n int, nc net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); defer nc.Close(); serve(n, nc) }()
		}
	}()
	return ln.Addr().String()
}

// TestServerGoesAway: a server that closes the connection mid-call fails
// the call at once (not retryable: it may have run); one that sends
// CloseConnection fails it as retryable, and the next call dials again.
func TestServerGoesAway(t *testing.T) {
	ctx := ctxFor(t, 10*time.Second)
	t.Run("close", func(t *testing.T) {
		addr := rawServer(t, func(_ int, nc net.Conn) { _, _ = ReadMessage(nc, 1<<20) })
		c := testClient(t, ClientOptions{})
		o, _ := c.StringToObject("corbaloc:iiop:1.2@" + addr + "/echo")
		start := time.Now()
		_, err := say(ctx, o, "x")
		var ce *ConnError
		if !errors.As(err, &ce) || IsRetryable(err) || time.Since(start) > 5*time.Second {
			t.Errorf("mid-call close: %v after %v", err, time.Since(start))
		}
	})
	t.Run("CloseConnection", func(t *testing.T) {
		addr := rawServer(t, func(n int, nc net.Conn) {
			b, err := ReadMessage(nc, 1<<20)
			if err != nil {
				return
			}
			m, err := ParseMessage(b)
			if err != nil || m.Request == nil {
				return
			}
			if n == 0 {
				cc, _ := EncodeCloseConnection(GIOP12, LittleEndian)
				_, _ = nc.Write(cc)
				return
			}
			e, _ := EncodeReply(GIOP12, LittleEndian, &Reply{RequestID: m.Request.RequestID})
			e.WriteString("again")
			_, _ = nc.Write(e.Bytes())
			_, _ = io.Copy(io.Discard, nc)
		})
		c := testClient(t, ClientOptions{})
		o, _ := c.StringToObject("corbaloc:iiop:1.2@" + addr + "/echo")
		_, err := say(ctx, o, "x")
		if !IsRetryable(err) || !errors.Is(err, ErrCloseConnection) {
			t.Fatalf("after CloseConnection: %v", err)
		}
		if got, err := say(ctx, o, "x"); got != "again" || err != nil {
			t.Errorf("the call after = %q, %v", got, err)
		}
	})
}

// TestMalformed: bytes that are not GIOP, a huge size, a broken request
// header: each is answered with MessageError and its connection closed,
// with one log line naming the client, while a good client is served all
// along.
func TestMalformed(t *testing.T) {
	s, ior, _, logs := testServer(t, ServerOptions{MaxMessageSize: 1 << 16})
	c := testClient(t, ClientOptions{})
	stop := make(chan struct{})
	var good sync.WaitGroup
	good.Add(1)
	go func() {
		defer good.Done()
		o := c.Object(ior)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			got, err := say(ctx, o, "まだ")
			cancel()
			if err != nil || got != "まだ" {
				t.Errorf("the good client: %q, %v", got, err)
				return
			}
		}
	}()
	badHeader := func() []byte {
		e, _ := EncodeRequest(GIOP12, LittleEndian, &Request{RequestID: 1, ResponseFlags: 3, ObjectKey: []byte("echo"), Operation: "say"})
		b := e.Bytes()
		b[len(b)-5] = 'X' // the operation's NUL (before the 4-byte empty context list)
		return b
	}()
	huge := []byte("GIOP\x01\x02\x01\x00\x00\x00\x00\x40")
	for _, tc := range []struct {
		name string
		send []byte
		want string
	}{
		{"text", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), `magic`},
		{"huge", huge, `exceeds the limit`},
		{"header", badHeader, `operation`},
		{"reply from a client", func() []byte {
			e, _ := EncodeReply(GIOP12, LittleEndian, &Reply{RequestID: 1})
			return e.Bytes()
		}(), `a client sent a Reply`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := dial(t, s.Addr().String())
			write(t, nc, tc.send)
			b, err := io.ReadAll(nc)
			if err != nil {
				t.Fatal(err)
			}
			h, err := ParseHeader(b)
			if err != nil || h.Type != MsgMessageError || len(b) != HeaderSize {
				t.Errorf("answer % x (%v), want a MessageError and the end", b, err)
			}
			local := nc.LocalAddr().String()
			waitFor(t, func() bool { return logs.FilterField(zap.String("client", local)).Len() > 0 })
			lines := logs.FilterField(zap.String("client", local)).All()
			if len(lines) != 1 || !strings.Contains(fmt.Sprint(lines[0].ContextMap()["error"]), tc.want) {
				t.Errorf("log lines for %s: %+v, want one with %q", local, lines, tc.want)
			}
		})
	}
	close(stop)
	good.Wait()
}

// TestMessageSize: a client refuses to send a message over its limit; a
// server answers one over its limit with MessageError, and the client
// says so.
func TestMessageSize(t *testing.T) {
	_, ior, _, _ := testServer(t, ServerOptions{MaxMessageSize: 4096})
	ctx := ctxFor(t, 10*time.Second)
	big := strings.Repeat("大", 2000)
	small := testClient(t, ClientOptions{MaxMessageSize: 1024})
	if _, err := say(ctx, small.Object(ior), big); err == nil || !strings.Contains(err.Error(), "exceeds the limit of 1024") {
		t.Errorf("client limit: %v", err)
	}
	c := testClient(t, ClientOptions{})
	if _, err := say(ctx, c.Object(ior), big); err == nil || !strings.Contains(err.Error(), "MessageError") {
		t.Errorf("server limit: %v", err)
	}
	if got, err := say(ctx, c.Object(ior), "小"); got != "小" || err != nil {
		t.Errorf("after: %q, %v", got, err)
	}
}

// TestServerClose: Close sends CloseConnection to an idle client (its
// next call fails as retryable or cannot connect), waits for a request in
// progress, and gives up at its deadline by cancelling it.
func TestServerClose(t *testing.T) {
	s, err := Listen(ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sv := &echoServant{blocked: make(chan struct{}, 1)}
	ior, _ := s.Register([]byte("echo"), sv)
	idle := testClient(t, ClientOptions{})
	busy := testClient(t, ClientOptions{})
	ctx := ctxFor(t, 10*time.Second)
	if _, err := say(ctx, idle.Object(ior), "x"); err != nil {
		t.Fatal(err)
	}
	blockErr := make(chan error, 1)
	go func() { blockErr <- busy.Object(ior).Invoke(ctx, "block", nil, nil) }()
	<-sv.blocked
	cctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := s.Close(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close with a request in progress: %v", err)
	}
	// The idle client got CloseConnection: its connection is gone.
	waitFor(t, func() bool { idle.mu.Lock(); defer idle.mu.Unlock(); return len(idle.conns) == 0 })
	if _, err := say(ctx, idle.Object(ior), "x"); !IsRetryable(err) {
		t.Errorf("a call after Close: %v", err)
	}
	select {
	case err := <-blockErr:
		if err == nil {
			t.Error("the blocked call succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the blocked call did not end")
	}
	// A server with nothing in progress closes at once.
	s2, ior2, _, _ := testServer(t, ServerOptions{})
	if _, err := say(ctx, idle.Object(ior2), "x"); err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// FuzzServer sends arbitrary bytes to a server, then ends the
// connection: the server never panics, always ends the connection, and
// still serves another client.
func FuzzServer(f *testing.F) {
	for _, v := range seedVectors() {
		f.Add(v.Bytes)
	}
	for _, m := range handMadeMessages(f) {
		f.Add(m)
	}
	e, _ := EncodeRequest(GIOP12, BigEndian, &Request{RequestID: 1, ResponseFlags: 3, ObjectKey: []byte("echo"), Operation: "say"})
	e.WriteString("こんにちは")
	f.Add(e.Bytes())
	s, err := Listen(ServerOptions{MaxMessageSize: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close(context.Background())
	ior, _ := s.Register([]byte("echo"), &echoServant{})
	c := NewClient(ClientOptions{})
	defer c.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		nc, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = nc.Write(data)
		_ = nc.(*net.TCPConn).CloseWrite()
		// The server ends it with a FIN, or a reset when it closes
		// with bytes unread (after CloseConnection, say).
		if _, err := io.Copy(io.Discard, nc); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("the server did not end the connection: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if got, err := say(ctx, c.Object(ior), "x"); got != "x" || err != nil {
			t.Fatalf("after: %q, %v", got, err)
		}
	})
}

// TestFragmentedReply: the client reassembles a GIOP 1.2 reply that
// comes in fragments, and refuses one over its message size.
func TestFragmentedReply(t *testing.T) {
	text := strings.Repeat("返事", 500)
	addr := rawServer(t, func(_ int, nc net.Conn) {
		for {
			b, err := ReadMessage(nc, 1<<20)
			if err != nil {
				return
			}
			m, err := ParseMessage(b)
			if err != nil || m.Request == nil {
				return
			}
			e, _ := EncodeReply(GIOP12, LittleEndian, &Reply{RequestID: m.Request.RequestID})
			e.WriteString(text)
			whole := e.Bytes()
			first := append([]byte(nil), whole[:32]...)
			first[6] |= flagMoreFragments
			binaryLE(first[8:12], uint32(len(first)-HeaderSize))
			_, _ = nc.Write(first)
			for rest := whole[32:]; len(rest) > 0; {
				n := min(len(rest), 256)
				f := NewMessage(GIOP12, LittleEndian, MsgFragment)
				f.WriteULong(m.Request.RequestID)
				f.WriteBytes(rest[:n])
				fb := f.Bytes()
				if n < len(rest) {
					fb[6] |= flagMoreFragments
				}
				_, _ = nc.Write(fb)
				rest = rest[n:]
			}
		}
	})
	ctx := ctxFor(t, 10*time.Second)
	c := testClient(t, ClientOptions{})
	o, _ := c.StringToObject("corbaloc:iiop:1.2@" + addr + "/echo")
	for range 3 {
		if got, err := say(ctx, o, "x"); got != text || err != nil {
			t.Fatalf("say = %.20q…, %v", got, err)
		}
	}
	small := testClient(t, ClientOptions{MaxMessageSize: 1024})
	o, _ = small.StringToObject("corbaloc:iiop:1.2@" + addr + "/echo")
	if _, err := say(ctx, o, "x"); err == nil || !strings.Contains(err.Error(), "exceed the limit of 1024") {
		t.Errorf("a reply over the limit: %v", err)
	}
}

// TestStartCall: a started call's reply comes to its function once, with
// the results or the exception; with try it does not dial nor wait for
// another writer; a call that gets no reply ends at its timeout, and a
// connection lost ends the calls waiting on it.
func TestStartCall(t *testing.T) {
	_, ior, sv, _ := testServer(t, ServerOptions{})
	c := NewClient(ClientOptions{})
	t.Cleanup(func() { c.Close() })
	o := c.Object(ior)
	type outcome struct {
		s   string
		err error
	}
	got := make(chan outcome, 4)
	sayArgs := func(s string) Args { return func(e *Encoder) error { e.WriteString(s); return nil } }
	onReply := func(d *Decoder, err error) {
		if err != nil {
			got <- outcome{err: err}
			return
		}
		got <- outcome{s: d.ReadString("result")}
	}
	if err := o.StartCall("say", sayArgs("x"), time.Second, true, onReply); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("try before any connection: %v", err)
	}
	if err := o.StartCall("say", sayArgs("こんにちは"), 5*time.Second, false, onReply); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || r.s != "こんにちは" {
		t.Fatalf("say: %+v", r)
	}
	if err := o.StartCall("say", sayArgs("again"), 5*time.Second, true, onReply); err != nil {
		t.Fatalf("try on the connection made: %v", err)
	}
	if r := <-got; r.s != "again" {
		t.Fatalf("say: %+v", r)
	}
	if err := o.StartCall("fail", sayArgs("why"), 5*time.Second, true, onReply); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err == nil || oops(t, r.err) != "why 42" {
		t.Fatalf("fail: %+v", r)
	}
	sv.blocked = make(chan struct{}, 1)
	start := time.Now()
	if err := o.StartCall("block", nil, 200*time.Millisecond, true, onReply); err != nil {
		t.Fatal(err)
	}
	if r := <-got; !errors.Is(r.err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("block: %+v after %v", r, time.Since(start))
	}
	if err := o.StartCall("block", nil, time.Minute, true, onReply); err != nil {
		t.Fatal(err)
	}
	<-sv.blocked
	<-sv.blocked
	c.Close()
	if r := <-got; r.err == nil {
		t.Fatalf("a call on a closed client: %+v", r)
	}
	select {
	case r := <-got:
		t.Fatalf("a second outcome: %+v", r)
	case <-time.After(100 * time.Millisecond):
	}
}

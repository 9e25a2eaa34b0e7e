package corba

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxMessageSize bounds the GIOP messages (after reassembly) that
// a Client or a Server reads or writes, unless their options say
// otherwise.
const DefaultMaxMessageSize = 64 << 20

// DefaultMaxForwards bounds the LOCATION_FORWARD replies one call
// follows.
const DefaultMaxForwards = 8

// ClientOptions configure a Client. The zero value is usable.
type ClientOptions struct {
	// Order is the byte order of the requests (LittleEndian by default,
	// as omniORB on x86 writes).
	Order ByteOrder
	// OrderSet makes Order count even when it is BigEndian, the zero
	// value.
	OrderSet bool
	// MaxMessageSize bounds the messages sent and received
	// (DefaultMaxMessageSize when 0).
	MaxMessageSize int
	// MaxForwards bounds the forwards one call follows
	// (DefaultMaxForwards when 0).
	MaxForwards int
	// Dialer dials the connections (a net.Dialer when nil).
	Dialer interface {
		DialContext(ctx context.Context, network, addr string) (net.Conn, error)
	}
}

// Client is the invoking side of an ORB: it sends requests to objects
// over IIOP, with one TCP connection per endpoint shared by concurrent
// calls. Every call takes a context whose deadline bounds it. A Client
// is safe for concurrent use.
type Client struct {
	opts   ClientOptions
	mu     sync.Mutex
	conns  map[string]*clientConn // by "host:port"
	closed bool
}

// ErrClientClosed is returned by calls on a closed Client, and by the
// calls that were waiting when it was closed.
var ErrClientClosed = errors.New("corba: client closed")

// NewClient returns a Client.
func NewClient(opts ClientOptions) *Client {
	if !opts.OrderSet {
		opts.Order = LittleEndian
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if opts.MaxForwards <= 0 {
		opts.MaxForwards = DefaultMaxForwards
	}
	if opts.Dialer == nil {
		opts.Dialer = &net.Dialer{KeepAlive: 30 * time.Second}
	}
	return &Client{opts: opts, conns: make(map[string]*clientConn)}
}

// Close closes every connection; the calls waiting on them fail with
// ErrClientClosed, and later calls too.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	conns := c.conns
	c.conns = map[string]*clientConn{}
	c.mu.Unlock()
	for _, cc := range conns {
		cc.fail(ErrClientClosed, true)
	}
	return nil
}

// Object returns a reference to the object ior names, bound to c.
func (c *Client) Object(ior *IOR) *Object { return &Object{c: c, ior: ior} }

// StringToObject returns a reference from a stringified IOR ("IOR:...")
// or a corbaloc URL ("corbaloc::host:port/key"), as
// CORBA::ORB::string_to_object does.
func (c *Client) StringToObject(s string) (*Object, error) {
	ior, err := StringToIOR(s)
	if err != nil {
		return nil, err
	}
	return c.Object(ior), nil
}

// StringToIOR parses a stringified IOR or a corbaloc URL. A corbaloc URL
// becomes an IOR without a type id, with one IIOP profile per address.
func StringToIOR(s string) (*IOR, error) {
	if len(s) >= 9 && strings.EqualFold(s[:9], "corbaloc:") {
		loc, err := ParseCorbaloc(s)
		if err != nil {
			return nil, err
		}
		ior := &IOR{}
		for _, a := range loc.Addrs {
			p := &IIOPProfile{Version: a.Version, Host: a.Host, Port: a.Port, ObjectKey: loc.Key}
			ior.Profiles = append(ior.Profiles, p.Profile(BigEndian))
		}
		return ior, nil
	}
	return ParseIOR(s)
}

// Object is a reference to a remote object, bound to a Client. After a
// LOCATION_FORWARD its calls go to the forwarded reference. It is safe
// for concurrent use.
type Object struct {
	c   *Client
	ior *IOR
	mu  sync.Mutex
	fwd *IOR // where the object was forwarded to, if it was
	// last is where the last call went, kept so that a call does not
	// decode the same profile again.
	last route
}

// route is where an Object's calls go: its reference (the forwarded one,
// if any), that reference's IIOP profile and its endpoint, host:port.
type route struct {
	ior  *IOR
	prof *IIOPProfile
	addr string
}

// IOR returns the reference the Object was made from.
func (o *Object) IOR() *IOR { return o.ior }

// target is where calls go now.
func (o *Object) target() (route, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ior := o.ior
	if o.fwd != nil {
		ior = o.fwd
	}
	if o.last.ior != ior {
		p, err := ior.IIOP()
		if err != nil {
			return route{ior: ior}, err
		}
		o.last = route{ior: ior, prof: p, addr: endpoint(p)}
	}
	return o.last, nil
}

func endpoint(p *IIOPProfile) string { return net.JoinHostPort(p.Host, strconv.Itoa(int(p.Port))) }

func (o *Object) forward(from, to *IOR) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fwd == from || o.fwd == nil && from == o.ior {
		o.fwd = to
	}
}

// resetForward goes back to the original reference, as an ORB does when
// the forwarded one stops answering.
func (o *Object) resetForward(from *IOR) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fwd == from {
		o.fwd = nil
	}
}

// Args writes a request's arguments; Results reads a reply's results.
// Either may be nil when there are none.
type (
	Args    func(*Encoder) error
	Results func(*Decoder) error
)

// Invoke calls op on the object, a two-way request: args writes the in
// and inout arguments, results reads the return value and the inout and
// out arguments. It returns
//   - a *SystemException for a SYSTEM_EXCEPTION reply,
//   - a *UserExceptionError for a USER_EXCEPTION reply (results is not
//     called; read the members from its Decoder),
//   - a *ConnError when the connection failed (see IsRetryable),
//   - ctx's error, wrapped, when its deadline passed or it was cancelled.
//
// LOCATION_FORWARD replies are followed (at most MaxForwards).
func (o *Object) Invoke(ctx context.Context, op string, args Args, results Results) error {
	m, err := o.call(ctx, op, args, true)
	if err != nil {
		return err
	}
	if results == nil {
		return nil
	}
	d := m.Body()
	d.SetPartOf("results of ", op)
	if err := results(d); err != nil {
		return fmt.Errorf("corba: %s: %w", op, err)
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("corba: %s: %w", op, err)
	}
	return nil
}

// Oneway sends op as a oneway request: it returns once the request is
// written.
func (o *Object) Oneway(ctx context.Context, op string, args Args) error {
	_, err := o.call(ctx, op, args, false)
	return err
}

// Locate sends a LocateRequest: is the object there? It follows
// forwards, and returns the final status: LocateObjectHere or
// LocateUnknownObject (a LOC_SYSTEM_EXCEPTION is an error).
func (o *Object) Locate(ctx context.Context) (LocateStatus, error) {
	for hops := 0; ; hops++ {
		rt, err := o.target()
		if err != nil {
			return 0, fmt.Errorf("corba: locate: %w", err)
		}
		ior, p := rt.ior, rt.prof
		cc, err := o.c.conn(ctx, p)
		if err != nil {
			return 0, err
		}
		v := giopVersion(p.Version)
		var rid uint32
		m, err := cc.roundTrip(ctx, "LocateRequest", func(id uint32) ([]byte, error) {
			rid = id
			return EncodeLocateRequest(v, o.c.opts.Order, &LocateRequest{RequestID: id, ObjectKey: p.ObjectKey})
		})
		if err != nil {
			return 0, err
		}
		if m.LocateReply == nil {
			return 0, fmt.Errorf("corba: %s answered LocateRequest %d with a %v", cc.addr, rid, m.Type)
		}
		switch x := m.Exception().(type) {
		case nil:
			return m.LocateReply.Status, nil
		case *ForwardError:
			if hops >= o.c.opts.MaxForwards {
				return 0, fmt.Errorf("corba: locate: more than %d forwards", o.c.opts.MaxForwards)
			}
			o.forward(ior, x.IOR)
		default:
			return 0, x
		}
	}
}

// NonExistent calls the standard _non_existent operation.
func (o *Object) NonExistent(ctx context.Context) (bool, error) {
	var b bool
	err := o.Invoke(ctx, "_non_existent", nil, func(d *Decoder) error { b = d.ReadBoolean(); return nil })
	return b, err
}

// IsA calls the standard _is_a operation: does the object implement the
// interface with this repository id?
func (o *Object) IsA(ctx context.Context, repositoryID string) (bool, error) {
	var b bool
	err := o.Invoke(ctx, "_is_a", func(e *Encoder) error { e.WriteString(repositoryID); return nil },
		func(d *Decoder) error { b = d.ReadBoolean(); return nil })
	return b, err
}

// giopVersion is the GIOP version for an IIOP profile: its own, at most
// 1.2.
func giopVersion(v Version) Version {
	if v.Major != 1 || v.Minor > 2 {
		return GIOP12
	}
	return v
}

// call sends a request and, for a two-way one, returns its reply with
// status NO_EXCEPTION; other statuses are returned as errors.
func (o *Object) call(ctx context.Context, op string, args Args, twoWay bool) (*Message, error) {
	for hops := 0; ; hops++ {
		rt, err := o.target()
		if err != nil {
			return nil, fmt.Errorf("corba: %s: %w", op, err)
		}
		ior, p := rt.ior, rt.prof
		cc, err := o.c.conn(ctx, p)
		if err != nil {
			o.resetForward(ior)
			return nil, err
		}
		flags := byte(3)
		if !twoWay {
			flags = 0
		}
		build := o.request(cc, p, op, args, flags)
		if !twoWay {
			return nil, cc.send(ctx, op, build)
		}
		m, err := cc.roundTrip(ctx, op, build)
		if err != nil {
			return nil, err
		}
		if m.Reply == nil {
			return nil, fmt.Errorf("corba: %s answered request %s with a %v", cc.addr, op, m.Type)
		}
		switch m.Reply.Status {
		case ReplyNoException:
			return m, nil
		case ReplyNeedsAddressingMode:
			return nil, fmt.Errorf("corba: %s: %s asks for another addressing mode, which is not supported", op, cc.addr)
		}
		x := m.Exception()
		if f, ok := x.(*ForwardError); ok {
			if hops >= o.c.opts.MaxForwards {
				return nil, fmt.Errorf("corba: %s: more than %d location forwards", op, o.c.opts.MaxForwards)
			}
			o.forward(ior, f.IOR)
			continue
		}
		if x == nil {
			x = fmt.Errorf("corba: %s: reply status %v", op, m.Reply.Status)
		}
		return nil, x
	}
}

// StartCall sends a two-way request for op and returns once it is
// written, without waiting for the reply: done is called once, with the
// reply's results to read (as Invoke's results function reads them) or
// the call's error, on the goroutine that reads the connection (it must
// not block), or when timeout passes without a reply. A location forward
// is an error here, not followed. With try, StartCall writes only what
// it can write at once: on a connection already made, with no other
// request being written on it; otherwise it returns ErrWouldBlock. When
// StartCall returns an error, done is not called.
func (o *Object) StartCall(op string, args Args, timeout time.Duration, try bool, done func(d *Decoder, err error)) error {
	rt, err := o.target()
	if err != nil {
		return fmt.Errorf("corba: %s: %w", op, err)
	}
	p := rt.prof
	// The deadline bounds dialling and writing; the reply's is the timer
	// below.
	deadline := time.Now().Add(timeout)
	var cc *clientConn
	if try {
		if cc = o.c.existing(rt.addr); cc == nil {
			return ErrWouldBlock
		}
	} else {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		cc, err = o.c.conn(ctx, p)
		cancel()
		if err != nil {
			return err
		}
	}
	var timer atomic.Pointer[time.Timer]
	w := &waiter{fn: func(r reply) {
		if t := timer.Load(); t != nil {
			t.Stop()
		}
		if r.err != nil {
			done(nil, cc.wrap(op, r.err))
			return
		}
		m := r.m
		switch {
		case m.Reply == nil:
			done(nil, fmt.Errorf("corba: %s answered request %s with a %v", cc.addr, op, m.Type))
		case m.Reply.Status == ReplyNoException:
			d := m.Body()
			d.SetPartOf("results of ", op)
			done(d, nil)
		default:
			x := m.Exception()
			if x == nil {
				x = fmt.Errorf("corba: %s: reply status %v", op, m.Reply.Status)
			}
			done(nil, x)
		}
	}}
	id, err := cc.write(context.Background(), deadline, op, o.request(cc, p, op, args, 3), w, try)
	if err != nil {
		return err
	}
	timer.Store(time.AfterFunc(timeout, func() {
		cc.mu.Lock()
		w, ok := cc.pending[id]
		delete(cc.pending, id)
		cc.mu.Unlock()
		if ok {
			w.give(reply{err: fmt.Errorf("no reply within %v: %w", timeout, context.DeadlineExceeded)})
		}
	}))
	return nil
}

// request returns what builds a request for op, with flags, to p's
// object on cc.
func (o *Object) request(cc *clientConn, p *IIOPProfile, op string, args Args, flags byte) func(id uint32) ([]byte, error) {
	v := giopVersion(p.Version)
	return func(id uint32) ([]byte, error) {
		r := &Request{RequestID: id, ResponseFlags: flags, ObjectKey: p.ObjectKey, Operation: op}
		if v.Minor >= 1 && cc.firstRequest() {
			r.ServiceContexts = []ServiceContext{omniCodeSets.ServiceContext(o.c.opts.Order)}
		}
		e, err := EncodeRequest(v, o.c.opts.Order, r)
		if err != nil {
			return nil, err
		}
		if args != nil {
			if err := args(e); err != nil {
				return nil, fmt.Errorf("corba: arguments of %s: %w", op, err)
			}
		}
		return e.Bytes(), nil
	}
}

// omniCodeSets is the CodeSets service context an omniORB client sends on
// a connection's first request: ISO-8859-1 for char, UTF-16 for wchar.
var omniCodeSets = CodeSetContext{Char: CodeSetISO8859_1, WChar: CodeSetUTF16}

// ConnError is the failure of a connection, or of a call because of its
// connection.
type ConnError struct {
	Addr string // host:port
	Op   string // the operation being called, if any
	Err  error
	// Retryable is set when the request was certainly not processed:
	// the server sent CloseConnection, or the connection could not be
	// made. A later call dials again.
	Retryable bool
}

func (e *ConnError) Error() string {
	var b strings.Builder
	b.WriteString("corba: ")
	if e.Op != "" {
		b.WriteString(e.Op + ": ")
	}
	b.WriteString(e.Addr + ": " + e.Err.Error())
	if e.Retryable {
		b.WriteString(" (not processed; retryable)")
	}
	return b.String()
}

func (e *ConnError) Unwrap() error { return e.Err }

// IsRetryable says whether err is a call's failure that certainly did not
// reach the servant, so that calling again is safe.
func IsRetryable(err error) bool {
	var ce *ConnError
	return errors.As(err, &ce) && ce.Retryable
}

// ErrCloseConnection is the cause of the ConnErrors of calls pending when
// the server sent CloseConnection.
var ErrCloseConnection = errors.New("the server closed the connection (GIOP CloseConnection)")

// existing returns the connection to addr (host:port) if there is one.
func (c *Client) existing(addr string) *clientConn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	return c.conns[addr]
}

// conn returns the connection to p's endpoint, dialing it if needed.
func (c *Client) conn(ctx context.Context, p *IIOPProfile) (*clientConn, error) {
	addr := endpoint(p)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClientClosed
	}
	if cc := c.conns[addr]; cc != nil {
		c.mu.Unlock()
		return cc, nil
	}
	c.mu.Unlock()
	nc, err := c.opts.Dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, &ConnError{Addr: addr, Err: err, Retryable: true}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		nc.Close()
		return nil, ErrClientClosed
	}
	if cc := c.conns[addr]; cc != nil { // another call dialed meanwhile
		nc.Close()
		return cc, nil
	}
	cc := &clientConn{c: c, addr: addr, nc: nc, pending: map[uint32]waiter{}, done: make(chan struct{})}
	c.conns[addr] = cc
	go cc.readLoop()
	return cc, nil
}

// forget removes cc from the connections, so that the next call dials
// again.
func (c *Client) forget(cc *clientConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conns[cc.addr] == cc {
		delete(c.conns, cc.addr)
	}
}

// clientConn is one connection of a Client.
type clientConn struct {
	c    *Client
	addr string
	nc   net.Conn
	wmu  sync.Mutex // serialises writes

	mu        sync.Mutex
	nextID    uint32
	pending   map[uint32]waiter
	sentFirst bool
	err       error // set when the connection failed
	done      chan struct{}
}

type reply struct {
	m   *Message
	err error
}

// waiter is who waits for a reply: a call on its channel, or a started
// call's function (called once, on the goroutine that took the reply or
// the failure from the pending calls).
type waiter struct {
	ch chan reply
	fn func(reply)
}

func (w waiter) give(r reply) {
	if w.fn != nil {
		w.fn(r)
		return
	}
	w.ch <- r
}

// firstRequest says whether the request being built is the connection's
// first (it then carries the CodeSets context); it is called with wmu
// held, so the first built is the first written.
func (cc *clientConn) firstRequest() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	first := !cc.sentFirst
	cc.sentFirst = true
	return first
}

// send builds a message with a new request id and writes it.
func (cc *clientConn) send(ctx context.Context, op string, build func(id uint32) ([]byte, error)) error {
	_, err := cc.write(ctx, time.Time{}, op, build, nil, false)
	return err
}

// ErrWouldBlock is what StartCall with try returns instead of waiting: the
// connection is not made yet, or another request is being written on it.
var ErrWouldBlock = errors.New("corba: the call would have to wait")

// write builds and writes a message; for a two-way one (w not nil) it
// registers who waits for its reply first. The writing ends at deadline
// (when not zero) or ctx's, whichever is first. With try, it returns
// ErrWouldBlock instead of waiting for another request's writing.
func (cc *clientConn) write(ctx context.Context, deadline time.Time, op string, build func(id uint32) ([]byte, error), w *waiter, try bool) (uint32, error) {
	if !try {
		cc.wmu.Lock()
	} else if !cc.wmu.TryLock() {
		return 0, ErrWouldBlock
	}
	defer cc.wmu.Unlock()
	cc.mu.Lock()
	if cc.err != nil {
		err := cc.err
		cc.mu.Unlock()
		return 0, cc.wrap(op, err)
	}
	cc.nextID++
	id := cc.nextID
	if w != nil {
		cc.pending[id] = *w
	}
	cc.mu.Unlock()
	unregister := func() {
		cc.mu.Lock()
		delete(cc.pending, id)
		cc.mu.Unlock()
	}
	msg, err := build(id)
	if err == nil && len(msg) > cc.c.opts.MaxMessageSize {
		err = fmt.Errorf("corba: %s: a message of %d bytes exceeds the limit of %d", op, len(msg), cc.c.opts.MaxMessageSize)
	}
	if err != nil {
		unregister()
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		unregister()
		return 0, fmt.Errorf("corba: %s to %s: %w", op, cc.addr, err)
	}
	if dl, ok := ctx.Deadline(); ok && (deadline.IsZero() || dl.Before(deadline)) {
		deadline = dl
	}
	_ = cc.nc.SetWriteDeadline(deadline)
	// A write cut short leaves half a message on the connection: it is
	// then closed.
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = cc.nc.SetWriteDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	if _, err = cc.nc.Write(msg); err != nil {
		unregister()
		werr := err
		if ctx.Err() != nil {
			werr = fmt.Errorf("writing: %w (%w)", ctx.Err(), err)
		} else if errors.Is(err, os.ErrDeadlineExceeded) {
			werr = fmt.Errorf("writing: %w (%w)", context.DeadlineExceeded, err)
		}
		cc.fail(werr, false)
		if cc.c.isClosed() {
			return 0, ErrClientClosed // Close cut the write short
		}
		return 0, cc.wrap(op, werr)
	}
	return id, nil
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// roundTrip writes a message built with a new request id and waits for
// the reply with that id, or ctx's end, or the connection's failure.
func (cc *clientConn) roundTrip(ctx context.Context, op string, build func(id uint32) ([]byte, error)) (*Message, error) {
	ch := make(chan reply, 1)
	id, err := cc.write(ctx, time.Time{}, op, build, &waiter{ch: ch}, false)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, cc.wrap(op, r.err)
		}
		return r.m, nil
	case <-ctx.Done():
		cc.mu.Lock()
		delete(cc.pending, id)
		cc.mu.Unlock()
		// Tell the server, as omniORB does not; a failure here does not
		// matter.
		if b, err := EncodeCancelRequest(GIOP12, cc.c.opts.Order, id); err == nil && cc.wmu.TryLock() {
			_ = cc.nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = cc.nc.Write(b)
			cc.wmu.Unlock()
		}
		return nil, fmt.Errorf("corba: %s to %s: no reply: %w", op, cc.addr, ctx.Err())
	}
}

func (cc *clientConn) wrap(op string, err error) error {
	if errors.Is(err, ErrClientClosed) {
		return err
	}
	var ce *ConnError
	if errors.As(err, &ce) {
		c := *ce
		c.Op = op
		return &c
	}
	return &ConnError{Addr: cc.addr, Op: op, Err: err, Retryable: errors.Is(err, ErrCloseConnection)}
}

// fail closes the connection and fails its pending calls with err.
func (cc *clientConn) fail(err error, retryable bool) {
	cc.c.forget(cc)
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return
	}
	cc.err = err
	pending := cc.pending
	cc.pending = nil
	cc.mu.Unlock()
	_ = cc.nc.Close()
	for _, w := range pending {
		w.give(reply{err: err})
	}
}

// readLoop reads the connection's messages and hands replies to their
// callers, until the connection fails.
func (cc *clientConn) readLoop() {
	re := NewReassembler(cc.c.opts.MaxMessageSize)
	r := bufio.NewReaderSize(cc.nc, readBuffer)
	for {
		b, err := ReadMessage(r, cc.c.opts.MaxMessageSize)
		if err == nil {
			b, err = re.Add(b)
		}
		if err != nil {
			cc.mu.Lock()
			failed := cc.err != nil
			cc.mu.Unlock()
			if !failed {
				cc.fail(fmt.Errorf("connection lost: %w", err), false)
			}
			return
		}
		if b == nil {
			continue // more fragments to come
		}
		m, err := ParseMessage(b)
		if err != nil {
			cc.sendMessageError(b)
			cc.fail(err, false)
			return
		}
		var id uint32
		switch {
		case m.Reply != nil:
			id = m.Reply.RequestID
		case m.LocateReply != nil:
			id = m.LocateReply.RequestID
		case m.Type == MsgCloseConnection:
			cc.fail(ErrCloseConnection, true)
			return
		case m.Type == MsgMessageError:
			cc.fail(errors.New("the server sent MessageError: it could not read a message of ours"), false)
			return
		default:
			cc.sendMessageError(b)
			cc.fail(fmt.Errorf("the server sent a %v, which a client does not accept", m.Type), false)
			return
		}
		cc.mu.Lock()
		w, ok := cc.pending[id]
		delete(cc.pending, id)
		cc.mu.Unlock()
		if ok {
			w.give(reply{m: m})
		}
		// A reply nobody waits for (its call timed out) is dropped.
	}
}

func (cc *clientConn) sendMessageError(b []byte) {
	v := GIOP12
	if h, err := ParseHeader(b); err == nil {
		v = h.Version
	}
	msg, _ := EncodeMessageError(v, cc.c.opts.Order)
	cc.wmu.Lock()
	_ = cc.nc.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = cc.nc.Write(msg)
	cc.wmu.Unlock()
}

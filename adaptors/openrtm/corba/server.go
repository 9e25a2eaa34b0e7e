package corba

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Servant implements an object that a Server serves.
type Servant interface {
	// RepositoryIDs are the ids of the interfaces the object implements,
	// the most derived first (the IOR's type id); the standard _is_a
	// operation answers with them.
	RepositoryIDs() []string
	// Invoke carries out op: it reads the in and inout arguments from
	// args and writes the return value and the inout and out arguments
	// to results. A *UserException or *SystemException it returns is the
	// reply (what it wrote is dropped); a *ForwardError sends the client
	// elsewhere; any other error is answered with the system exception
	// UNKNOWN and logged. An unknown operation is answered with
	// BadOperation(). ctx ends when the client cancels the request, its
	// connection ends or the server is closed. The two-way requests of
	// one connection may run concurrently; a oneway runs before the
	// connection's next message is read.
	Invoke(ctx context.Context, op string, args *Decoder, results *Encoder) error
}

// UserException is an error a Servant returns to raise a user exception
// (an IDL exception): its repository id and a function writing its
// members (nil when it has none).
type UserException struct {
	ID      string
	Members func(*Encoder) error
}

func (x *UserException) Error() string { return "CORBA user exception " + x.ID }

// NewSystemException returns the standard system exception named name
// ("OBJECT_NOT_EXIST", "BAD_OPERATION", ...).
func NewSystemException(name string, minor uint32, completed CompletionStatus) *SystemException {
	return &SystemException{ID: "IDL:omg.org/CORBA/" + name + ":1.0", Minor: minor, Completed: completed}
}

// Name returns the exception's name without its repository id's prefix
// and version ("OBJECT_NOT_EXIST").
func (x *SystemException) Name() string {
	n := strings.TrimPrefix(x.ID, "IDL:omg.org/CORBA/")
	if i := strings.LastIndexByte(n, ':'); i >= 0 {
		n = n[:i]
	}
	return n
}

// BadOperation is the system exception for an operation the object does
// not have.
func BadOperation() *SystemException {
	return NewSystemException("BAD_OPERATION", 0, CompletedNo)
}

// ServerOptions configure a Server. The zero value listens on a free
// port of 127.0.0.1.
type ServerOptions struct {
	// Addr is the address to listen on ("127.0.0.1:0" when empty).
	Addr string
	// Listener, when set, is listened on instead of Addr (a TCP
	// listener, or one wrapping it); Close closes it.
	Listener net.Listener
	// Host is the host published in IORs: the listening address's IP
	// when empty (set it when listening on 0.0.0.0).
	Host string
	// Logger gets one line per connection that sent what cannot be read,
	// and servant errors (nothing when nil).
	Logger *zap.Logger
	// MaxMessageSize bounds the messages read and written
	// (DefaultMaxMessageSize when 0).
	MaxMessageSize int
	// MaxConcurrent bounds the requests of one connection served at once
	// (16 when 0); the connection is not read while they are.
	MaxConcurrent int
	// WriteTimeout bounds the writing of one reply (10 s when 0).
	WriteTimeout time.Duration
	// ORBType is the TAG_ORB_TYPE in IORs; omniORB's (ORBTypeOmniORB)
	// when 0, as its peers see what they see from other omniORB
	// processes.
	ORBType uint32
}

// Server is the object-adapter side of an ORB: it listens on TCP and
// serves the servants registered under their object keys over GIOP 1.0
// to 1.2.
type Server struct {
	opts   ServerOptions
	log    *zap.Logger
	ln     net.Listener
	host   string
	port   uint16
	ctx    context.Context // ends when Close gives up waiting
	cancel context.CancelFunc

	mu       sync.Mutex
	servants map[string]Servant
	conns    map[*serverConn]struct{}
	closed   bool
	wg       sync.WaitGroup // the accept loop and every connection's reader
}

// Listen starts a Server.
func Listen(opts ServerOptions) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 16
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	if opts.ORBType == 0 {
		opts.ORBType = ORBTypeOmniORB
	}
	ln := opts.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", opts.Addr); err != nil {
			return nil, fmt.Errorf("corba: listen: %w", err)
		}
	}
	ta, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return nil, fmt.Errorf("corba: listen: %v is not a TCP address", ln.Addr())
	}
	s := &Server{opts: opts, log: opts.Logger, ln: ln, host: opts.Host, port: uint16(ta.Port),
		servants: map[string]Servant{}, conns: map[*serverConn]struct{}{}}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.host == "" {
		s.host = ta.IP.String()
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the address the Server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Register serves sv under key and returns its IOR. A key in use is an
// error.
func (s *Server) Register(key []byte, sv Servant) (*IOR, error) {
	ids := sv.RepositoryIDs()
	if len(ids) == 0 {
		return nil, fmt.Errorf("corba: register %q: the servant has no repository id", key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.servants[string(key)] != nil {
		return nil, fmt.Errorf("corba: register %q: the key is in use", key)
	}
	s.servants[string(key)] = sv
	return s.IOR(key, ids[0]), nil
}

// Unregister stops serving the object under key: requests for it get
// OBJECT_NOT_EXIST.
func (s *Server) Unregister(key []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.servants, string(key))
}

func (s *Server) servant(key []byte) Servant {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.servants[string(key)]
}

// IOR returns the IOR of the object under key on this Server: one IIOP
// 1.2 profile with the published host and the port, and the components
// omniORB puts there, TAG_ORB_TYPE and TAG_CODE_SETS (char ISO-8859-1
// with UTF-8 conversion, wchar UTF-16).
func (s *Server) IOR(key []byte, typeID string) *IOR {
	p := &IIOPProfile{Version: GIOP12, Host: s.host, Port: s.port, ObjectKey: key, Components: []TaggedComponent{
		ORBTypeComponent(LittleEndian, s.opts.ORBType),
		(&CodeSetComponentInfo{
			Char:  CodeSetComponent{Native: CodeSetISO8859_1, Conversion: []uint32{CodeSetUTF8}},
			WChar: CodeSetComponent{Native: CodeSetUTF16, Conversion: []uint32{CodeSetUTF16}},
		}).Component(LittleEndian),
	}}
	return &IOR{TypeID: typeID, Profiles: []TaggedProfile{p.Profile(LittleEndian)}}
}

// Close stops accepting, sends CloseConnection to every client once its
// requests are answered, and waits for that until ctx ends. Then it
// cancels the handlers' contexts, closes the remaining connections and
// returns ctx's error.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := make([]*serverConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	_ = s.ln.Close()
	for _, c := range conns {
		c.shutdown()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.cancel()
		for _, c := range conns {
			_ = c.nc.Close()
		}
		return fmt.Errorf("corba: server close: %w", ctx.Err())
	}
}

func (s *Server) accept() {
	defer s.wg.Done()
	var delay time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait a little, as
			// net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("corba server: accept", zap.Error(err))
			time.Sleep(delay)
			continue
		}
		delay = 0
		c := &serverConn{s: s, nc: nc, version: GIOP12, cancels: map[uint32]context.CancelFunc{},
			sem: make(chan struct{}, s.opts.MaxConcurrent)}
		c.ctx, c.cancel = context.WithCancel(s.ctx)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go c.serve()
	}
}

// serverConn is one client's connection to a Server.
type serverConn struct {
	s      *Server
	nc     net.Conn
	ctx    context.Context
	cancel context.CancelFunc
	sem    chan struct{}
	wmu    sync.Mutex

	mu       sync.Mutex
	version  Version // of the last message read, for CloseConnection
	order    ByteOrder
	active   int // requests being served
	closing  bool
	finished bool
	cancels  map[uint32]context.CancelFunc
	handlers sync.WaitGroup
}

// serve reads the connection's messages until it ends.
func (c *serverConn) serve() {
	defer func() {
		// Requests still in progress cannot be answered any more.
		c.cancel()
		c.handlers.Wait()
		_ = c.nc.Close()
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
		c.s.wg.Done()
	}()
	re := NewReassembler(c.s.opts.MaxMessageSize)
	// Buffered: a message's header and body, often the next message too,
	// in one read.
	r := bufio.NewReaderSize(c.nc, readBuffer)
	for {
		b, err := ReadMessage(r, c.s.opts.MaxMessageSize)
		if err != nil {
			if !ended(err) {
				c.bad(b, err)
			}
			c.finish()
			return
		}
		whole, err := re.Add(b)
		if err != nil {
			c.bad(b, err)
			return
		}
		if whole == nil {
			continue
		}
		m, err := ParseMessage(whole)
		if err != nil {
			c.bad(whole, err)
			return
		}
		c.mu.Lock()
		c.version, c.order = m.Version, m.Order
		closing := c.closing
		c.mu.Unlock()
		switch m.Type {
		case MsgRequest:
			if closing {
				// Not served: the CloseConnection that follows the
				// requests in progress tells the client to send it again.
				continue
			}
			select {
			case c.sem <- struct{}{}:
			case <-c.ctx.Done():
				return
			}
			if !c.start(m) {
				<-c.sem
			}
		case MsgLocateRequest:
			c.locate(m)
		case MsgCancelRequest:
			c.mu.Lock()
			if cancel := c.cancels[m.CancelRequest.RequestID]; cancel != nil {
				cancel()
			}
			c.mu.Unlock()
			re.Cancel(m.CancelRequest.RequestID)
		case MsgCloseConnection:
			c.finish()
			return
		case MsgMessageError:
			c.s.log.Warn("corba server: the client sent MessageError; closing its connection",
				zap.String("client", c.nc.RemoteAddr().String()))
			c.finish()
			return
		default:
			c.bad(whole, fmt.Errorf("giop: a client sent a %v", m.Type))
			return
		}
	}
}

// ended says whether a read error is the connection's end rather than
// bytes that are not GIOP.
func ended(err error) bool {
	var ne net.Error
	return err == io.EOF || errors.Is(err, net.ErrClosed) || errors.As(err, &ne)
}

// finish marks the connection as ending: no request starts any more.
func (c *serverConn) finish() {
	c.mu.Lock()
	c.finished = true
	c.mu.Unlock()
}

// bad answers what cannot be read with MessageError, logs it once and
// ends the connection.
func (c *serverConn) bad(b []byte, err error) {
	c.finish()
	v, order := GIOP12, LittleEndian
	if h, herr := ParseHeader(b); herr == nil {
		v, order = h.Version, h.Order
	}
	msg, _ := EncodeMessageError(v, order)
	c.write(msg)
	c.s.log.Warn("corba server: closing a connection that sent what is not GIOP it can read; answered MessageError",
		zap.String("client", c.nc.RemoteAddr().String()), zap.Error(err))
	// Close gently: what the client sent that was not read would make
	// the close a reset, which can overtake the MessageError. So stop
	// writing, and read (a bounded amount, for a second) until the client
	// closes too.
	if tc, ok := c.nc.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
		_ = c.nc.SetReadDeadline(time.Now().Add(time.Second))
		_, _ = io.CopyN(io.Discard, c.nc, 1<<20)
	}
	_ = c.nc.Close()
}

// shutdown sends CloseConnection now if no request is in progress, else
// after the last one.
func (c *serverConn) shutdown() {
	c.mu.Lock()
	c.closing = true
	idle := c.active == 0
	c.mu.Unlock()
	if idle {
		c.sendClose()
	}
}

func (c *serverConn) sendClose() {
	c.mu.Lock()
	v, order, finished := c.version, c.order, c.finished
	c.mu.Unlock()
	if !finished {
		if msg, err := EncodeCloseConnection(v, order); err == nil {
			c.write(msg)
		}
	}
	_ = c.nc.Close()
}

// write writes a message whole, within the write timeout; a failure
// closes the connection.
func (c *serverConn) write(msg []byte) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.opts.WriteTimeout))
	if _, err := c.nc.Write(msg); err != nil {
		_ = c.nc.Close()
		return false
	}
	return true
}

func (c *serverConn) locate(m *Message) {
	r := m.LocateRequest
	st := LocateUnknownObject
	if c.s.servant(r.ObjectKey) != nil {
		st = LocateObjectHere
	}
	e, err := EncodeLocateReply(m.Version, m.Order, &LocateReply{RequestID: r.RequestID, Status: st})
	if err == nil {
		c.write(e.Bytes())
	}
}

// start serves a request, a two-way one in a goroutine of its own; not
// once the connection is closing.
func (c *serverConn) start(m *Message) bool {
	r := m.Request
	// A oneway is carried out before the next message is read, so that
	// it takes effect before the calls its client makes after it, as
	// with omniORB's thread per connection; so is a quick operation, to
	// spare a hand-over. Other two-way requests run side by side (up to
	// MaxConcurrent), each cancelled by a CancelRequest; one carried out
	// here cannot be, since the connection is not read meanwhile.
	inline := !r.ResponseExpected() || c.quick(r)
	ctx, cancel := c.ctx, context.CancelFunc(nil)
	if !inline {
		ctx, cancel = context.WithCancel(c.ctx)
	}
	c.mu.Lock()
	if c.closing || c.finished {
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return false
	}
	c.active++
	if cancel != nil {
		c.cancels[r.RequestID] = cancel
	}
	c.mu.Unlock()
	c.handlers.Add(1)
	if inline {
		c.run(ctx, m, nil)
	} else {
		go c.run(ctx, m, cancel)
	}
	return true
}

// run carries out a request that start began, and writes its reply.
func (c *serverConn) run(ctx context.Context, m *Message, cancel context.CancelFunc) {
	defer c.handlers.Done()
	defer func() { <-c.sem }()
	msg := c.dispatch(ctx, m)
	if cancel != nil {
		cancel()
	}
	c.mu.Lock()
	if cancel != nil {
		delete(c.cancels, m.Request.RequestID)
	}
	c.active--
	last := c.active == 0 && c.closing
	c.mu.Unlock()
	if msg != nil {
		c.write(msg)
	}
	if last {
		c.sendClose()
	}
}

// QuickServant is a Servant with operations that are quick: they return
// without waiting on anything slow (a data port's put, which hands its
// value over and answers), so they run on the goroutine that read the
// request, before the connection's next message is read.
type QuickServant interface {
	Servant
	Quick(op string) bool
}

func (c *serverConn) quick(r *Request) bool {
	q, ok := c.s.servant(r.ObjectKey).(QuickServant)
	return ok && q.Quick(r.Operation)
}

// dispatch carries out a request and returns its reply (nil for a
// oneway).
func (c *serverConn) dispatch(ctx context.Context, m *Message) []byte {
	r := m.Request
	args := m.Body()
	args.SetPartOf("arguments of ", r.Operation)
	results := NewEncoder(m.Order)
	err := c.invoke(ctx, r, args, results)
	if !r.ResponseExpected() {
		return nil
	}
	msg, err := c.reply(m, err, results.Bytes())
	if err != nil {
		c.s.log.Warn("corba server: reply", zap.String("operation", r.Operation), zap.Error(err))
		msg, _ = c.reply(m, NewSystemException("MARSHAL", 0, CompletedYes), nil)
	}
	return msg
}

// invoke runs the servant, or the standard operations, and turns what
// goes wrong into the exception to answer.
func (c *serverConn) invoke(ctx context.Context, r *Request, args *Decoder, results *Encoder) (err error) {
	sv := c.s.servant(r.ObjectKey)
	if sv == nil {
		return NewSystemException("OBJECT_NOT_EXIST", 0, CompletedNo)
	}
	switch r.Operation {
	case "_non_existent", "_not_existent":
		results.WriteBoolean(false)
		return nil
	case "_is_a":
		id := args.ReadString("repository id")
		if args.Err() != nil {
			return NewSystemException("MARSHAL", 0, CompletedNo)
		}
		results.WriteBoolean(id == "IDL:omg.org/CORBA/Object:1.0" || slices.Contains(sv.RepositoryIDs(), id))
		return nil
	case "_repository_id":
		results.WriteString(sv.RepositoryIDs()[0])
		return nil
	case "_interface", "_get_interface", "_component", "_get_component":
		return NewSystemException("NO_IMPLEMENT", 0, CompletedNo)
	}
	defer func() {
		if p := recover(); p != nil {
			c.s.log.Error("corba server: servant panicked", zap.String("operation", r.Operation), zap.Any("panic", p))
			err = NewSystemException("UNKNOWN", 0, CompletedMaybe)
		}
	}()
	err = sv.Invoke(ctx, r.Operation, args, results)
	if err == nil && args.Err() != nil {
		c.s.log.Warn("corba server: arguments", zap.String("operation", r.Operation), zap.Error(args.Err()))
		return NewSystemException("MARSHAL", 0, CompletedNo)
	}
	return err
}

// reply encodes the reply to m for the outcome err with the results.
func (c *serverConn) reply(m *Message, outcome error, results []byte) ([]byte, error) {
	rp := &Reply{RequestID: m.Request.RequestID, Status: ReplyNoException}
	var body func(*Encoder) error
	var sx *SystemException
	var ux *UserException
	var fx *ForwardError
	switch {
	case outcome == nil:
		if len(results) > 0 {
			body = func(e *Encoder) error { e.WriteBytes(results); return nil }
		}
	case errors.As(outcome, &sx):
		rp.Status = ReplySystemException
		body = func(e *Encoder) error { e.WriteSystemException(sx); return nil }
	case errors.As(outcome, &ux):
		rp.Status = ReplyUserException
		body = func(e *Encoder) error {
			e.WriteString(ux.ID)
			if ux.Members != nil {
				return ux.Members(e)
			}
			return nil
		}
	case errors.As(outcome, &fx):
		rp.Status = ReplyLocationForward
		body = func(e *Encoder) error { e.WriteIOR(fx.IOR); return nil }
	default:
		c.s.log.Warn("corba server: servant error", zap.String("operation", m.Request.Operation), zap.Error(outcome))
		rp.Status = ReplySystemException
		x := NewSystemException("UNKNOWN", 0, CompletedMaybe)
		body = func(e *Encoder) error { e.WriteSystemException(x); return nil }
	}
	e, err := EncodeReply(m.Version, m.Order, rp)
	if err != nil {
		return nil, err
	}
	if body != nil {
		// The body starts on an 8-byte boundary: GIOP 1.2 aligns it, and
		// a GIOP 1.0 or 1.1 reply without service contexts has a 24-byte
		// header. So results written from offset 0 keep their alignment.
		if err := body(e); err != nil {
			return nil, err
		}
	}
	msg := e.Bytes()
	if len(msg) > c.s.opts.MaxMessageSize {
		return nil, fmt.Errorf("a reply of %d bytes exceeds the limit of %d", len(msg), c.s.opts.MaxMessageSize)
	}
	return msg, nil
}

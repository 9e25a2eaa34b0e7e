// Package socket is the "socket" adaptor: line-framed TCP, in client role
// (reconnecting with back-off) or server role (many clients), SEATML §10.1.
package socket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/schema"
)

func init() {
	adaptors.RegisterKind(adaptors.Kind{Name: "socket", New: New, Caps: adaptors.Connections,
		Attrs: map[string]schema.AttrSpec{
			"host":     {},
			"port":     {Required: true, Kind: schema.Port},
			"role":     {Kind: schema.Enum, Enum: []string{"client", "server"}},
			"maxline":  {Kind: schema.PosInt},
			"maxconns": {Kind: schema.PosInt},
			// session="peer" gives each connection its own instance of
			// the behavior (a server only); maxsessions bounds them.
			"session":     {Kind: schema.Enum, Enum: []string{"peer"}},
			"maxsessions": {Kind: schema.PosInt},
		},
		Check: adaptors.Check{Decl: checkDecl}})
}

// checkDecl: a session is one client's conversation, so only a server
// opens sessions.
func checkDecl(d adaptors.Decl) []adaptors.Problem {
	if s := d.Attrs["session"]; s != "" && d.Attrs["role"] != "server" {
		return []adaptors.Problem{{Attr: "session", AtName: true,
			Msg: fmt.Sprintf("session=%q needs role=\"server\": a session is one client's conversation", s)}}
	}
	return nil
}

// Defaults.
const (
	DefaultBackoffMin  = 100 * time.Millisecond
	DefaultBackoffMax  = 5 * time.Second
	DefaultDialTimeout = time.Second
	writeTimeout       = 10 * time.Second
)

// Adaptor is a socket adaptor in client or server role.
type Adaptor struct {
	name     string
	addr     string
	server   bool
	maxline  int
	maxconns int
	// connEvents: deliver Connected and Disconnected events.
	connEvents bool
	log        *zap.Logger
	tune       adaptors.Tuning
	stats      adaptors.Counters

	ctx    context.Context
	cancel context.CancelFunc
	sink   adaptors.Sink
	wg     sync.WaitGroup

	attempts atomic.Int64 // connection attempts of a client

	mu     sync.Mutex
	conns  map[*conn]struct{}
	list   atomic.Pointer[[]*conn] // a copy of conns for Send, replaced on change
	ln     net.Listener
	closed bool

	// held is the connections with output held until Flush; nil when
	// the sink does not call Flush.
	held *adaptors.Held
}

// New builds a socket adaptor from its attributes.
func New(cfg adaptors.Config) (adaptors.Adaptor, error) {
	a := &Adaptor{name: cfg.Name, log: cfg.Log, tune: cfg.Tuning, conns: map[*conn]struct{}{}, connEvents: cfg.Connections}
	if a.log == nil {
		a.log = zap.NewNop()
	}
	addr, port, err := cfg.Address()
	if err != nil {
		return nil, err
	}
	a.addr = addr
	switch cfg.Attrs["role"] {
	case "", "client":
		if port == 0 {
			return nil, errors.New("a client needs a port to connect to")
		}
	case "server":
		a.server = true
	default:
		return nil, fmt.Errorf("role %q is not client or server", cfg.Attrs["role"])
	}
	if a.maxline, err = cfg.PositiveInt("maxline", adaptors.DefaultMaxLine); err != nil {
		return nil, err
	}
	if a.maxconns, err = cfg.PositiveInt("maxconns", adaptors.DefaultMaxConns); err != nil {
		return nil, err
	}
	if a.tune.BackoffMin <= 0 {
		a.tune.BackoffMin = DefaultBackoffMin
	}
	if a.tune.BackoffMax <= 0 {
		a.tune.BackoffMax = DefaultBackoffMax
	}
	if a.tune.DialTimeout <= 0 {
		a.tune.DialTimeout = DefaultDialTimeout
	}
	return a, nil
}

// Name returns the adaptor's name.
func (a *Adaptor) Name() string { return a.name }

// Stats returns the adaptor's connection and rejection counts.
func (a *Adaptor) Stats() adaptors.Stats { return a.stats.Snapshot() }

// Addr returns the listening address of a server (the chosen port when 0
// was declared), or the target of a client.
func (a *Adaptor) Addr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ln != nil {
		return a.ln.Addr().String()
	}
	return a.addr
}

// Open listens (server) or makes a first connection attempt (client).
func (a *Adaptor) Open(ctx context.Context, sink adaptors.Sink) error {
	a.ctx, a.cancel = context.WithCancel(context.WithoutCancel(ctx))
	a.sink = sink
	a.held = adaptors.NewHeld(sink)
	if a.server {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", a.addr)
		if err != nil {
			return err
		}
		ln = adaptors.Limit(ln, a.maxconns, &a.stats, a.log)
		a.mu.Lock()
		a.ln = ln
		a.mu.Unlock()
		a.log.Info("listening", zap.String("addr", ln.Addr().String()))
		a.wg.Add(1)
		go a.accept(ln)
		return nil
	}
	first := a.dial(a.tune.DialTimeout)
	if first == nil {
		a.log.Warn("not connected; retrying in the background", zap.String("addr", a.addr))
	}
	a.wg.Add(1)
	go a.client(first)
	return nil
}

func (a *Adaptor) accept(ln net.Listener) {
	defer a.wg.Done()
	delay := 5 * time.Millisecond
	for {
		c, err := ln.Accept()
		if err != nil {
			if a.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			a.log.Warn("accept failed", zap.Error(err))
			if !a.sleep(delay) {
				return
			}
			delay = min(delay*2, time.Second)
			continue
		}
		delay = 5 * time.Millisecond
		if cn := a.start(c); cn != nil {
			a.log.Info("client connected", zap.String("peer", cn.peer))
		}
	}
}

// sleep waits d or until the adaptor closes; it reports whether to go on.
func (a *Adaptor) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-a.ctx.Done():
		return false
	}
}

func (a *Adaptor) dial(timeout time.Duration) *conn {
	a.attempts.Add(1)
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(a.ctx, "tcp", a.addr)
	if err != nil {
		return nil
	}
	cn := a.start(adaptors.Counted(c, &a.stats))
	if cn != nil {
		a.log.Info("connected", zap.String("peer", cn.peer))
	}
	return cn
}

// client keeps one connection up, reconnecting with exponential back-off.
func (a *Adaptor) client(cn *conn) {
	defer a.wg.Done()
	backoff := a.tune.BackoffMin
	failing := cn == nil
	for {
		if cn != nil {
			select {
			case <-cn.done:
				a.log.Warn("disconnected; reconnecting", zap.String("peer", cn.peer))
				backoff = a.tune.BackoffMin
				failing = false
			case <-a.ctx.Done():
				return
			}
		}
		if !a.sleep(backoff) {
			return
		}
		backoff = min(backoff*2, a.tune.BackoffMax)
		cn = a.dial(a.tune.DialTimeout)
		if cn == nil && !failing {
			a.log.Warn("connection failed; retrying with back-off", zap.String("addr", a.addr), zap.Duration("max_delay", a.tune.BackoffMax))
			failing = true
		}
	}
}

// conn is one TCP connection with its bounded output queue.
type conn struct {
	a    *Adaptor
	c    net.Conn
	peer string
	out  *adaptors.Outbox
	w    *adaptors.Writer // writes out
	done chan struct{}    // closed when the connection is closed
	// drain is closed when the adaptor closes: the writer sends what is
	// queued, then closes the connection.
	drain chan struct{}
	dOnce sync.Once
	// inputEnded is set once the peer finished sending: a failed write
	// then means it is gone, not a fault.
	inputEnded atomic.Bool
	once       sync.Once
	warned     bool // a repaired line was logged (reader goroutine)
	// The reading: lr and baton are set before the first line, leave
	// reports the peer's departure once the reading ends.
	lr    *adaptors.LineReader
	baton *adaptors.Baton
	leave func()
}

func (a *Adaptor) start(c net.Conn) *conn {
	cn := &conn{a: a, c: c, peer: c.RemoteAddr().String(), out: adaptors.NewOutbox(a.tune), done: make(chan struct{}), drain: make(chan struct{})}
	cn.w = adaptors.NewWriter(c, cn.out, a.held, adaptors.AppendLine)
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		c.Close()
		return nil
	}
	a.conns[cn] = struct{}{}
	a.snapshotLocked()
	a.wg.Add(2)
	a.mu.Unlock()
	go cn.read()
	go cn.write()
	return cn
}

func (cn *conn) String() string { return cn.a.name + " " + cn.peer }

// Peer returns the peer's address.
func (cn *conn) Peer() string { return cn.peer }

// Send queues text for this peer; a full queue disconnects it.
func (cn *conn) Send(text string) error {
	if cn.closed() {
		return adaptors.ErrNotConnected
	}
	if cn.w.Send(text) {
		return nil
	}
	cn.a.log.Error("peer is not reading; disconnected", zap.String("peer", cn.peer), zap.Int("queue_bytes", cn.out.Max()))
	cn.a.stats.SlowPeer.Add(1)
	cn.close()
	return adaptors.ErrQueueFull
}

// lingerQuiet is how long a connection whose peer finished sending stays
// open with nothing sent to it before it is closed, in client role (the
// server half-closed), or when the behavior cannot tell that the peer's
// input was handled (a sink that is not an adaptors.HandledSink).
const lingerQuiet = time.Second

// lingerPoll is how often a connection whose peer finished sending looks
// whether what was queued for it has been written.
const lingerPoll = 5 * time.Millisecond

// linger keeps a connection whose peer ended its input open while there
// is something to wait for: the behavior handling the lines it sent, then
// the replies to them being written. Then the peer has left: the
// connection is closed, and ondisconnect runs at once (a client that
// reads its greeting and closes is gone before the next client's line).
// A reply the behavior makes later (a timeout's) no longer reaches it.
// linger returns when the connection is closed (by it, a failed write, a
// hang-up or the adaptor's end).
func (cn *conn) linger() {
	hs, ok := cn.a.sink.(adaptors.HandledSink)
	if !ok || !cn.a.server {
		// In client role the connection to the server is seat's own: it
		// is closed only once quiet (a reply from a timeout still goes
		// to a server that half-closed), and then dialled again.
		cn.lingerQuietly()
		return
	}
	ctx, cancel := context.WithCancel(cn.a.ctx)
	defer cancel()
	go func() { // the wait ends with the connection
		select {
		case <-cn.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := hs.Handled(ctx, cn); err != nil && ctx.Err() == nil {
		cn.close() // the behavior stopped: nothing will answer
		return
	}
	if cn.waitUntil(lingerPoll, func(time.Time) bool { return cn.w.Written() }) {
		cn.close()
	}
}

// waitUntil looks at done every period until it is true, and reports
// whether it was; false when the connection closed first (a hang-up's
// writer closes it once it has sent what is queued).
func (cn *conn) waitUntil(period time.Duration, done func(now time.Time) bool) bool {
	t := time.NewTicker(period)
	defer t.Stop()
	for now := time.Now(); !done(now); {
		select {
		case <-cn.done:
			return false
		case <-cn.drain:
			<-cn.done
			return false
		case now = <-t.C:
		}
	}
	return true
}

// lingerQuietly closes the connection once nothing was queued or waited
// to be written for lingerQuiet.
func (cn *conn) lingerQuietly() {
	last, _ := cn.out.Quiet()
	since := time.Now()
	quiet := func(now time.Time) bool {
		if added, _ := cn.out.Quiet(); added != last || !cn.w.Written() {
			last, since = added, now
			return false
		}
		return now.Sub(since) >= lingerQuiet
	}
	if cn.waitUntil(lingerQuiet/4, quiet) {
		cn.close()
	}
}

// Hangup sends what is queued for the peer, then closes the connection
// (adaptors.Hanger).
func (cn *conn) Hangup() { cn.dOnce.Do(func() { close(cn.drain) }) }

// closed reports whether the connection has been closed.
func (cn *conn) closed() bool {
	select {
	case <-cn.done:
		return true
	default:
		return false
	}
}

func (cn *conn) close() {
	cn.once.Do(func() {
		close(cn.done)
		cn.c.Close()
		cn.a.mu.Lock()
		delete(cn.a.conns, cn)
		cn.a.snapshotLocked()
		cn.a.mu.Unlock()
	})
}

func (cn *conn) read() {
	defer cn.a.wg.Done()
	// The peer's arrival comes before its first line, its departure after
	// its last and after the connection is closed (a reply to it fails).
	leave, ok := adaptors.Arrive(cn.a.ctx, cn.a.sink, cn.a.connEvents, cn.a.name, cn)
	if !ok {
		cn.close()
		return
	}
	cn.leave = leave
	cn.lr = adaptors.NewLineReader(cn.c, cn.a.maxline)
	cn.baton = adaptors.ReadOn(&cn.a.wg, cn.readLines)
	cn.readLines()
}

// Baton is the connection's reading (adaptors.BatonHolder).
func (cn *conn) Baton() *adaptors.Baton { return cn.baton }

// readLines reads and delivers the connection's lines until it ends, then
// closes it and reports the peer's departure; or returns early when the
// reading was passed to another goroutine while this one ran the
// behavior.
func (cn *conn) readLines() {
	leg := cn.baton.Take()
	lr := cn.lr
	bs, batching := cn.a.sink.(adaptors.BatchSink)
	event := func(line string) adaptors.Event {
		if lr.Repaired() {
			cn.a.stats.NoteRepair(cn.a.log, cn.peer, &cn.warned)
		}
		return adaptors.Event{Source: cn.a.name, Text: line, From: cn}
	}
	for {
		line, err := lr.Next()
		switch {
		case err == nil && batching && lr.Ready():
			// More lines are already here: hand them over together.
			batch := append(adaptors.NewBatch(), event(line))
			for len(batch) < adaptors.BatchCap && lr.Ready() {
				if line, err = lr.Next(); err != nil {
					break
				}
				batch = append(batch, event(line))
			}
			leg.Deliver()
			derr := bs.DeliverBatch(cn.a.ctx, batch)
			if !leg.Delivered() {
				return // the reading went on on another goroutine
			}
			if derr != nil {
				err = nil // the behavior stopped taking events
				break
			}
			if err == nil {
				continue
			}
		case err == nil:
			leg.Deliver()
			derr := cn.a.sink.Deliver(cn.a.ctx, event(line))
			if !leg.Delivered() {
				return
			}
			if derr != nil {
				break
			}
			continue
		}
		cn.ended(line, err)
		cn.close()
		cn.leave()
		return
	}
}

// ended logs why the connection's input ended (err nil: the behavior
// stopped taking events).
func (cn *conn) ended(line string, err error) {
	switch {
	case err == nil:
	case errors.Is(err, adaptors.ErrLineTooLong):
		cn.a.log.Error("line too long; connection closed", zap.String("peer", cn.peer), zap.Int("maxline", cn.a.maxline))
		cn.a.stats.LineTooLong.Add(1)
	case errors.Is(err, adaptors.ErrPartialLine):
		cn.a.log.Warn("peer closed inside a line; partial line dropped", zap.String("peer", cn.peer), zap.Int("bytes", len(line)))
		cn.a.stats.PartialLine.Add(1)
	case errors.Is(err, io.EOF):
		// The peer finished sending (printf 'hi\n' | nc): its input
		// ends, not its connection. Replies still go to it until it
		// is quiet, or gone (a write fails).
		cn.inputEnded.Store(true)
		cn.linger()
		if cn.a.server {
			cn.a.log.Info("client disconnected", zap.String("peer", cn.peer))
		}
	case errors.Is(err, net.ErrClosed):
		if cn.a.server {
			cn.a.log.Info("client disconnected", zap.String("peer", cn.peer))
		}
	default:
		if !cn.closed() {
			cn.a.log.Warn("read failed; connection closed", zap.String("peer", cn.peer), zap.Error(err))
		}
	}
}

// write sends what is queued, everything queued at once per flush, when
// Flush could not: the peer was slow to read, or Flush was not called.
func (cn *conn) write() {
	defer cn.a.wg.Done()
	defer cn.close()
	flush := func(timeout time.Duration) bool {
		err := cn.w.Write(timeout, nil)
		// A peer that ended its input and then closed is simply gone (the
		// reader logs it); else the reason was logged where the
		// connection was closed.
		if err != nil && !cn.closed() && !(cn.inputEnded.Load() && (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET))) {
			cn.a.log.Warn("write failed; connection closed", zap.String("peer", cn.peer), zap.Error(err))
		}
		return err == nil
	}
	for {
		select {
		case <-cn.done:
			return
		case <-cn.drain:
			cn.out.Close()
			flush(time.Second)
			return
		case <-cn.out.Wait():
			if !flush(writeTimeout) {
				return
			}
		}
	}
}

// snapshotLocked refreshes the connection list Send reads; a.mu is held.
func (a *Adaptor) snapshotLocked() {
	list := make([]*conn, 0, len(a.conns))
	for cn := range a.conns {
		list = append(list, cn)
	}
	a.list.Store(&list)
}

// Send queues text for every connected peer. It never blocks.
func (a *Adaptor) Send(text string) error {
	var conns []*conn
	if p := a.list.Load(); p != nil {
		conns = *p
	}
	if len(conns) == 0 {
		if a.server {
			a.log.Debug("no client connected; message dropped")
			return nil
		}
		return adaptors.ErrNotConnected
	}
	for _, cn := range conns {
		_ = cn.Send(text)
	}
	return nil
}

// Flush starts writing what was sent since the last Flush.
func (a *Adaptor) Flush() { a.held.Flush() }

// Close stops listening or reconnecting, closes every connection and waits
// for the adaptor's goroutines.
func (a *Adaptor) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		a.wg.Wait()
		return nil
	}
	a.closed = true
	ln := a.ln
	conns := make([]*conn, 0, len(a.conns))
	for cn := range a.conns {
		conns = append(conns, cn)
	}
	a.mu.Unlock()
	if a.cancel != nil {
		a.cancel()
	}
	if ln != nil {
		ln.Close()
	}
	for _, cn := range conns {
		cn.Hangup()
	}
	a.wg.Wait()
	return nil
}

var (
	_ adaptors.Flusher   = (*Adaptor)(nil)
	_ adaptors.Adaptor   = (*Adaptor)(nil)
	_ adaptors.Addresser = (*Adaptor)(nil)
	_ adaptors.Conn      = (*conn)(nil)
)

// Keep serves the next version of the behavior after a reload, with its
// connections (adaptors.Keeper); nothing of it depends on the behavior.
func (a *Adaptor) Keep(adaptors.Config) {}

package rtc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// The interface types seat's data ports speak.
const (
	// CorbaCDR is OpenRTM's own: InPortCdr::put, OutPortCdr::get.
	CorbaCDR = "corba_cdr"
	// DataService is the OMG standard's: DataPushService::push,
	// DataPullService::pull.
	DataService = "data_service"
)

// connStats counts what went through a connection.
type connStats struct {
	sent, received, dropped, failed atomic.Uint64
}

// Stats are a connection's counts: values sent or received, writes
// dropped because the peer could not keep up (its queue was full), and
// calls that failed.
type Stats struct {
	Sent, Received, Dropped, Failed uint64
}

func (s Stats) add(o Stats) Stats {
	return Stats{Sent: s.Sent + o.Sent, Received: s.Received + o.Received, Dropped: s.Dropped + o.Dropped, Failed: s.Failed + o.Failed}
}

// Stats returns the connection's counts.
func (cn *Conn) Stats() Stats {
	return Stats{Sent: cn.stats.sent.Load(), Received: cn.stats.received.Load(), Dropped: cn.stats.dropped.Load(), Failed: cn.stats.failed.Load()}
}

func (cn *Conn) prop(name, def string) string {
	if v, ok := cn.prof.Properties.String(name); ok && v != "" {
		return v
	}
	return def
}

// publish adds to the connector profile what this port offers its
// peers: an InPort's InPortCdr (or DataPushService) reference for push,
// an OutPort's OutPortCdr (or DataPullService) reference for pull.
func (cn *Conn) publish() error {
	p := cn.port
	cn.Interface = cn.prop("dataport.interface_type", CorbaCDR)
	cn.Flow = cn.prop("dataport.dataflow_type", "push")
	cn.Subscription = cn.prop("dataport.subscription_type", "flush")
	if cn.Interface != CorbaCDR && cn.Interface != DataService {
		return fmt.Errorf("interface type %q is not supported (seat speaks corba_cdr and data_service)", cn.Interface)
	}
	if cn.Flow != "push" && cn.Flow != "pull" {
		return fmt.Errorf("dataflow type %q is not supported (push or pull)", cn.Flow)
	}
	if cn.Flow == "push" && cn.Subscription != "flush" && cn.Subscription != "new" && cn.Subscription != "periodic" {
		return fmt.Errorf("subscription type %q is not supported (flush, new or periodic)", cn.Subscription)
	}
	props := &cn.prof.Properties
	if !p.spec.In {
		// seat writes little-endian CDR, as OpenRTM 2.1's C++ OutPort
		// does whatever the connector says.
		props.Set("dataport.serializer.cdr.endian", "little")
		props.Set("dataport.outport", "")
		cn.out = newSender(cn)
	} else {
		props.Set("dataport.inport", "")
	}
	var sv corba.Servant
	var id, iface, dir string
	switch {
	case p.spec.In && cn.Flow == "push":
		dir = "inport"
		sv = &inPortServant{cn: cn}
		id, iface = IDInPortCdr, "InPortCdr"
		if cn.Interface == DataService {
			id, iface = IDDataPushService, "DataPushService"
		}
	case !p.spec.In && cn.Flow == "pull":
		dir = "outport"
		sv = &outPortServant{cn: cn}
		id, iface = IDOutPortCdr, "OutPortCdr"
		if cn.Interface == DataService {
			id, iface = IDDataPullService, "DataPullService"
		}
	default:
		return nil
	}
	key := []byte(fmt.Sprintf("%s/%s/%s", p.key, dir, cn.prof.ID))
	ior, err := p.c.server.Register(key, sv)
	if err != nil {
		return err
	}
	cn.keys = append(cn.keys, key)
	prefix := "dataport." + cn.Interface + "." + dir
	props.Set(prefix+"_ior", ior.String())
	props.SetObject(prefix+"_ref", id, iface, ior)
	return nil
}

// subscribe takes what the peers published: the reference an OutPort
// pushes to, or the one an InPort pulls from.
func (cn *Conn) subscribe() error {
	p := cn.port
	var dir, id string
	switch {
	case !p.spec.In && cn.Flow == "push":
		dir = "inport"
	case p.spec.In && cn.Flow == "pull":
		dir = "outport"
	default:
		return nil
	}
	prefix := "dataport." + cn.Interface + "." + dir
	var ior *corba.IOR
	if a := cn.prof.Properties.Get(prefix + "_ref"); a != nil {
		ior, _ = a.Value.(*corba.IOR)
	}
	if ior == nil || ior.IsNil() {
		s, _ := cn.prof.Properties.String(prefix + "_ior")
		var err error
		if ior, err = corba.ParseIOR(s); err != nil {
			return fmt.Errorf("the peer published no usable %s_ior: %w", prefix, err)
		}
	}
	target := p.c.client.Object(ior)
	ctx, cancel := context.WithCancel(context.Background())
	cn.cancel, cn.done = cancel, make(chan struct{})
	if p.spec.In {
		id = "get"
		if cn.Interface == DataService {
			id = "pull"
		}
		go cn.poll(ctx, target, id)
		return nil
	}
	cn.out.target, cn.out.op = target, "put"
	if cn.Interface == DataService {
		cn.out.op = "push"
	}
	go cn.out.run(ctx)
	return nil
}

// unpublish stops the connection's servants and goroutines.
func (cn *Conn) unpublish() {
	for _, k := range cn.keys {
		cn.port.c.server.Unregister(k)
	}
	cn.keys = nil
	if cn.cancel != nil {
		cn.cancel()
		<-cn.done
	}
	if cn.out != nil {
		cn.out.close()
	}
}

// Write sends one value (its bare CDR) on every connection of an
// OutPort, without waiting: each connection queues it for its peer
// (flush), keeps the newest (new, periodic), or holds it for the peer's
// next get (pull). It returns how many connections took it.
func (p *Port) Write(payload []byte) int {
	n := 0
	for _, cn := range p.Conns() {
		if cn.out != nil && cn.out.offer(payload) {
			n++
		}
	}
	return n
}

// sender holds what an OutPort's connection has not sent yet, and sends
// it: one value at a time, in order. A value written while nothing is on
// its way goes out at once, from the writer's goroutine, when that
// cannot wait (a small value on a connection already made and free);
// the rest is left to the connection's goroutine.
type sender struct {
	cn     *Conn
	mu     sync.Mutex
	queue  [][]byte // flush: in order; new, periodic, pull: the newest
	bytes  int
	busy   bool // a value is on its way
	wake   chan struct{}
	closed bool
	// target and op are what push calls (set before the connection is
	// listed, so before any write).
	target *corba.Object
	op     string
}

// inlineMax is the largest value written from the writer's goroutine: a
// larger one could fill the socket's buffer and wait.
const inlineMax = 64 << 10

func newSender(cn *Conn) *sender { return &sender{cn: cn, wake: make(chan struct{}, 1)} }

// offer queues a payload; false when it was dropped.
func (s *sender) offer(payload []byte) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	if s.cn.Flow == "push" && s.cn.Subscription == "flush" {
		if s.bytes+len(payload) > s.cn.port.spec.QueueBytes && len(s.queue) > 0 {
			s.mu.Unlock()
			s.cn.stats.dropped.Add(1)
			return false
		}
		s.queue = append(s.queue, payload)
		s.bytes += len(payload)
	} else {
		if len(s.queue) > 0 && s.cn.Flow == "push" {
			s.cn.stats.dropped.Add(1) // replaced before it went
		}
		s.queue = append(s.queue[:0], payload)
		s.bytes = len(payload)
	}
	if s.busy {
		// What is on its way takes this when it is answered.
		s.mu.Unlock()
		return true
	}
	if s.target != nil && s.cn.Subscription != "periodic" && len(s.queue) == 1 && len(payload) <= inlineMax {
		s.busy = true
		s.queue, s.bytes = s.queue[:0], 0
		s.mu.Unlock()
		if !s.start(payload) {
			s.putBack(payload) // it could not go at once: for the goroutine
		}
		return true
	}
	s.mu.Unlock()
	s.signal()
	return true
}

// putBack returns a payload that did not go to the head of the queue,
// for the goroutine to send.
func (s *sender) putBack(payload []byte) {
	s.mu.Lock()
	s.queue = append([][]byte{payload}, s.queue...)
	s.bytes += len(payload)
	s.busy = false
	s.mu.Unlock()
	s.signal()
}

func (s *sender) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// start sends a payload without waiting for the answer, if it can at
// once; the answer is counted when it comes.
func (s *sender) start(payload []byte) bool {
	err := s.target.StartCall(s.op, func(e *corba.Encoder) error { e.WriteOctetSeq(payload); return nil },
		s.cn.port.c.opts.CallTimeout, true, func(d *corba.Decoder, err error) {
			var st PortStatus
			if err == nil {
				st = PortStatus(d.ReadULong())
				err = d.Err()
			}
			if errors.Is(err, corba.ErrCloseConnection) {
				// The peer closed the connection before taking the
				// call (GIOP: not processed): the goroutine sends it
				// again, on a new connection.
				s.putBack(payload)
				return
			}
			if s.account(st, err) {
				return
			}
			// The peer has answered, so it reads: the next value goes
			// from here at once, when it can.
			s.mu.Lock()
			s.busy = false
			if len(s.queue) == 0 || s.closed {
				s.mu.Unlock()
				return
			}
			next := s.queue[0]
			if len(next) > inlineMax {
				s.mu.Unlock()
				s.signal()
				return
			}
			s.queue = s.queue[1:]
			s.bytes -= len(next)
			s.busy = true
			s.mu.Unlock()
			if !s.start(next) {
				s.putBack(next)
			}
		})
	return err == nil
}

// take returns what is queued, emptying the queue.
func (s *sender) take() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue, s.bytes = nil, 0
	return q
}

// next takes the first payload for the goroutine to send, unless one is
// on its way already.
func (s *sender) next() ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy || len(s.queue) == 0 {
		return nil, false
	}
	p := s.queue[0]
	s.queue = s.queue[1:]
	s.bytes -= len(p)
	s.busy = true
	return p, true
}

func (s *sender) close() {
	s.mu.Lock()
	s.closed = true
	s.queue, s.bytes = nil, 0
	s.mu.Unlock()
}

// run pushes what is offered to the peer until ctx ends: flush and new
// as soon as it is there, periodic at the connector's
// dataport.push_rate (Hz, 1000 by default as OpenRTM's).
func (s *sender) run(ctx context.Context) {
	defer close(s.cn.done)
	var tick <-chan time.Time
	if s.cn.Subscription == "periodic" {
		rate := 1000.0
		if _, err := fmt.Sscan(s.cn.prop("dataport.push_rate", "1000"), &rate); err != nil || rate <= 0 {
			rate = 1000
		}
		t := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer t.Stop()
		tick = t.C
	}
	for {
		if tick != nil {
			select {
			case <-ctx.Done():
				return
			case <-tick:
			}
		} else {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			}
		}
		for {
			payload, ok := s.next()
			if !ok {
				break
			}
			gone := s.push(ctx, payload)
			s.mu.Lock()
			s.busy = false
			s.mu.Unlock()
			if gone {
				return
			}
		}
	}
}

// push sends one payload and waits for the answer; true when the peer is
// gone (or the port closing) and the connection has ended.
func (s *sender) push(ctx context.Context, payload []byte) bool {
	var st PortStatus
	var err error
	for try := 0; try < 2; try++ {
		cctx, cancel := s.cn.port.callCtx(ctx)
		err = s.target.Invoke(cctx, s.op, func(e *corba.Encoder) error { e.WriteOctetSeq(payload); return nil },
			func(d *corba.Decoder) error { st = PortStatus(d.ReadULong()); return d.Err() })
		cancel()
		if !errors.Is(err, corba.ErrCloseConnection) {
			break // else not processed: once more, on a new connection
		}
	}
	if ctx.Err() != nil {
		return true
	}
	return s.account(st, err)
}

// account counts one push's outcome; true when it found the peer gone,
// and ended the connection.
func (s *sender) account(st PortStatus, err error) bool {
	cn := s.cn
	switch {
	case err == nil && st == PortOK:
		cn.stats.sent.Add(1)
	case err == nil:
		// BUFFER_FULL and the like: the peer took the call, not the
		// value.
		cn.stats.dropped.Add(1)
	case PeerGone(err):
		cn.stats.failed.Add(1)
		go cn.port.remove(cn.prof.ID, err.Error())
		return true
	default:
		cn.stats.failed.Add(1)
		if !cn.warned.Swap(true) {
			cn.port.c.log.Warn("OpenRTM write failed (logged once per connection; each is counted)", zap.Stringer("connection", cn), zap.Error(err))
		}
	}
	return false
}

// PeerGone reports whether an error means the peer's object is gone,
// as OpenRTM's CONNECTION_LOST: its process does not answer on its
// address, or no longer has the object.
func PeerGone(err error) bool {
	if errors.Is(err, corba.ErrCloseConnection) {
		return false // the peer closed an idle connection: it is there
	}
	var ce *corba.ConnError
	if errors.As(err, &ce) {
		return true
	}
	var se *corba.SystemException
	if errors.As(err, &se) {
		switch se.Name() {
		case "OBJECT_NOT_EXIST", "TRANSIENT", "COMM_FAILURE":
			return true
		}
	}
	return false
}

// poll asks an OutPort connected by pull for data every PullInterval.
func (cn *Conn) poll(ctx context.Context, target *corba.Object, op string) {
	defer close(cn.done)
	t := time.NewTicker(cn.port.spec.PullInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := cn.port.callCtx(ctx)
		var st PortStatus
		var payload []byte
		err := target.Invoke(cctx, op, nil, func(d *corba.Decoder) error {
			st = PortStatus(d.ReadULong())
			payload = d.ReadOctetSeq("CdrData")
			return d.Err()
		})
		cancel()
		switch {
		case err == nil && st == PortOK:
			cn.stats.received.Add(1)
			cn.port.spec.Receive(payload, cn)
		case err == nil:
		case ctx.Err() != nil:
			return
		case PeerGone(err):
			cn.stats.failed.Add(1)
			go cn.port.remove(cn.prof.ID, err.Error())
			return
		default:
			cn.stats.failed.Add(1)
		}
	}
}

// inPortServant is an InPort's OpenRTM::InPortCdr (put) or
// RTC::DataPushService (push) for one connection.
type inPortServant struct{ cn *Conn }

func (s *inPortServant) RepositoryIDs() []string {
	if s.cn.Interface == DataService {
		return []string{IDDataPushService}
	}
	return []string{IDInPortCdr}
}

// Quick: a put hands its value over and answers, so it runs on the
// goroutine that read it (corba.QuickServant).
func (s *inPortServant) Quick(op string) bool { return op == "put" || op == "push" }

func (s *inPortServant) Invoke(_ context.Context, op string, args *corba.Decoder, res *corba.Encoder) error {
	if (op != "put" || s.cn.Interface != CorbaCDR) && (op != "push" || s.cn.Interface != DataService) {
		return corba.BadOperation()
	}
	payload := args.ReadOctetSeq("CdrData")
	if err := args.Err(); err != nil {
		return err
	}
	s.cn.stats.received.Add(1)
	res.WriteULong(uint32(s.cn.port.spec.Receive(payload, s.cn)))
	return nil
}

// outPortServant is an OutPort's OpenRTM::OutPortCdr (get) or
// RTC::DataPullService (pull) for one connection: it answers with the
// newest value written since the last call, or BUFFER_EMPTY.
type outPortServant struct{ cn *Conn }

func (s *outPortServant) RepositoryIDs() []string {
	if s.cn.Interface == DataService {
		return []string{IDDataPullService}
	}
	return []string{IDOutPortCdr}
}

func (s *outPortServant) Invoke(_ context.Context, op string, _ *corba.Decoder, res *corba.Encoder) error {
	if (op != "get" || s.cn.Interface != CorbaCDR) && (op != "pull" || s.cn.Interface != DataService) {
		return corba.BadOperation()
	}
	q := s.cn.out.take()
	if len(q) == 0 {
		res.WriteULong(uint32(BufferEmpty))
		res.WriteOctetSeq(nil)
		return nil
	}
	s.cn.stats.sent.Add(1)
	res.WriteULong(uint32(PortOK))
	res.WriteOctetSeq(q[len(q)-1])
	return nil
}

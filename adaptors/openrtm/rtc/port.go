package rtc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// PortSpec describes a data port.
type PortSpec struct {
	// Name is the port's name in its component ("in"); its profile's
	// name is INSTANCE.NAME.
	Name string
	// DataType is the repository id of its data type
	// ("IDL:RTC/TimedString:1.0"), as OpenRTM 1.2 and later publish
	// dataport.data_type.
	DataType string
	// In makes an InPort; Receive is then told each payload that
	// arrives (the bare CDR of one value), on the goroutine of the call
	// that brought it, and says what the peer is answered. The payload
	// is the callee's only during the call.
	In      bool
	Receive func(payload []byte, conn *Conn) PortStatus
	// PullInterval is how often an InPort connected by pull asks for
	// data (100 ms when 0).
	PullInterval time.Duration
	// QueueBytes bounds what an OutPort holds for each connection not
	// yet sent (16 MiB when 0): a write that does not fit is dropped
	// and counted.
	QueueBytes int
	// OnConnection is told when a connection is made and when it ends
	// (disconnected, or lost with the peer), and when a peer's port was
	// refused.
	OnConnection func(ev ConnEvent)
}

// ConnEvent is a connection made or ended, or refused.
type ConnEvent struct {
	Conn *Conn
	Up   bool
	// Reason says why a connection ended: "" when disconnected by a
	// port, else what went wrong with the peer.
	Reason string
	// Refused is set instead when a connection a peer or a tool asked
	// for was refused because the ports cannot connect (Conn is nil).
	Refused *IncompatibleError
}

// Port is a data port: an RTC::PortService and its connections.
type Port struct {
	c    *Component
	spec PortSpec
	name string // INSTANCE.NAME
	key  []byte
	ref  *corba.IOR

	mu sync.Mutex
	// conns is replaced, never changed in place, so that Conns hands
	// out the slice itself.
	conns []*Conn
	// closed is set when the port ends: a connection being made then is
	// undone, not kept.
	closed bool
	// gone are the counts of the connections that have ended.
	gone Stats
}

// Conn is one connection of a port: a connector, in OpenRTM's words.
type Conn struct {
	port *Port
	prof *ConnectorProfile
	// Peer names the other ports ("ConsoleIn0.out"), as their profiles
	// say.
	Peer string
	// Interface and Flow are the connector's dataport.interface_type
	// and dataflow_type; Subscription its subscription_type (push).
	Interface, Flow, Subscription string
	keys                          [][]byte // servants registered for it
	out                           *sender  // an OutPort's push or pull side
	cancel                        context.CancelFunc
	done                          chan struct{}
	stats                         connStats
	warned                        atomic.Bool // a failed write has been logged
}

// PeerRefs are the references of the connection's other ports.
func (cn *Conn) PeerRefs() []*corba.IOR {
	var refs []*corba.IOR
	for _, ref := range cn.prof.Ports {
		if !sameObject(ref, cn.port.ref) {
			refs = append(refs, ref)
		}
	}
	return refs
}

// ID is the connector id.
func (cn *Conn) ID() string { return cn.prof.ID }

// Name is the connector's name.
func (cn *Conn) Name() string { return cn.prof.Name }

// String names the connection in logs: "SimpleIO.in <- ConsoleIn0.out".
func (cn *Conn) String() string {
	arrow := " -> "
	if cn.port.spec.In {
		arrow = " <- "
	}
	return cn.port.name + arrow + cn.Peer
}

// AddPort adds a data port to the component.
func (c *Component) AddPort(spec PortSpec) (*Port, error) {
	if spec.Name == "" || strings.ContainsAny(spec.Name, "/") {
		return nil, fmt.Errorf("rtc: port name %q", spec.Name)
	}
	if spec.In && spec.Receive == nil {
		return nil, errors.New("rtc: an InPort needs Receive")
	}
	if spec.PullInterval <= 0 {
		spec.PullInterval = 100 * time.Millisecond
	}
	if spec.QueueBytes <= 0 {
		spec.QueueBytes = 16 << 20
	}
	p := &Port{c: c, spec: spec, name: c.opts.InstanceName + "." + spec.Name, key: []byte("port/" + spec.Name)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("rtc: the component is closed")
	}
	for _, q := range c.ports {
		if q.spec.Name == spec.Name {
			return nil, fmt.Errorf("rtc: %s has a port %s already", c.opts.InstanceName, spec.Name)
		}
	}
	ref, err := c.server.Register(p.key, (*portService)(p))
	if err != nil {
		return nil, err
	}
	p.ref = ref
	c.ports = append(c.ports, p)
	return p, nil
}

// Name is the port's profile name, INSTANCE.NAME.
func (p *Port) Name() string { return p.name }

// Ref is the port's PortService reference.
func (p *Port) Ref() *corba.IOR { return p.ref }

// Conns are the port's connections (the caller must not change the
// slice).
func (p *Port) Conns() []*Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conns
}

func (p *Port) portType() string {
	if p.spec.In {
		return "DataInPort"
	}
	return "DataOutPort"
}

// Profile is the port's RTC::PortProfile.
func (p *Port) Profile() *PortProfile {
	pp := &PortProfile{Name: p.name, Ref: p.ref, Owner: p.c.ref}
	for _, cn := range p.Conns() {
		pp.Connectors = append(pp.Connectors, cn.prof)
	}
	pp.Properties.Set("port.port_type", p.portType())
	pp.Properties.Set("dataport.data_type", p.spec.DataType)
	pp.Properties.Set("dataport.dataflow_type", "push,pull")
	pp.Properties.Set("dataport.interface_type", "corba_cdr,data_service")
	if p.spec.In {
		pp.Properties.Set("dataport.subscription_type", "Any")
	} else {
		pp.Properties.Set("dataport.subscription_type", "flush,new,periodic")
	}
	return pp
}

// Connect connects the port to a peer port (its PortService
// reference), as rtcon does: a connector with OpenRTM's default
// properties (corba_cdr, push, flush) overridden by props, offered to
// this port first. A peer port of another data type, or of the same
// direction, is refused with an error that says so.
func (p *Port) Connect(ctx context.Context, peer *corba.IOR, name string, props NVList) (*Conn, error) {
	pp, err := p.peerProfile(ctx, peer)
	if err != nil {
		return nil, err
	}
	if err := p.compatible(pp); err != nil {
		return nil, err
	}
	cp := &ConnectorProfile{Name: name, ID: newUUID(), Ports: []*corba.IOR{p.ref, peer}}
	if cp.Name == "" {
		cp.Name = p.name + "_" + pp.Name
	}
	cp.Properties.Set("dataport.interface_type", "corba_cdr")
	cp.Properties.Set("dataport.dataflow_type", "push")
	cp.Properties.Set("dataport.subscription_type", "flush")
	cp.Properties.Set("dataport.data_type", p.spec.DataType)
	for _, nv := range props {
		cp.Properties.SetAny(nv.Name, nv.Value)
	}
	rc, err := p.notifyConnect(ctx, cp)
	if rc != OK {
		p.undo(cp, true)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("connecting %s to %s: %s", p.name, pp.Name, rc)
	}
	for _, cn := range p.Conns() {
		if cn.ID() == cp.ID {
			return cn, nil
		}
	}
	return nil, fmt.Errorf("connecting %s to %s: the connection ended at once", p.name, pp.Name)
}

// Disconnect ends a connection as a tool's disconnect does: every port
// of it is told.
func (p *Port) Disconnect(ctx context.Context, cn *Conn) ReturnCode {
	return p.disconnect(ctx, cn.ID())
}

// close marks the port ended: connections being made are undone.
func (p *Port) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// Stats are the counts of the port's connections, those that have
// ended included.
func (p *Port) Stats() Stats {
	p.mu.Lock()
	st := p.gone
	conns := p.conns
	p.mu.Unlock()
	for _, cn := range conns {
		st = st.add(cn.Stats())
	}
	return st
}

// DisconnectAll ends every connection of the port, telling the peers.
func (p *Port) DisconnectAll(ctx context.Context) {
	for _, cn := range p.Conns() {
		p.disconnect(ctx, cn.ID())
	}
}

func (p *Port) find(id string) *Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cn := range p.conns {
		if cn.prof.ID == id {
			return cn
		}
	}
	return nil
}

func (p *Port) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.c.opts.CallTimeout)
}

// peerProfile asks a peer port for its profile.
func (p *Port) peerProfile(ctx context.Context, ref *corba.IOR) (*PortProfile, error) {
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	pp, err := portProfile(ctx, p.c.client, ref)
	if err != nil {
		return nil, fmt.Errorf("asking a peer port for its profile: %w", err)
	}
	return pp, nil
}

func portProfile(ctx context.Context, cl *corba.Client, ref *corba.IOR) (*PortProfile, error) {
	var pp *PortProfile
	err := cl.Object(ref).Invoke(ctx, "get_port_profile", nil, func(d *corba.Decoder) error {
		pp = ReadPortProfile(d)
		return d.Err()
	})
	return pp, err
}

// FindPort asks the component whose RTObject is ref for the port named
// name: its profile name ("ConsoleOut0.in"), or that name's part after
// the instance name ("in"). It returns the port's reference, or nil and
// the names of the ports the component has.
func (c *Component) FindPort(ctx context.Context, ref *corba.IOR, name string) (*corba.IOR, []string, error) {
	var ports []*corba.IOR
	err := c.client.Object(ref).Invoke(ctx, "get_ports", nil, func(d *corba.Decoder) error {
		n := d.ReadLength("port list", 8)
		for i := 0; i < n && d.Err() == nil; i++ {
			ports = append(ports, d.ReadIOR())
		}
		return d.Err()
	})
	if err != nil {
		return nil, nil, fmt.Errorf("get_ports: %w", err)
	}
	var names []string
	for _, pref := range ports {
		pp, err := portProfile(ctx, c.client, pref)
		if err != nil {
			return nil, nil, fmt.Errorf("get_port_profile: %w", err)
		}
		if pp.Name == name || strings.HasSuffix(pp.Name, "."+name) {
			return pref, nil, nil
		}
		names = append(names, pp.Name)
	}
	return nil, names, nil
}

// IncompatibleError is a connection refused because the ports cannot
// work together: another data type, the same direction, not a data port.
type IncompatibleError struct{ Msg string }

func (e *IncompatibleError) Error() string { return e.Msg }

// compatible says why a data port cannot be connected to this one:
// another data type, or the same direction. OpenRTM itself connects
// them and delivers what the reader cannot make sense of.
func (p *Port) compatible(pp *PortProfile) *IncompatibleError {
	pt, _ := pp.Properties.String("port.port_type")
	if pt != "DataInPort" && pt != "DataOutPort" {
		return &IncompatibleError{fmt.Sprintf("%s is not a data port (port.port_type %q)", pp.Name, pt)}
	}
	if pt == p.portType() {
		return &IncompatibleError{fmt.Sprintf("%s and %s are both %ss: connect an OutPort to an InPort", p.name, pp.Name, pt)}
	}
	dt, _ := pp.Properties.String("dataport.data_type")
	if dt != "" && !SameDataType(dt, p.spec.DataType) {
		return &IncompatibleError{fmt.Sprintf("%s carries %s and %s carries %s: a connection would deliver what neither side can read", p.name, shortType(p.spec.DataType), pp.Name, shortType(dt))}
	}
	return nil
}

// SameDataType compares data types as OpenRTM versions name them:
// "IDL:RTC/TimedString:1.0" (1.2 and later), "RTC::TimedString",
// "TimedString" (1.1). Names without a module match by their last part.
func SameDataType(a, b string) bool {
	na, nb := normType(a), normType(b)
	if na == nb {
		return true
	}
	if !strings.Contains(na, "/") || !strings.Contains(nb, "/") {
		return lastPart(na) == lastPart(nb)
	}
	return false
}

func normType(s string) string {
	s = strings.TrimPrefix(s, "IDL:")
	if i := strings.LastIndexByte(s, ':'); i > 0 && !strings.HasSuffix(s[:i], ":") {
		s = s[:i]
	}
	s = strings.ReplaceAll(s, "::", "/")
	return strings.ReplaceAll(s, ".", "/")
}

func lastPart(s string) string { return s[strings.LastIndexByte(s, '/')+1:] }

// shortType is a data type as users write it: "RTC::TimedString".
func shortType(s string) string { return strings.ReplaceAll(normType(s), "/", "::") }

// indexOf is the position of this port in a connector's ports, or -1.
func (p *Port) indexOf(cp *ConnectorProfile) int {
	for i, ref := range cp.Ports {
		if sameObject(ref, p.ref) {
			return i
		}
	}
	return -1
}

// connect is PortService::connect: the first port of the profile is
// notified, and carries on.
func (p *Port) connect(ctx context.Context, cp *ConnectorProfile) ReturnCode {
	if len(cp.Ports) == 0 {
		return BadParameter
	}
	ours := cp.ID == ""
	if ours {
		cp.ID = newUUID()
	} else if p.find(cp.ID) != nil {
		p.c.log.Warn("OpenRTM connection refused", zap.String("port", p.name), zap.String("connector", cp.Name),
			zap.String("error", "the port has a connection "+cp.ID+" already"))
		return PreconditionNotMet
	}
	var rc ReturnCode
	var err error
	if sameObject(cp.Ports[0], p.ref) {
		rc, err = p.notifyConnect(ctx, cp)
	} else if rc, err = p.remoteNotifyConnect(ctx, cp.Ports[0], cp); err != nil {
		rc = Error
	}
	if rc != OK {
		if err != nil {
			p.c.log.Warn("OpenRTM connection refused", zap.String("port", p.name), zap.String("connector", cp.Name), zap.Error(err))
		}
		// As OpenRTM's PortBase::connect: the ports that took the
		// connection before it failed let it go.
		p.undo(cp, ours)
	}
	return rc
}

// undo tells every port of a connection that failed to let it go
// (notify_disconnect; an unknown id is nothing to them), within a
// second, side by side; and once more after the call time limit, for a
// peer whose answer came too late (its notify_connect went through
// after this side gave up), when seat made its id up: a tool's own id
// may be used again at once (RTSystemEditor restoring a system).
func (p *Port) undo(cp *ConnectorProfile, ours bool) {
	p.undoNow(cp)
	if ours {
		time.AfterFunc(2*p.c.opts.CallTimeout, func() { p.undoNow(cp) })
	}
}

func (p *Port) undoNow(cp *ConnectorProfile) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, ref := range cp.Ports {
		if sameObject(ref, p.ref) {
			p.remove(cp.ID, "")
			continue
		}
		wg.Add(1)
		go func(ref *corba.IOR) {
			defer wg.Done()
			_, _ = p.remoteNotifyDisconnect(ctx, ref, cp.ID)
		}(ref)
	}
	wg.Wait()
}

func (p *Port) remoteNotifyConnect(ctx context.Context, ref *corba.IOR, cp *ConnectorProfile) (ReturnCode, error) {
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	var rc ReturnCode
	err := p.c.client.Object(ref).Invoke(ctx, "notify_connect",
		func(e *corba.Encoder) error { return writeConnectorProfile(e, cp) },
		func(d *corba.Decoder) error {
			rc = ReturnCode(d.ReadULong())
			if got := readConnectorProfile(d); d.Err() == nil {
				*cp = *got
			}
			return d.Err()
		})
	return rc, err
}

// notifyConnect is PortService::notify_connect: this port publishes
// what its peers need (its InPortCdr's reference, say), the next port
// of the profile is notified, then this port takes what the others
// published. The error says why a connection was refused.
func (p *Port) notifyConnect(ctx context.Context, cp *ConnectorProfile) (ReturnCode, error) {
	i := p.indexOf(cp)
	if i < 0 {
		return BadParameter, fmt.Errorf("%s is not one of the connector's ports", p.name)
	}
	if p.find(cp.ID) != nil {
		return PreconditionNotMet, fmt.Errorf("%s has a connection %s already", p.name, cp.ID)
	}
	cn := &Conn{port: p, prof: cp}
	var peers []string
	for j, ref := range cp.Ports {
		if j == i {
			continue
		}
		pp, err := p.peerProfile(ctx, ref)
		if err != nil {
			return Error, err
		}
		if err := p.compatible(pp); err != nil {
			if p.spec.OnConnection != nil {
				p.spec.OnConnection(ConnEvent{Refused: err})
			}
			return BadParameter, err
		}
		peers = append(peers, pp.Name)
	}
	cn.Peer = strings.Join(peers, ", ")
	if err := cn.publish(); err != nil {
		return BadParameter, err
	}
	if i+1 < len(cp.Ports) {
		rc, err := p.remoteNotifyConnect(ctx, cp.Ports[i+1], cp)
		if err == nil && rc != OK {
			err = fmt.Errorf("%s refused the connection: %s", cn.Peer, rc)
		}
		if err != nil {
			cn.unpublish()
			return Error, err
		}
	}
	cn.prof = cp
	if err := cn.subscribe(); err != nil {
		cn.unpublish()
		return BadParameter, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		cn.unpublish()
		return PreconditionNotMet, fmt.Errorf("%s has closed", p.name)
	}
	p.conns = append(p.conns[:len(p.conns):len(p.conns)], cn)
	p.mu.Unlock()
	p.c.log.Info("OpenRTM connection made", zap.Stringer("connection", cn), zap.String("connector", cp.Name),
		zap.String("interface", cn.Interface), zap.String("flow", cn.Flow))
	if p.spec.OnConnection != nil {
		p.spec.OnConnection(ConnEvent{Conn: cn, Up: true})
	}
	return OK, nil
}

// disconnect is PortService::disconnect: the first port of the
// connector is notified, and carries on.
func (p *Port) disconnect(ctx context.Context, id string) ReturnCode {
	cn := p.find(id)
	if cn == nil {
		return BadParameter
	}
	first := cn.prof.Ports[0]
	if sameObject(first, p.ref) {
		return p.notifyDisconnect(ctx, id)
	}
	if rc, err := p.remoteNotifyDisconnect(ctx, first, id); err != nil || rc != OK {
		// The first port is gone: this one lets go by itself.
		return p.notifyDisconnect(ctx, id)
	}
	return OK
}

func (p *Port) remoteNotifyDisconnect(ctx context.Context, ref *corba.IOR, id string) (ReturnCode, error) {
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	var rc ReturnCode
	err := p.c.client.Object(ref).Invoke(ctx, "notify_disconnect",
		func(e *corba.Encoder) error { e.WriteString(id); return nil },
		func(d *corba.Decoder) error { rc = ReturnCode(d.ReadULong()); return d.Err() })
	return rc, err
}

// notifyDisconnect is PortService::notify_disconnect: this port ends
// its side of the connection, then the next port is notified.
func (p *Port) notifyDisconnect(ctx context.Context, id string) ReturnCode {
	cn := p.remove(id, "")
	if cn == nil {
		return BadParameter
	}
	if i := p.indexOf(cn.prof); i >= 0 && i+1 < len(cn.prof.Ports) {
		if _, err := p.remoteNotifyDisconnect(ctx, cn.prof.Ports[i+1], id); err != nil {
			p.c.log.Debug("OpenRTM peer not told of a disconnection", zap.Stringer("connection", cn), zap.Error(err))
		}
	}
	return OK
}

// Drop ends a connection on this side only, without telling its peers:
// a peer found gone. reason says why, in the log and the ConnEvent.
func (p *Port) Drop(cn *Conn, reason string) { p.remove(cn.ID(), reason) }

// remove ends a connection on this side: its servants stop, its
// goroutines end. reason is "" for a disconnection.
func (p *Port) remove(id, reason string) *Conn {
	p.mu.Lock()
	var cn *Conn
	for i, c := range p.conns {
		if c.prof.ID == id {
			cn = c
			p.conns = append(p.conns[:i:i], p.conns[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	if cn == nil {
		return nil
	}
	cn.unpublish()
	st := cn.Stats()
	p.mu.Lock()
	p.gone = p.gone.add(st)
	p.mu.Unlock()
	fields := []zap.Field{zap.Stringer("connection", cn), zap.String("interface", cn.Interface),
		zap.Uint64("sent", st.Sent), zap.Uint64("received", st.Received), zap.Uint64("dropped", st.Dropped), zap.Uint64("failed", st.Failed)}
	if reason == "" {
		p.c.log.Info("OpenRTM connection ended", fields...)
	} else {
		p.c.log.Warn("OpenRTM connection lost", append(fields, zap.String("reason", reason))...)
	}
	if p.spec.OnConnection != nil {
		p.spec.OnConnection(ConnEvent{Conn: cn, Reason: reason})
	}
	return cn
}

// portService serves a Port as RTC::PortService.
type portService Port

func (*portService) RepositoryIDs() []string { return []string{IDPortService, IDSDOService} }

func (ps *portService) Invoke(ctx context.Context, op string, args *corba.Decoder, res *corba.Encoder) error {
	p := (*Port)(ps)
	switch op {
	case "get_port_profile":
		return writePortProfile(res, p.Profile())
	case "get_connector_profiles":
		conns := p.Conns()
		res.WriteULong(uint32(len(conns)))
		for _, cn := range conns {
			if err := writeConnectorProfile(res, cn.prof); err != nil {
				return err
			}
		}
	case "get_connector_profile":
		id := args.ReadString("connector_id")
		prof := &ConnectorProfile{}
		if cn := p.find(id); cn != nil {
			prof = cn.prof
		}
		return writeConnectorProfile(res, prof)
	case "connect", "notify_connect":
		cp := readConnectorProfile(args)
		if err := args.Err(); err != nil {
			return err
		}
		var rc ReturnCode
		if op == "connect" {
			rc = p.connect(ctx, cp)
		} else {
			var err error
			if rc, err = p.notifyConnect(ctx, cp); err != nil {
				p.c.log.Warn("OpenRTM connection refused", zap.String("port", p.name), zap.String("connector", cp.Name), zap.Error(err))
			}
		}
		res.WriteULong(uint32(rc))
		return writeConnectorProfile(res, cp)
	case "disconnect", "notify_disconnect":
		id := args.ReadString("connector_id")
		if err := args.Err(); err != nil {
			return err
		}
		if op == "disconnect" {
			res.WriteULong(uint32(p.disconnect(ctx, id)))
		} else {
			res.WriteULong(uint32(p.notifyDisconnect(ctx, id)))
		}
	case "disconnect_all":
		p.DisconnectAll(ctx)
		res.WriteULong(uint32(OK))
	case "get_service_profiles", "get_owned_organizations":
		res.WriteULong(0)
	default:
		return corba.BadOperation()
	}
	return args.Err()
}

// RemovePort ends a port: its connections end (the peers are told,
// within ctx) and it is no longer served or listed.
func (c *Component) RemovePort(ctx context.Context, p *Port) {
	c.mu.Lock()
	for i, q := range c.ports {
		if q == p {
			c.ports = append(c.ports[:i:i], c.ports[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
	p.close()
	p.DisconnectAll(ctx)
	c.server.Unregister(p.key)
}

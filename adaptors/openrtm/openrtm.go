// Package openrtm connects a behavior to OpenRTM-aist components: eSEAT's
// rtcin and rtcout adaptors are the data ports of an RT-Component named
// after the behavior (package rtc), registered in a CORBA naming service,
// with data types read from OpenRTM's IDL at run time (package idl).
// See docs/openrtm.md.
package openrtm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/openrtm/corba"
	"github.com/seatml/seat/adaptors/openrtm/idl"
	"github.com/seatml/seat/adaptors/openrtm/rtc"
	"github.com/seatml/seat/schema"
)

// Types finds data types in the IDL on idl.DefaultPath.
var Types = idl.NewLoader(idl.DefaultPath())

func init() {
	for _, k := range []adaptors.Kind{
		{Name: "rtcin", New: func(cfg adaptors.Config) (adaptors.Adaptor, error) { return newPort(cfg, true) },
			Attrs: attrs, Caps: adaptors.Messages, Check: adaptors.Check{Decl: checkDecl}},
		{Name: "rtcout", New: func(cfg adaptors.Config) (adaptors.Adaptor, error) { return newPort(cfg, false) },
			Attrs: attrs, Caps: adaptors.Messages, Check: adaptors.Check{Decl: checkDecl, Message: checkMessage}},
	} {
		adaptors.RegisterKind(k)
	}
}

// attrs are the attributes of rtcin and rtcout: eSEAT's datatype, and
// seat's connect, connector properties, user IDL and the component-wide
// settings named as OpenRTM's rtc.conf names them.
var attrs = map[string]schema.AttrSpec{
	"datatype":          {},
	"connect":           {},
	"interface_type":    {},
	"dataflow_type":     {},
	"subscription_type": {},
	"push_rate":         {},
	"idl":               {},
	attrNameservers:     {},
	attrFormats:         {},
	attrEndpoint:        {},
}

// portType finds a declaration's data type (TimedString when datatype
// is absent, as eSEAT's default): one of OpenRTM's basic types (built
// in), or a type of the IDL on the search path or in the user IDL files
// the declaration names.
func portType(attrs map[string]string, dir string) (*dataType, error) {
	for _, f := range strings.Fields(attrs["idl"]) {
		if !strings.HasPrefix(f, "/") && dir != "" {
			f = dir + "/" + f
		}
		if err := Types.Load(f); err != nil {
			return nil, err
		}
	}
	name := strings.TrimSpace(attrs["datatype"])
	if name == "" {
		name = "TimedString"
	}
	tc, ok := idl.Builtin(name)
	if !ok {
		var err error
		if tc, err = Types.Lookup(name); err != nil {
			base := name[strings.LastIndexAny(name, ":.")+1:]
			if s := schema.Suggest(base, idl.BuiltinNames); s != "" && errors.Is(err, idl.ErrNotFound) {
				return nil, fmt.Errorf("unknown data type %q; did you mean %s?", name, s)
			}
			return nil, err
		}
	}
	return newDataType(name, tc)
}

// connector is what a port's connect= asks for: the peer ports and the
// connector properties.
type connector struct {
	peers []peerPort
	props rtc.NVList
}

// peerPort is "NAME:PORT": a component's name in the naming service
// ("host.host_cxt/ConsoleOut0.rtc") and the port's name in it ("in").
type peerPort struct{ name, port string }

func (pp peerPort) String() string { return pp.name + ":" + pp.port }

// attrError is a problem with one attribute.
type attrError struct{ attr, msg string }

func (e *attrError) Error() string { return e.msg }

func parseConnector(attrs map[string]string) (connector, error) {
	var c connector
	for _, f := range strings.Fields(attrs["connect"]) {
		i := strings.LastIndexByte(f, ':')
		if i <= 0 || i == len(f)-1 {
			return c, &attrError{"connect", fmt.Sprintf("connect %q: give the peer port as NAME:PORT (host.host_cxt/ConsoleOut0.rtc:in)", f)}
		}
		if _, err := corba.ParseName(f[:i]); err != nil {
			return c, &attrError{"connect", fmt.Sprintf("connect %q: %v", f, err)}
		}
		c.peers = append(c.peers, peerPort{name: f[:i], port: f[i+1:]})
	}
	for _, p := range []struct {
		attr, prop string
		allowed    []string
	}{
		{"interface_type", "dataport.interface_type", []string{rtc.CorbaCDR, rtc.DataService}},
		{"dataflow_type", "dataport.dataflow_type", []string{"push", "pull"}},
		{"subscription_type", "dataport.subscription_type", []string{"flush", "new", "periodic"}},
		{"push_rate", "dataport.push_rate", nil},
	} {
		v := strings.TrimSpace(attrs[p.attr])
		if v == "" {
			continue
		}
		if p.allowed != nil && !contains(p.allowed, v) {
			return c, &attrError{p.attr, fmt.Sprintf("%s %q: give one of %s%s", p.attr, v, strings.Join(p.allowed, ", "), schema.DidYouMean(v, p.allowed, "%q"))}
		}
		c.props.Set(p.prop, v)
	}
	return c, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkDecl is what seat check asks: the data type is found (a warning
// when this machine has no OpenRTM IDL at all), connect= and the
// settings read.
func checkDecl(d adaptors.Decl) []adaptors.Problem {
	var ps []adaptors.Problem
	if _, err := portType(d.Attrs, d.Dir); err != nil {
		attr := "datatype"
		if errors.Is(err, idl.ErrNotFound) && len(idl.DefaultPath()) == 0 && d.Attrs["idl"] == "" {
			// The file may be right: this machine has no IDL to look in.
			ps = append(ps, adaptors.Problem{Attr: attr, Warning: true, Msg: fmt.Sprintf("data type %q is not one of OpenRTM's basic types, and this machine has no OpenRTM IDL to look in; seat run needs it: install OpenRTM-aist, or set %s", d.Attrs["datatype"], idl.PathEnv)})
		} else {
			if d.Attrs["datatype"] == "" {
				attr = ""
			}
			ps = append(ps, adaptors.Problem{Attr: attr, Msg: err.Error()})
		}
	}
	if _, err := parseConnector(d.Attrs); err != nil {
		var ae *attrError
		errors.As(err, &ae)
		ps = append(ps, adaptors.Problem{Attr: ae.attr, Msg: ae.msg})
	}
	if _, err := settings(d.Attrs); err != nil {
		ps = append(ps, adaptors.Problem{Attr: attrEndpoint, Msg: err.Error()})
	}
	return ps
}

// checkMessage makes the value a <message> to an rtcout would write.
func checkMessage(d adaptors.Decl, text string) error {
	dt, err := portType(d.Attrs, d.Dir)
	if err != nil {
		return nil // reported with the declaration
	}
	_, err = dt.encode(text, time.Now())
	return err
}

// encode makes the payload of a value given as text or plain values.
// decode reads a value that arrived: a TimedString-like value as its
// text alone, any other value as plain data (rtc_in_data) with its JSON
// as the text.
func (dt *dataType) decode(payload []byte) (text string, data any, err error) {
	d := corba.NewDecoder(payload, corba.LittleEndian)
	if dt.timedString {
		// What ReadValue and text make of it, without the value between.
		d.ReadULong() // tm
		d.ReadULong()
		text = d.ReadString("data")
		return text, nil, d.Err()
	}
	v := d.ReadValue(dt.tc)
	if err := d.Err(); err != nil {
		return "", nil, err
	}
	if s, ok := dt.text(v); ok {
		return s, nil, nil
	}
	data = toPlainTC(dt.tc, v)
	return adaptors.JSON(data), data, nil
}

func (dt *dataType) encode(v any, now time.Time) ([]byte, error) {
	if s, ok := v.(string); ok && dt.timedString {
		// What fromPlain and WriteValue make of a line, without the
		// value between: tm stamped now, the line as data.
		e := corba.NewEncoder(corba.LittleEndian)
		e.WriteULong(uint32(now.Unix()))
		e.WriteULong(uint32(now.Nanosecond()))
		e.WriteString(s)
		return e.Bytes(), nil
	}
	if s, ok := v.(string); ok && dt.form == formValue {
		m, err := dt.fromText(s)
		if err != nil {
			return nil, err
		}
		v = m
	}
	cv, err := dt.fromPlain(v, now)
	if err != nil {
		return nil, err
	}
	e := corba.NewEncoder(corba.LittleEndian)
	if err := e.WriteValue(dt.tc, cv); err != nil {
		return nil, err
	}
	return e.Bytes(), nil
}

// port is an rtcin or rtcout adaptor: a data port of its behavior's
// component.
type port struct {
	cfg  adaptors.Config
	name string
	in   bool
	dt   *dataType
	set  compSettings
	conn connector
	log  *zap.Logger

	ctx    context.Context
	cancel context.CancelFunc
	sink   adaptors.Sink
	comp   *component
	p      *rtc.Port
	wg     sync.WaitGroup

	made, refused, dropped atomic.Int64
	// undecodable is set once a payload that does not decode is logged.
	undecodable atomic.Bool
	closed      atomic.Bool
}

func newPort(cfg adaptors.Config, in bool) (adaptors.Adaptor, error) {
	dt, err := portType(cfg.Attrs, cfg.Dir)
	if err != nil {
		return nil, err
	}
	set, err := settings(cfg.Attrs)
	if err != nil {
		return nil, err
	}
	conn, err := parseConnector(cfg.Attrs)
	if err != nil {
		return nil, err
	}
	log := cfg.Log
	if log == nil {
		log = zap.NewNop()
	}
	return &port{cfg: cfg, name: cfg.Name, in: in, dt: dt, set: set, conn: conn, log: log}, nil
}

func (a *port) Name() string { return a.name }

// Open adds the port to the behavior's component (made and registered
// with the first port), and starts connecting it to the peers connect=
// names.
func (a *port) Open(ctx context.Context, sink adaptors.Sink) error {
	a.ctx, a.cancel = context.WithCancel(context.WithoutCancel(ctx))
	a.sink = sink
	behavior := a.cfg.Behavior
	if behavior == "" {
		behavior = "seat"
	}
	log := a.cfg.BehaviorLog
	if log == nil {
		log = a.log
	}
	comp, err := joinComponent(behavior, a.set, log)
	if err != nil {
		return err
	}
	a.comp = comp // before the port is served: receive reads it
	spec := rtc.PortSpec{Name: a.name, DataType: a.dt.id, In: a.in, OnConnection: a.connection}
	if a.in {
		spec.Receive = a.receive
	}
	p, err := comp.c.AddPort(spec)
	if err != nil {
		comp.leave()
		return err
	}
	a.p = p
	a.log.Info("OpenRTM port", zap.String("port", p.Name()), zap.String("datatype", a.dt.name))
	for _, peer := range a.conn.peers {
		a.wg.Add(1)
		go a.keepConnected(peer)
	}
	return nil
}

func (a *port) connection(ev rtc.ConnEvent) {
	switch {
	case ev.Refused != nil: // a tool's or a peer's connection (rtc logs it)
		a.refused.Add(1)
	case ev.Up:
		a.made.Add(1)
	}
}

// receive hands a value that arrived to the behavior: a TimedString's
// text as a line, any other value as data (rtc_in_data), with its JSON
// as the text. While the component is inactive, values are dropped, as
// eSEAT drops them.
func (a *port) receive(payload []byte, cn *rtc.Conn) rtc.PortStatus {
	text, data, err := a.dt.decode(payload)
	if err != nil {
		if !a.undecodable.Swap(true) {
			a.log.Warn("OpenRTM data that is not a "+a.dt.name+" dropped (logged once per port)", zap.Stringer("connection", cn), zap.Error(err))
		}
		a.dropped.Add(1)
		return rtc.PortError
	}
	if !a.comp.isActive() {
		a.dropped.Add(1)
		return rtc.PortOK
	}
	ev := adaptors.Event{Source: a.name, Time: time.Now(), Text: text, Data: data}
	ctx := &waitBound{parent: a.ctx, d: 2 * time.Second}
	defer ctx.release()
	if err := a.sink.Deliver(ctx, ev); err != nil { // the behavior too far behind, or the port closing
		a.dropped.Add(1)
		return rtc.BufferFull
	}
	return rtc.PortOK
}

// Send writes a line: a TimedString's text, a sequence's comma-separated
// elements, a number, or any other value as JSON or YAML.
func (a *port) Send(text string) error { return a.write(text) }

// SendMessage writes a value given as plain values (seat.send and
// seat.publish with a Lua table).
func (a *port) SendMessage(v any) error { return a.write(v) }

func (a *port) write(v any) error {
	if a.in {
		return fmt.Errorf("%s is an rtcin: it does not write", a.name)
	}
	if a.closed.Load() {
		return errors.New("the port is closed")
	}
	payload, err := a.dt.encode(v, time.Now())
	if err != nil {
		return &adaptors.InvalidMessageError{Err: fmt.Errorf("%s: %w", a.dt.name, err)}
	}
	if a.p == nil {
		return adaptors.ErrNotConnected
	}
	if a.p.Write(payload) == 0 {
		a.log.Debug("no peer port connected; value dropped") // as a socket server with no client
	}
	return nil
}

// Stats counts the port's connections: Open those it has now, Accepted
// every one made, WrongType those refused (another data type, or the
// same direction), whether connect= or a tool asked for them, Dropped
// the values that did not go (a peer too slow, a component inactive).
func (a *port) Stats() adaptors.Stats {
	st := adaptors.Stats{Accepted: a.made.Load(), WrongType: a.refused.Load(), Dropped: a.dropped.Load()}
	if a.p != nil {
		st.Open = int64(len(a.p.Conns()))
		ps := a.p.Stats()
		// A write that failed (the peer did not answer in time) did not
		// go either.
		st.Dropped += int64(ps.Dropped + ps.Failed)
	}
	return st
}

// Connections lists the port's connections for seat ctl status: the
// peer ports, the interface type and data flow, and the counts.
func (a *port) Connections() []adaptors.ConnInfo {
	if a.p == nil {
		return nil
	}
	var out []adaptors.ConnInfo
	for _, cn := range a.p.Conns() {
		how := cn.Interface + " " + cn.Flow
		if cn.Flow == "push" && !a.in {
			how += " " + cn.Subscription
		}
		st := cn.Stats()
		out = append(out, adaptors.ConnInfo{Peer: cn.Peer, Detail: how, Sent: st.Sent, Received: st.Received, Dropped: st.Dropped, Failed: st.Failed})
	}
	return out
}

// Close ends the port's connections (telling the peers) and leaves the
// component, which ends with its last port.
func (a *port) Close() error {
	if a.p == nil || a.closed.Swap(true) {
		return nil
	}
	a.cancel()
	a.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	a.comp.c.RemovePort(ctx, a.p)
	cancel()
	a.comp.leave()
	return nil
}

// waitBound is the context a value is delivered with: the port's, ended
// too once Deliver has waited d for room in the behavior's queue. Its
// timer is made only when Deliver waits (it asks for Done), not for
// every value.
type waitBound struct {
	parent context.Context
	d      time.Duration
	mu     sync.Mutex
	ctx    context.Context // made by the first Done
	cancel context.CancelFunc
}

func (w *waitBound) Deadline() (time.Time, bool) { return w.parent.Deadline() }
func (w *waitBound) Value(key any) any           { return w.parent.Value(key) }

func (w *waitBound) Done() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil {
		w.ctx, w.cancel = context.WithTimeout(w.parent, w.d)
	}
	return w.ctx.Done()
}

func (w *waitBound) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil {
		return w.parent.Err()
	}
	return w.ctx.Err()
}

func (w *waitBound) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		w.cancel()
	}
}

package ros

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/apimaster"
	"github.com/bluenviron/goroslib/v2/pkg/protocommon"
	"github.com/bluenviron/goroslib/v2/pkg/prototcp"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/ros/rosmsg"
)

// ServiceKey is the key of the event a service request is: rules with
// <key>ros_service</key> answer it (eSEAT's spelling).
const ServiceKey = "ros_service"

// answerLimit bounds how long a request waits for the behavior to handle
// it; a behavior that handles it without answering fails it at once.
const answerLimit = 10 * time.Second

// serviceType is the service type of a ros_server or ros_client
// declaration: service_type, as pkg/Type or eSEAT's pkg.Type.
func serviceType(attrs map[string]string) (*rosmsg.Service, error) {
	st := attrs["service_type"]
	if st == "" {
		return nil, errors.New("a service adaptor needs service_type, for example service_type=\"std_srvs/SetBool\"")
	}
	return Types.Service(st)
}

func checkService(attrs map[string]string) []adaptors.Problem {
	if _, err := serviceType(attrs); err != nil {
		return []adaptors.Problem{typeProblem("service_type", err)}
	}
	return nil
}

// service is what a ros_server and a ros_client share: the service's
// endpoint and type.
type service struct {
	endpoint
	typ *rosmsg.Service
}

func newService(cfg adaptors.Config) (service, error) {
	e, err := newEndpoint(cfg, "service")
	if err != nil {
		return service{}, err
	}
	typ, err := serviceType(cfg.Attrs)
	if err != nil {
		return service{}, err
	}
	return service{endpoint: e, typ: typ}, nil
}

// server is a ros_server adaptor: it provides a service, and each request
// is an event with key ros_service and the request as its data; the rule
// that handles it answers with its script's result or seat.reply.
//
// It serves the service over TCPROS itself, with goroslib's wire
// encoding: goroslib's own provider answers a failure with its status
// byte alone, where rospy and roscpp clients read an error text after it
// (and wait for it for ever), and it runs one request at a time for all
// its clients.
type server struct {
	service
	ctx    context.Context
	cancel context.CancelFunc
	sink   adaptors.Sink

	mu  sync.Mutex
	reg *registration // nil while not registered
}

// registration is a server's service registered with a master, and its
// listener.
type registration struct {
	master   *apimaster.Client
	uri      string // rosrpc://127.0.0.1:PORT
	l        net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]bool
	closing  bool
	callerID string
}

// NewServer builds a ros_server adaptor.
func NewServer(cfg adaptors.Config) (adaptors.Adaptor, error) {
	s, err := newService(cfg)
	if err != nil {
		return nil, err
	}
	return &server{service: s}, nil
}

func (a *server) Open(ctx context.Context, sink adaptors.Sink) error {
	// Until Close, not ctx: a reload hands the open adaptor to the next
	// version, and the context it was opened with ends with the old one.
	a.ctx, a.cancel = context.WithCancel(context.WithoutCancel(ctx))
	a.sink = sink
	a.node = join(a.nodeName, a.master, a.nodeLog, a)
	return nil
}

// absolute is a graph name in the root namespace, where seat's nodes are.
func absolute(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return "/" + name
}

// attach listens on loopback and registers the service with the master,
// under the node (which the master knows by now: goroslib registers its
// /rosout publisher when it makes the node).
func (a *server) attach(n *goroslib.Node) error {
	callerID := "/" + a.nodeName
	master := apimaster.NewClient(a.master, callerID, &http.Client{Timeout: 5 * time.Second})
	callerURL, err := master.LookupNode(callerID)
	if err != nil {
		return fmt.Errorf("looking the node up: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	r := &registration{master: master, uri: "rosrpc://" + l.Addr().String(), l: l, conns: map[net.Conn]bool{}, callerID: callerID}
	if err := master.RegisterService(absolute(a.remote), r.uri, callerURL); err != nil {
		l.Close()
		return fmt.Errorf("registering service %s: %w", a.remote, err)
	}
	r.wg.Add(1)
	go a.accept(r)
	a.mu.Lock()
	a.reg = r
	a.mu.Unlock()
	a.registered("service server", "service", a.typ.Name)
	return nil
}

// detach unregisters the service and closes its connections; a request
// being handled is failed.
func (a *server) detach() {
	a.mu.Lock()
	r := a.reg
	a.reg = nil
	a.mu.Unlock()
	if r == nil {
		return
	}
	_ = r.master.UnregisterService(absolute(a.remote), r.uri)
	r.mu.Lock()
	r.closing = true
	r.l.Close()
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

func (a *server) accept(r *registration) {
	defer r.wg.Done()
	for {
		c, err := r.l.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		if r.closing {
			r.mu.Unlock()
			c.Close()
			return
		}
		r.conns[c] = true
		r.wg.Add(1)
		r.mu.Unlock()
		go func() {
			defer r.wg.Done()
			a.serve(r, c)
			r.mu.Lock()
			delete(r.conns, c)
			r.mu.Unlock()
			c.Close()
		}()
	}
}

// serve answers one client connection: the TCPROS handshake, then its
// requests, one after another, until it closes.
func (a *server) serve(r *registration, c net.Conn) {
	t := prototcp.NewConn(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	raw, err := t.ReadHeaderRaw()
	if err != nil {
		return
	}
	var h prototcp.HeaderServiceClient
	if err := protocommon.HeaderDecode(raw, &h); err != nil {
		return
	}
	if h.Md5sum != "*" && h.Md5sum != a.typ.MD5 {
		a.stats.WrongType.Add(1)
		a.log.Warn("service client refused: it has another definition of the service (MD5)", zap.String("service", a.remote),
			zap.String("client", h.Callerid), zap.String("type", a.typ.Name), zap.String("want", a.typ.MD5), zap.String("got", h.Md5sum))
		_ = t.WriteHeader(&prototcp.HeaderError{Error: fmt.Sprintf("request from [%s]: md5sums do not match: [%s] vs. [%s]", h.Callerid, h.Md5sum, a.typ.MD5)})
		return
	}
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if err := t.WriteHeader(&prototcp.HeaderServiceProvider{Callerid: r.callerID, Md5sum: a.typ.MD5,
		RequestType: a.typ.Name + "Request", ResponseType: a.typ.Name + "Response", Type: a.typ.Name}); err != nil {
		return
	}
	if raw["probe"] == "1" { // rosservice asks for the type, then closes
		return
	}
	for {
		c.SetReadDeadline(time.Time{})
		req := reflect.New(a.typ.Request.Go)
		if err := t.ReadMessage(req.Interface()); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				a.log.Warn("service request unreadable; connection closed", zap.String("service", a.remote), zap.String("client", h.Callerid), zap.Error(err))
			}
			return
		}
		res, ok := a.handle(req)
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if ok {
			err = t.WriteServiceResponse(true, res)
		} else {
			err = writeFailure(c, "the behavior did not answer the request")
		}
		if err != nil {
			return
		}
	}
}

// writeFailure writes a failed service response as ROS clients read it:
// a status byte of 0, then the error as a string.
func writeFailure(c net.Conn, msg string) error {
	b := make([]byte, 5, 5+len(msg))
	binary.LittleEndian.PutUint32(b[1:], uint32(len(msg)))
	_, err := c.Write(append(b, msg...))
	return err
}

// handle delivers a request to the behavior and waits for its answer. A
// request not answered (no rule answered it, the behavior stopped, or it
// did not handle it within answerLimit) fails: the caller gets an error.
func (a *server) handle(req reflect.Value) (any, bool) {
	r := &request{a: a, answer: make(chan any, 1)}
	handled := make(chan bool, 1)
	data := rosmsg.Value(req.Interface())
	ev := adaptors.Event{Source: a.name, Key: ServiceKey, Data: data, Text: adaptors.JSON(data), From: r, Time: time.Now(),
		Done: func(ok bool) { handled <- ok }}
	fail := reflect.New(a.typ.Response.Go).Interface()
	if err := a.sink.Deliver(a.ctx, ev); err != nil {
		return fail, false
	}
	timer := time.NewTimer(answerLimit)
	defer timer.Stop()
	select {
	case res := <-r.answer:
		return res, true
	case ok := <-handled:
		select {
		case res := <-r.answer:
			return res, true
		default:
		}
		if ok {
			a.log.Warn("service request not answered: no rule answered it (a script's result or seat.reply)", zap.String("service", a.remote), zap.String("request", ev.Text))
		} else {
			a.log.Warn("service request not answered: the behavior is not running", zap.String("service", a.remote))
		}
	case <-timer.C:
		a.log.Warn("service request not answered in time", zap.String("service", a.remote), zap.Duration("limit", answerLimit))
	case <-a.ctx.Done():
	}
	r.close()
	return fail, false
}

// Send is an error: a ros_server answers requests (seat.reply), it sends
// nothing of its own.
func (a *server) Send(string) error {
	return fmt.Errorf("%s is a ros_server: it answers requests (a rule's result or seat.reply), it sends nothing else", a.name)
}

func (a *server) Close() error {
	if a.node == nil {
		return nil
	}
	a.cancel()
	a.node.leave(a)
	a.node = nil
	return nil
}

// request is one service request waiting for its answer: the connection
// of its event, which seat.reply and a script's result answer once.
type request struct {
	a      *server
	mu     sync.Mutex
	done   bool
	answer chan any // the filled response
}

func (r *request) String() string { return r.a.name + " request" }
func (r *request) Peer() string   { return "" }

// Answered reports whether the request has its answer, or is over.
func (r *request) Answered() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

func (r *request) close() {
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
}

// Send answers with a response written as rostopic pub takes it (YAML or
// JSON), or with a single field's value.
func (r *request) Send(text string) error {
	data, err := adaptors.ParseText(text)
	if err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	return r.SendMessage(data)
}

// SendMessage answers with a response given as plain values: a mapping
// by name, a list in field order, or, for a response of one field, its
// value alone (as rospy takes a handler's result).
func (r *request) SendMessage(v any) error {
	res := reflect.New(r.a.typ.Response.Go).Interface()
	if fields := r.a.typ.Response.Spec.Fields; len(fields) == 1 {
		switch v.(type) {
		case map[string]any:
		case []any:
			if !fields[0].Array {
				break
			}
			v = []any{v}
		default:
			v = []any{v}
		}
	}
	if err := rosmsg.Fill(res, v); err != nil {
		return &adaptors.InvalidMessageError{Err: err}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return fmt.Errorf("%s: the request is answered already, or its caller stopped waiting", r.a.name)
	}
	r.done = true
	r.answer <- res
	return nil
}

// client is a ros_client adaptor: seat.call calls its service.
type client struct {
	service
	mu     sync.Mutex
	caller *goroslib.ServiceClient
	// turn is held by the call under way: goroslib's client takes one
	// at a time. A channel, so that waiting for it ends with the caller's
	// time limit.
	turn chan struct{}
	// sending is set while a <message>'s call is under way; another one
	// meanwhile is refused, not queued behind it.
	sending atomic.Bool
}

// NewClient builds a ros_client adaptor.
func NewClient(cfg adaptors.Config) (adaptors.Adaptor, error) {
	s, err := newService(cfg)
	if err != nil {
		return nil, err
	}
	return &client{service: s, turn: make(chan struct{}, 1)}, nil
}

func (a *client) Open(ctx context.Context, sink adaptors.Sink) error {
	a.node = join(a.nodeName, a.master, a.nodeLog, a)
	return nil
}

func (a *client) attach(n *goroslib.Node) error {
	c, err := goroslib.NewServiceClient(goroslib.ServiceClientConf{Node: n, Name: a.remote, Srv: reflect.New(a.typ.Go).Interface()})
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.caller = c
	a.mu.Unlock()
	a.registered("service client", "service", a.typ.Name)
	return nil
}

func (a *client) detach() {
	a.mu.Lock()
	c := a.caller
	a.caller = nil
	a.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// Call calls the service with a request given as plain values and
// returns the response as plain values. It returns when ctx ends.
func (a *client) Call(ctx context.Context, v any) (any, error) {
	req := reflect.New(a.typ.Request.Go).Interface()
	if err := rosmsg.Fill(req, v); err != nil {
		return nil, &adaptors.InvalidMessageError{Err: err}
	}
	a.mu.Lock()
	c := a.caller
	a.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("not connected to the ROS master at %s yet", a.master)
	}
	select {
	case a.turn <- struct{}{}:
		defer func() { <-a.turn }()
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer from %s: another call still waits for its own: %w", a.remote, ctx.Err())
	}
	res := reflect.New(a.typ.Response.Go).Interface()
	if err := c.CallContext(ctx, req, res); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no answer from %s: %w", a.remote, ctx.Err())
		}
		return nil, err
	}
	return rosmsg.Value(res), nil
}

// Send calls the service with a request written as rostopic pub takes
// it, without waiting: the response is dropped (seat.call returns it),
// and a failed call is logged. A text that does not fit is an error at
// once.
func (a *client) Send(text string) error {
	data, err := adaptors.ParseText(text)
	if err != nil {
		return err
	}
	if err := rosmsg.Fill(reflect.New(a.typ.Request.Go).Interface(), data); err != nil {
		return err
	}
	if !a.sending.CompareAndSwap(false, true) {
		return fmt.Errorf("%s: the call of an earlier message is still under way; not sent", a.name)
	}
	go func() {
		defer a.sending.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), answerLimit)
		defer cancel()
		if _, err := a.Call(ctx, data); err != nil {
			a.log.Warn("service call failed", zap.String("service", a.remote), zap.Error(err))
		}
	}()
	return nil
}

func (a *client) Close() error {
	if a.node == nil {
		return nil
	}
	a.node.leave(a)
	a.node = nil
	return nil
}

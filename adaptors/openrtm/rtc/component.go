package rtc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// Options describe a component.
type Options struct {
	// InstanceName is the component's name (the behavior's): ports are
	// named INSTANCE.PORT, the naming service's entry after it.
	InstanceName string
	// TypeName, Description, Version, Vendor and Category are its
	// profile's (type name "seat" when empty).
	TypeName, Description, Version, Vendor, Category string
	// Addr is where its ORB listens (127.0.0.1:0 when empty); Host the
	// host its references publish (the address's when empty).
	Addr, Host string
	// Rate is its execution context's rate in Hz (1000 when 0, as
	// OpenRTM's default).
	Rate float64
	// CallTimeout bounds each call the component makes to a peer (5 s
	// when 0).
	CallTimeout time.Duration
	Logger      *zap.Logger
	// OnState is told of each change of the component's state, and OnExit
	// when a tool asked it to exit, before the component finalizes itself
	// (its client still works: it may unbind the component's names).
	// Neither may call the component back.
	OnState func(LifeCycleState)
	OnExit  func()
}

// Component is an RT-Component: an RTObject (with the SDO operations
// OpenRTM's tools use), its execution context, its configuration and
// its data ports, served over IIOP by its own corba.Server.
type Component struct {
	opts   Options
	log    *zap.Logger
	server *corba.Server
	client *corba.Client
	ref    *corba.IOR // the RTObject's
	ecRef  *corba.IOR
	cfgRef *corba.IOR

	mu      sync.Mutex
	state   LifeCycleState
	running bool // the execution context's is_running
	rate    float64
	ports   []*Port
	closed  bool
	exited  bool
}

// Object keys of a component's objects on its server.
var (
	keyRTObject = []byte("rtobject")
	keyEC       = []byte("ec0")
	keyConfig   = []byte("configuration")
)

// New starts a component's ORB and serves its RTObject, execution
// context and configuration. The component is INACTIVE; Activate makes
// it ACTIVE.
func New(opts Options) (*Component, error) {
	if opts.InstanceName == "" {
		return nil, errors.New("rtc: a component needs an instance name")
	}
	if opts.TypeName == "" {
		opts.TypeName = "seat"
	}
	if opts.Rate <= 0 {
		opts.Rate = 1000
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 5 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	srv, err := corba.Listen(corba.ServerOptions{Addr: opts.Addr, Host: opts.Host, Logger: log})
	if err != nil {
		return nil, err
	}
	c := &Component{opts: opts, log: log, server: srv, client: corba.NewClient(corba.ClientOptions{}), state: Inactive, running: true, rate: opts.Rate}
	if c.ref, err = srv.Register(keyRTObject, (*rtObject)(c)); err == nil {
		if c.ecRef, err = srv.Register(keyEC, (*executionContext)(c)); err == nil {
			c.cfgRef, err = srv.Register(keyConfig, configuration{})
		}
	}
	if err != nil {
		_ = srv.Close(context.Background())
		return nil, err
	}
	return c, nil
}

// Name is the component's instance name.
func (c *Component) Name() string { return c.opts.InstanceName }

// Ref is the component's RTObject reference, what the naming service
// holds.
func (c *Component) Ref() *corba.IOR { return c.ref }

// Addr is where the component's ORB listens.
func (c *Component) Addr() string { return c.server.Addr().String() }

// Client is the ORB client the component calls peers with.
func (c *Component) Client() *corba.Client { return c.client }

// State is the component's state in its execution context.
func (c *Component) State() LifeCycleState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Activate makes an INACTIVE component ACTIVE, as an execution context's
// activate_component does.
func (c *Component) Activate() ReturnCode { return c.transition(Inactive, Active) }

// Deactivate makes an ACTIVE component INACTIVE.
func (c *Component) Deactivate() ReturnCode { return c.transition(Active, Inactive) }

func (c *Component) transition(from, to LifeCycleState) ReturnCode {
	c.mu.Lock()
	if c.state != from || c.closed {
		c.mu.Unlock()
		return PreconditionNotMet
	}
	c.state = to
	c.mu.Unlock()
	c.log.Info("RT-Component state", zap.String("component", c.opts.InstanceName), zap.Stringer("state", to))
	if c.opts.OnState != nil {
		c.opts.OnState(to)
	}
	return OK
}

// Close finalizes the component: it is deactivated, its ports tell
// their peers they are disconnected (within ctx), and its ORB stops.
func (c *Component) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	ports := append([]*Port(nil), c.ports...)
	c.state = Created
	c.mu.Unlock()
	for _, p := range ports {
		p.close()
		p.DisconnectAll(ctx)
	}
	err := c.server.Close(ctx)
	_ = c.client.Close()
	return err
}

// ownRef reports whether ior names this component's RTObject.
func (c *Component) ownRef(ior *corba.IOR) bool { return ior != nil && sameObject(ior, c.ref) }

func (c *Component) profile() (*componentProfile, error) {
	c.mu.Lock()
	ports := append([]*Port(nil), c.ports...)
	c.mu.Unlock()
	cp := &componentProfile{opts: c.opts}
	for _, p := range ports {
		cp.ports = append(cp.ports, p.Profile())
	}
	cp.props.Set("instance_name", c.opts.InstanceName)
	cp.props.Set("type_name", c.opts.TypeName)
	cp.props.Set("category", c.opts.Category)
	cp.props.Set("vendor", c.opts.Vendor)
	cp.props.Set("version", c.opts.Version)
	cp.props.Set("language", "Go")
	cp.props.Set("lang_type", "compile")
	cp.props.Set("activity_type", "DataFlowComponent")
	cp.props.Set("implementation_id", c.opts.TypeName)
	cp.props.Set("process_id", fmt.Sprint(os.Getpid()))
	return cp, nil
}

type componentProfile struct {
	opts  Options
	ports []*PortProfile
	props NVList
}

func (cp *componentProfile) write(e *corba.Encoder) error {
	e.WriteString(cp.opts.InstanceName)
	e.WriteString(cp.opts.TypeName)
	e.WriteString(cp.opts.Description)
	e.WriteString(cp.opts.Version)
	e.WriteString(cp.opts.Vendor)
	e.WriteString(cp.opts.Category)
	e.WriteULong(uint32(len(cp.ports)))
	for _, p := range cp.ports {
		if err := writePortProfile(e, p); err != nil {
			return err
		}
	}
	e.WriteIOR(nil) // parent
	return writeNVList(e, cp.props)
}

// exit is LightweightRTObject::exit: the component finalizes itself.
func (c *Component) exit() ReturnCode {
	c.mu.Lock()
	if c.exited {
		c.mu.Unlock()
		return PreconditionNotMet
	}
	c.exited = true
	c.mu.Unlock()
	go func() {
		// After the reply has gone: Close waits for the requests in
		// progress, this one among them.
		if c.opts.OnExit != nil {
			c.opts.OnExit()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*c.opts.CallTimeout)
		defer cancel()
		_ = c.Close(ctx)
	}()
	return OK
}
